"""The mutant suite behind the published mutation score (tests/kit/mutants, scripts/mutation_score.py).

The fast tests keep the suite well formed: every mutant still applies to the plugin's current
source (a plugin change that moves a mutant's text fails here, naming the mutant to update), names
are unique, rules are real checks, the second to fifth held-out rounds stay apart from the first
and from each other. The slow test runs the first round's suite and holds the score to the
criterion fixed before its held-out mutants were run (the later rounds are run by
``scripts/mutation_score.py --set held-out-2``, ``--set held-out-3``, ``--set held-out-4`` and
``--set held-out-5``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from v22sdk.testing import list_checks

from .mutants import ROOT, mutated_source, targets

SUITES = targets()
ALL = [(name, target, m) for name, (target, mutants) in SUITES.items() for m in mutants]


@pytest.mark.parametrize(("name", "target", "mutant"), ALL, ids=[f"{n}-{m.name}" for n, _, m in ALL])
def test_every_mutant_applies_to_the_current_source(name, target, mutant):
    changed = mutated_source(target, mutant)
    assert changed and all(changed[f] != (target.folder / f).read_text(encoding="utf-8") for f in changed)
    for file, text in changed.items():
        compile(text, str(target.folder / file), "exec")  # a mutant is still Python


def test_the_suite_is_large_enough_and_well_formed():
    names = [(n, m.name) for n, _, m in ALL]
    assert len(set(names)) == len(names)
    breaking = [m for _, _, m in ALL if not m.control]
    controls = [m for _, _, m in ALL if m.control]
    assert len(breaking) >= 40 and len(controls) >= 5
    assert sum(m.rare for m in breaking) >= len(breaking) // 3  # many break only on rare inputs
    assert {m.rule for m in breaking} <= set(list_checks(level="error"))
    for target, _ in SUITES.values():
        assert target.folder.is_dir() and target.configs


def test_the_second_held_out_round_is_well_formed_and_apart_from_the_first():
    """Round 2 (``--set held-out-2``): at least 12 rule-breaking mutants over both targets, half of them
    on rare inputs, 3 controls or more; the first round's sets (the slow test's ``all``) do not see it."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from mutation_score import _selected

    second = [m for _, _, m in ALL if m.round == 2]
    breaking = [m for m in second if not m.control]
    assert len(breaking) >= 12 and sum(m.rare for m in breaking) * 2 >= len(breaking)
    assert sum(m.control for m in second) >= 3
    assert all(m.held_out and not m.post_hoc and not m.equivalent for m in second)
    assert {n for n, _, m in ALL if m.round == 2} == set(SUITES)
    for _, _, m in ALL:
        assert _selected(m, "held-out-2", False) == (m.round == 2)
        for chosen in ("all", "dev", "held-out"):
            assert not (_selected(m, chosen, False) and m.round == 2)
    assert sum(_selected(m, "all", False) for _, _, m in ALL) == 66  # the first round's 55 + 11 controls


