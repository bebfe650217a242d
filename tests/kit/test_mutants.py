"""The mutant suite behind the published mutation score (tests/kit/mutants, scripts/mutation_score.py).

The fast tests keep the suite well formed: every mutant still applies to the plugin's current
source (a plugin change that moves a mutant's text fails here, naming the mutant to update), names
are unique, rules are real checks, the second to twelfth held-out rounds stay apart from the first
and from each other. The slow test runs the first round's suite and holds the score to the
criterion fixed before its held-out mutants were run (the later rounds are run by
``scripts/mutation_score.py --set held-out-2``, ``--set held-out-3``, ``--set held-out-4``,
``--set held-out-5``, ``--set held-out-6``, ``--set held-out-7``, ``--set held-out-8``, ``--set held-out-9``,
``--set held-out-10``, ``--set held-out-11`` and ``--set held-out-12``).
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


@pytest.mark.parametrize(
    ("round_", "at_least"),
    [(3, 22), (4, 22), (5, 23), (6, 28), (7, 28), (8, 28), (9, 28), (10, 28), (11, 28), (12, 28)],
)
def test_a_later_held_out_round_is_well_formed_and_apart_from_the_others(round_, at_least):
    """Rounds 3 to 12 (``--set held-out-N``): at least 22 (round 5: 23, rounds 6 to 12: 28) rule-breaking mutants over both
    targets, 14 of them on rare inputs, 4 controls or more, each breaking a real check; none sharing a
    name with an earlier round's mutant of its target and, from round 4, none with another mutant's
    edits; no other set runs the round, and ``held-out-N`` runs nothing else. Its criterion is the
    previous round's in substance (the same bar)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import mutation_score

    _selected = mutation_score._selected
    criterion = getattr(mutation_score, f"CRITERION_{round_}")
    previous = getattr(mutation_score, f"CRITERION_{round_ - 1}")
    mine = [m for _, _, m in ALL if m.round == round_]
    breaking = [m for m in mine if not m.control]
    assert len(breaking) >= at_least and sum(m.rare for m in breaking) >= 14
    assert sum(m.control for m in mine) >= 4
    assert all(m.held_out and not m.post_hoc and not m.equivalent for m in mine)
    assert {n for n, _, m in ALL if m.round == round_} == set(SUITES)
    assert {m.rule for m in breaking} <= set(list_checks(level="error"))
    others = ["all", "dev", "held-out", *(f"held-out-{r}" for r in range(2, 13) if r != round_)]
    for name, _, m in ALL:
        if m.round == round_:
            earlier = [o for n, _, o in ALL if n == name and o.round != round_]
            assert all(o.name != m.name for o in earlier)
            if round_ >= 4:
                assert all(o.edits != m.edits for o in earlier)
        assert _selected(m, f"held-out-{round_}", False) == (m.round == round_)
        for chosen in others:
            assert not (_selected(m, chosen, False) and m.round == round_)
    if round_ >= 4:
        keys = ("round", "kill_rate_of", "controls", "equivalent", "kit_and_plugins")
        assert {k: v for k, v in criterion.items() if k not in keys} == {
            k: v for k, v in previous.items() if k not in keys
        }
    assert criterion["kill_rate_min"] == 0.97 and criterion["controls_killed_max"] == 0
    assert criterion["seconds_per_configuration_max"] == 60.0 and criterion["round"] == round_


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
