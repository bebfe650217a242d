""".ci/run is what the README says CI runs, and it runs every test (slow ones included)."""

from __future__ import annotations

import re
import shlex

from v22sdk.evidence import ROOT


def _commands(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_the_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"Set up and run the tests.*?```sh\n(.*?)```", readme, re.DOTALL)
    assert block, "README has no test-command block"
    (command,) = _commands(block[1])
    assert command in _commands((ROOT / ".ci" / "run").read_text(encoding="utf-8"))


def test_ci_runs_every_slow_test_and_requires_services():
    lines = _commands((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert "export V22SDK_REQUIRE_SERVICES=1" in lines
    slow = [shlex.split(line) for line in lines if "-m slow" in line or "-m 'slow'" in line]
    assert slow, ".ci/run runs no slow tests"
    # over the whole suite: no path arguments narrow it (pyproject's testpaths is tests/)
    for argv in slow:
        after = argv[argv.index("pytest") + 1 :]
        assert after == ["-m", "slow"], argv
