"""The project's mutant suite: copies of two real plugins, each changed to break one contract rule.

A :class:`Mutant` is a few exact text edits to the source of a plugin package (each ``old`` text
must occur exactly once, so a mutant cannot silently stop applying when the plugin changes:
``tests/kit/test_mutants.py`` fails and names it). ``rule`` is the check that owns the rule the
edit breaks; a *control* (``rule=None``) changes the code without breaking any rule and must
survive. ``where`` says which inputs show the bug and ``rare`` marks those the plugin's own
``sample_inputs()`` never or almost never reach. ``held_out`` mutants were written and committed
before any run of the kit against them (see docs/contract-kit.md, "The mutation score");
``post_hoc`` ones were added after the pre-registered run, and ``equivalent`` says why a mutant is
shown (by a stated input) to break no rule on the current source: it is reported, not counted.
``round=2`` marks the second pre-registered held-out round (``HELD_OUT_2`` in each target's module,
``scripts/mutation_score.py --set held-out-2``): written after the first round's post-hoc fixes,
committed with their criterion before any run of the kit against them. They are ``held_out`` too,
but kept out of the first round's sets (``all``, ``dev``, ``held-out``), whose counts stay as they were.
``round=3`` marks the third (``HELD_OUT_3``, ``--set held-out-3``, ``CRITERION_3``): written while the
kit was being changed to close round 2's gaps, without reading that change, and committed with their
criterion before any run of any kit against them; likewise kept out of the first round's sets.
``round=4`` marks the fourth (``HELD_OUT_4``, ``--set held-out-4``, ``CRITERION_4``), written the same
way while the kit was being changed to close round 3's gaps; ``round=5`` the fifth (``HELD_OUT_5``,
``--set held-out-5``, ``CRITERION_5``), written the same way while it was being changed to close round 4's;
``round=6`` the sixth (``HELD_OUT_6``, ``--set held-out-6``, ``CRITERION_6``), while it was being changed to
close round 5's; ``round=7`` the seventh (``HELD_OUT_7``, ``--set held-out-7``, ``CRITERION_7``), while it was being
changed to close round 6's, by an author who read neither the kit nor that change; ``round=8`` the eighth
(``HELD_OUT_8``, ``--set held-out-8``, ``CRITERION_8``), while it was being changed to close round 7's, written the
same way; ``round=9`` the ninth (``HELD_OUT_9``, ``--set held-out-9``, ``CRITERION_9``), while it was being changed
to close round 8's, likewise by an author who read neither the kit nor that change; ``round=10`` the tenth
(``HELD_OUT_10``, ``--set held-out-10``, ``CRITERION_10``), while it was being changed to close round 9's, written
the same way; ``round=11`` the eleventh (``HELD_OUT_11``, ``--set held-out-11``, ``CRITERION_11``), while it was being
changed after round 10, by an author who read neither the kit nor that change; ``round=12`` the twelfth (``HELD_OUT_12``,
``--set held-out-12``, ``CRITERION_12``), written after round 11's run, by an author who read neither the kit nor the
changes made to it.

``scripts/mutation_score.py`` copies the package into a temporary folder, applies the edits, and
runs the kit on every configuration of the :class:`Target` in a new process.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[3]


@attrs.frozen
class Edit:
    file: str
    old: str
    new: str


@attrs.frozen
class Mutant:
    name: str
    rule: str | None
    edits: tuple[Edit, ...]
    where: str
    rare: bool = False
    held_out: bool = False
    post_hoc: bool = False
    equivalent: str = ""
    round: int = 1

    @property
    def control(self) -> bool:
        return self.rule is None


@attrs.frozen
class Target:
    """A plugin under mutation: its package folder, its class and the configurations to check."""

    name: str
    package: str
    folder: Path
    cls: str
    configs: tuple[dict, ...]


class MutantDoesNotApply(ValueError):
    pass


def edit(file: str, old: str, new: str) -> Edit:
    return Edit(file, old, new)


def mutated_source(target: Target, mutant: Mutant) -> dict[str, str]:
    """The changed files (relative path -> new text); raises MutantDoesNotApply naming the edit."""
    texts: dict[str, str] = {}
    for e in mutant.edits:
        path = target.folder / e.file
        text = texts.get(e.file, path.read_text(encoding="utf-8"))
        count = text.count(e.old)
        if count != 1:
            raise MutantDoesNotApply(
                f"mutant {mutant.name!r}: the text to replace occurs {count} times in "
                f"{path.relative_to(ROOT)} (expected once): {e.old[:80]!r}"
            )
        texts[e.file] = text.replace(e.old, e.new)
    return texts


def apply(target: Target, mutant: Mutant | None, dest: Path) -> Path:
    """Copy the target's package into ``dest`` (``dest/<package>``), mutated; returns ``dest``."""
    package = dest / target.package
    shutil.copytree(target.folder, package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    if mutant is not None:
        for file, text in mutated_source(target, mutant).items():
            (package / file).write_text(text, encoding="utf-8")
    return dest


def targets() -> dict[str, tuple[Target, tuple[Mutant, ...]]]:
    from . import hello, vision

    return {"hello": (hello.TARGET, hello.MUTANTS), "vision": (vision.TARGET, vision.MUTANTS)}
