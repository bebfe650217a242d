"""scripts/measure_storage.py: the description of the answers a stored-differently copy changed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "measure_storage.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("measure_storage", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_changes_are_split_by_what_the_original_answer_was(script):
    # five inputs: kept right, kept wrong, right -> wrong (confident), wrong -> right, wrong -> wrong
    d = {
        "agree": [True, True, False, False, False],
        "correct": [True, False, False, True, False],
        "ref_correct": [True, False, True, False, False],
        "ref_conf": [0.99, 0.40, 0.95, 0.30, 0.60],
    }
    c = script.describe_changes(d)
    assert c["changed"] == 3
    assert c["changed_from_wrong"] == 2
    assert c["changed_to_right"] == 1
    assert c["changed_confident"] == 1  # only the right -> wrong one was at >= 0.9
    assert c["changed_original_confidence_median"] == pytest.approx(0.60)
    # of the two originals answered right, one kept its answer
    assert c["agreement_original_right"] == pytest.approx(0.5)
    lo, hi = c["agreement_original_right_ci95"]
    assert lo < 0.5 < hi
    assert script.change_cell(c) == "3: 2 / 1 / 1"


def test_a_variant_that_changed_nothing_reads_zero_and_full_agreement(script):
    d = {
        "agree": [True] * 4,
        "correct": [True, True, False, True],
        "ref_correct": [True, True, False, True],
        "ref_conf": [0.9] * 4,
    }
    c = script.describe_changes(d)
    assert c["changed"] == 0 and c["changed_original_confidence_median"] is None
    assert c["agreement_original_right"] == 1.0
    assert script.change_cell(c) == "0"


def test_the_slots_that_move_most_are_named_largest_first_and_still_ones_left_out(script):
    from v22sdk_audio.slots import SCHEMA

    delta = np.zeros(384)
    cols = np.asarray(SCHEMA.indices)
    delta[cols[5]], delta[cols[2]] = 0.3, 0.7
    delta[0] = 9.0  # outside the modality's block: not one of its slots
    assert script.slots_moved_most(delta, SCHEMA) == [(SCHEMA.names[2], 0.7), (SCHEMA.names[5], 0.3)]