def test_the_third_held_out_round_is_well_formed_and_apart_from_the_others():
    """Round 3 (``--set held-out-3``): at least 22 rule-breaking mutants over both targets, 14 of them on
    rare inputs, 4 controls or more, none sharing a name with an earlier round's mutant of its target;
    no other set runs it, and ``held-out-3`` runs nothing else."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from mutation_score import CRITERION_3, _selected

    third = [m for _, _, m in ALL if m.round == 3]
    breaking = [m for m in third if not m.control]
    assert len(breaking) >= 22 and sum(m.rare for m in breaking) >= 14
    assert sum(m.control for m in third) >= 4
    assert all(m.held_out and not m.post_hoc and not m.equivalent for m in third)
    assert {n for n, _, m in ALL if m.round == 3} == set(SUITES)
    for name, _, m in ALL:
        if m.round == 3:
            assert all(o.name != m.name for n, _, o in ALL if n == name and o.round != 3)
        assert _selected(m, "held-out-3", False) == (m.round == 3)
        for chosen in ("all", "dev", "held-out", "held-out-2"):
            assert not (_selected(m, chosen, False) and m.round == 3)
    assert CRITERION_3["kill_rate_min"] == 0.97 and CRITERION_3["controls_killed_max"] == 0
    assert CRITERION_3["seconds_per_configuration_max"] == 60.0 and CRITERION_3["round"] == 3


def test_the_fourth_held_out_round_is_well_formed_and_apart_from_the_others():
    """Round 4 (``--set held-out-4``): at least 22 rule-breaking mutants over both targets, 14 of them on
    rare inputs, 4 controls or more, none sharing a name with an earlier round's mutant of its target,
    every rule-breaking mutant's edits differing from every earlier mutant's; no other set runs it, and
    ``held-out-4`` runs nothing else."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from mutation_score import CRITERION_3, CRITERION_4, _selected

    fourth = [m for _, _, m in ALL if m.round == 4]
    breaking = [m for m in fourth if not m.control]
    assert len(breaking) >= 22 and sum(m.rare for m in breaking) >= 14
    assert sum(m.control for m in fourth) >= 4
    assert all(m.held_out and not m.post_hoc and not m.equivalent for m in fourth)
    assert {n for n, _, m in ALL if m.round == 4} == set(SUITES)
    for name, _, m in ALL:
        if m.round == 4:
            earlier = [o for n, _, o in ALL if n == name and o.round != 4]
            assert all(o.name != m.name and o.edits != m.edits for o in earlier)
        assert _selected(m, "held-out-4", False) == (m.round == 4)
        for chosen in ("all", "dev", "held-out", "held-out-2", "held-out-3"):
            assert not (_selected(m, chosen, False) and m.round == 4)
    assert {
        k: v
        for k, v in CRITERION_4.items()
        if k not in ("round", "kill_rate_of", "controls", "equivalent", "kit_and_plugins")
    } == {
        k: v
        for k, v in CRITERION_3.items()
        if k not in ("round", "kill_rate_of", "controls", "equivalent", "kit_and_plugins")
    }
    assert CRITERION_4["kill_rate_min"] == 0.97 and CRITERION_4["controls_killed_max"] == 0
    assert CRITERION_4["seconds_per_configuration_max"] == 60.0 and CRITERION_4["round"] == 4


def test_the_fifth_held_out_round_is_well_formed_and_apart_from_the_others():
    """Round 5 (``--set held-out-5``): at least 23 rule-breaking mutants over both targets, 14 of them on
    rare inputs, 4 controls or more, none sharing a name with an earlier round's mutant of its target,
    every mutant's edits differing from every earlier mutant's; no other set runs it, and
    ``held-out-5`` runs nothing else."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from mutation_score import CRITERION_4, CRITERION_5, _selected

    fifth = [m for _, _, m in ALL if m.round == 5]
    breaking = [m for m in fifth if not m.control]
    assert len(breaking) >= 23 and sum(m.rare for m in breaking) >= 14
    assert sum(m.control for m in fifth) >= 4
    assert all(m.held_out and not m.post_hoc and not m.equivalent for m in fifth)
    assert {n for n, _, m in ALL if m.round == 5} == set(SUITES)
    assert {m.rule for m in breaking} <= set(list_checks(level="error"))
    for name, _, m in ALL:
        if m.round == 5:
            earlier = [o for n, _, o in ALL if n == name and o.round != 5]
            assert all(o.name != m.name and o.edits != m.edits for o in earlier)
        assert _selected(m, "held-out-5", False) == (m.round == 5)
        for chosen in ("all", "dev", "held-out", "held-out-2", "held-out-3", "held-out-4"):
            assert not (_selected(m, chosen, False) and m.round == 5)
    keys = ("round", "kill_rate_of", "controls", "equivalent", "kit_and_plugins")
    assert {k: v for k, v in CRITERION_5.items() if k not in keys} == {
        k: v for k, v in CRITERION_4.items() if k not in keys
    }
    assert CRITERION_5["kill_rate_min"] == 0.97 and CRITERION_5["controls_killed_max"] == 0
    assert CRITERION_5["seconds_per_configuration_max"] == 60.0 and CRITERION_5["round"] == 5


@pytest.mark.slow
def test_the_mutation_score_meets_its_criterion(tmp_path):
    """About 20-40 minutes on 2 cores: every mutant, every configuration, a fresh process each."""
    out = tmp_path / "score.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "mutation_score.py"), "--write", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    totals = json.loads(Path(out).read_text())["data"]["totals"]
    assert totals["errors"] == 0, proc.stdout
    assert totals["controls_killed"] == 0, proc.stdout
    assert totals["kill_rate"] >= 0.97, proc.stdout
