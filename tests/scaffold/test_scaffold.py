"""The plugin generator: names, errors, the click command, and generated packages that pass their
own contract tests and fail them when the generated tokenizer is broken, their toy data sets, and
the guide's section 0 (docs/writing-a-plugin.md) run as written."""

from __future__ import annotations

import importlib
import os
import re
import shlex
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from v22sdk.scaffold import ZONES, ScaffoldError, generate, names_for
from v22sdk.scaffold.cli import new_plugin

PYTHON = sys.executable
#: The text edit that breaks every generated tokenizer's emb normalisation.
NORMALISED = "vectors / np.where(zero[:, None], 1.0, norms)"
BROKEN = "vectors * 1.5"


def _pytest(pkg: Path, *args: str, pythonpath: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ}
    if pythonpath:
        env["PYTHONPATH"] = str(pkg / "src")
    return subprocess.run(
        [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", *args, str(pkg / "tests")],
        cwd=pkg,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_names_are_derived_from_the_plugin_name():
    assert names_for("thermal_cam") == {
        "name": "thermal_cam",
        "dist": "v22sdk-thermal_cam",
        "package": "v22sdk_thermal_cam",
        "cls": "ThermalCamModality",
    }


@pytest.mark.parametrize("bad", ["Thermal", "1x", "my-plugin", "", "class", "a" * 40])
def test_bad_names_are_refused(bad, tmp_path):
    with pytest.raises(ScaffoldError, match="lower-case identifier"):
        generate(bad, "vision", tmp_path)


def test_unknown_zone_and_existing_target_are_refused(tmp_path):
    with pytest.raises(ScaffoldError, match="unknown zone"):
        generate("x", "smell", tmp_path)
    generate("x", "vision", tmp_path)
    marker = tmp_path / "v22sdk-x" / "README.md"
    before = marker.read_text()
    with pytest.raises(ScaffoldError, match="already exists"):
        generate("x", "audio", tmp_path)
    assert marker.read_text() == before  # nothing overwritten


def test_cli_command_generates_and_reports(tmp_path):
    result = CliRunner().invoke(new_plugin, ["lidar", "--zone", "vision", "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    root = tmp_path / "v22sdk-lidar"
    assert f"created {root}" in result.output
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
        "README.md",
        "examples/make_manifest.py",
        "pyproject.toml",
        "src/v22sdk_lidar/__init__.py",
        "src/v22sdk_lidar/modality.py",
        "tests/test_contract.py",
        "tests/test_tokens.py",
    ]
    pyproject = (root / "pyproject.toml").read_text()
    assert '[project.entry-points.v22sdk]\nlidar = "v22sdk_lidar"' in pyproject
    assert 'dependencies = ["v22sdk>=0.1"]' in pyproject
    again = CliRunner().invoke(new_plugin, ["lidar", "--dir", str(tmp_path)])
    assert isinstance(again.exception, ScaffoldError) and "already exists" in str(again.exception)
    bad = CliRunner().invoke(new_plugin, ["lidar", "--zone", "smell", "--dir", str(tmp_path)])
    assert bad.exit_code == 2


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("text", "a modality named 'text' is already installed (from v22sdk)"),  # the built-in one
        ("../../etc", "must be a lower-case identifier"),
        ("", "must be a lower-case identifier"),
    ],
)
def test_taken_or_bad_names_are_one_line_usage_errors(name, problem, tmp_path):
    import sys

    r = subprocess.run(
        [sys.executable, "-c", "from v22sdk.cli import main; main()", "new-plugin", name, "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and problem in r.stderr and r.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


# vision runs by default; the other two zones take ~20 s each on 2 shared cores, so they are slow.
@pytest.mark.parametrize(
    "zone", ["vision", pytest.param("audio", marks=pytest.mark.slow), pytest.param("language", marks=pytest.mark.slow)]
)
def test_generated_package_passes_its_tests_and_fails_them_when_broken(zone, tmp_path):
    root = generate(f"gen_{zone[:3]}", zone, tmp_path)
    ok = _pytest(root, "--v22sdk-max-examples", "8")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    from v22sdk.testing import list_checks

    # one item per contract check, two value tests; the vision and audio packages also test their
    # file loaders (audio: two tests, vision: one)
    assert f"{len(list_checks()) + 2 + {'vision': 1, 'audio': 2}.get(zone, 0)} passed" in ok.stdout
    modality = root / "src" / f"v22sdk_gen_{zone[:3]}" / "modality.py"
    text = modality.read_text()
    assert text.count(NORMALISED) == 1
    modality.write_text(text.replace(NORMALISED, BROKEN))
    broken = _pytest(root, "--v22sdk-max-examples", "8", "-k", "check_unit_norm_emb or check_schema or test_one")
    assert broken.returncode == 1, broken.stdout
    # The kit names the broken rule; the schema check (no tokenizing) still passes.
    summary = broken.stdout.split("short test summary")[-1]
    assert f"FAILED tests/test_contract.py::test_contract[gen_{zone[:3]}-check_unit_norm_emb]" in summary
    assert "check_schema]" not in summary
    assert "2 failed, 1 passed" in broken.stdout


# -- the guide, executed -------------------------------------------------------------------------
# docs/writing-a-plugin.md section 0 is run as written: its bash blocks, line by line, in a
# temporary directory, with `thermal` replaced by a unique name and the commands mapped onto this
# venv. A trailing `# ...` comment states what the line prints: its parts between `...` must
# appear in the output, in order (runs of spaces match any whitespace; table borders are blanks).

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-a-plugin.md"
SECTION_0 = "## 0. Generate a package"
GUIDE_NAME = "thermal"
_BOX = re.compile("[\u2500-\u257f]")  # rich's table borders


@dataclass
class GuideLine:
    lineno: int  # line in the guide
    text: str  # the line as written
    argv: list[str]  # the command, before mapping
    expect: str  # its trailing comment ('' when none)


def _split_comment(line: str) -> tuple[str, str]:
    """(command, comment): the first '#' outside quotes that starts a word begins the comment."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1 :].strip()
    return line.rstrip(), ""


def guide_commands(text: str, name: str = GUIDE_NAME) -> list[GuideLine]:
    """The commands of section 0's bash blocks, with `thermal` replaced by ``name``."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == SECTION_0)
    except StopIteration:
        raise AssertionError(f"the guide has no section {SECTION_0!r}") from None
    out, in_bash = [], False
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.startswith("## "):
            break
        if line.strip().startswith("```"):
            in_bash = not in_bash and line.strip() == "```bash"
            continue
        if not in_bash or not line.strip() or line.lstrip().startswith("#"):
            continue
        command, expect = _split_comment(line.replace(GUIDE_NAME, name))
        out.append(GuideLine(i + 1, line, shlex.split(command), expect))
    return out


def map_command(argv: list[str]) -> list[str]:
    """The guide's command as run in this venv (no network, no build isolation)."""
    head, rest = argv[0], argv[1:]
    if head == "v22sdk":
        script = Path(PYTHON).parent / "v22sdk"
        return ([str(script)] if script.is_file() else [PYTHON, "-c", "from v22sdk.cli import main; main()"]) + rest
    if head == "python":
        return [PYTHON, *rest]
    if head == "pytest":
        return [PYTHON, "-m", "pytest", *rest]
    if head == "pip" and rest[:1] == ["install"] and "-e" in rest and len(rest) == 3:
        return [PYTHON, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", rest[-1]]
    raise ValueError(f"no mapping for the command {' '.join(argv)!r}")


def expectation(comment: str) -> re.Pattern | None:
    """The pattern a trailing comment asks of the output: its parts between `...`, in order."""
    parts = [p.strip() for p in comment.split("...") if p.strip()]
    if not parts:
        return None
    return re.compile(r"[\s\S]*?".join(r"\s+".join(map(re.escape, p.split())) for p in parts))


def run_guide(text: str, cwd: Path, name: str, *, where: str = "docs/writing-a-plugin.md") -> list[str]:
    """Run every command of section 0 in order in ``cwd``; fail naming the guide's line. Returns the outputs."""
    env = {
        **os.environ,
        "V22SDK_CACHE": str(cwd / ".cache"),
        "V22SDK_MEMORY": str(cwd / "memory.sqlite3"),
        "COLUMNS": "160",
    }  # no wrapped table rows
    env.pop("PYTHONPATH", None)  # the installed package, as a reader has it
    outputs = []
    for line in guide_commands(text, name):
        try:
            done = subprocess.run(map_command(line.argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{where}:{line.lineno}: `{line.text.strip()}` timed out")
        output = done.stdout + done.stderr
        if done.returncode != 0:
            pytest.fail(f"{where}:{line.lineno}: `{line.text.strip()}` exited {done.returncode}:\n{output[-3000:]}")
        pattern = expectation(line.expect)
        if pattern is not None and not pattern.search(_BOX.sub(" ", output)):
            pytest.fail(
                f"{where}:{line.lineno}: `{line.text.strip()}` should print {line.expect!r}; it printed:\n"
                f"{output[-3000:]}"
            )
        outputs.append(output)
    return outputs


def _uninstall(dist: str) -> None:
    subprocess.run([PYTHON, "-m", "pip", "uninstall", "-y", "-q", dist], capture_output=True, timeout=300)


def test_guide_section_0_parses_and_maps():
    """Fast: the guide's commands are found, each maps onto this venv, and the checked ones say what to expect."""
    lines = guide_commands(GUIDE.read_text(encoding="utf-8"), "e2e0")
    heads = [" ".join(line.argv[:2]) for line in lines]
    assert heads == [
        "v22sdk new-plugin",
        "pip install",
        "python -c",
        "v22sdk plugins",
        "pytest v22sdk-e2e0/tests",
        "python v22sdk-e2e0/examples/make_manifest.py",
        "v22sdk train",
        "v22sdk run",
    ], heads
    assert all(map_command(line.argv) for line in lines)
    assert map_command(lines[1].argv)[1:] == [
        "-m",
        "pip",
        "install",
        "-q",
        "--no-deps",
        "--no-build-isolation",
        "-e",
        "./v22sdk-e2e0",
    ]
    expects = {" ".join(line.argv[:2]): line.expect for line in lines}
    assert "'e2e0'" in expects["python -c"] and "v22sdk-e2e0" in expects["v22sdk plugins"]
    assert expects["pytest v22sdk-e2e0/tests"] == "22 passed" and expects["v22sdk run"].startswith("亮")
    assert expectation("22 passed").search("22 passed in 2.0s")
    assert not expectation("22 passed").search("1 failed, 21 passed")
    assert expectation("... 'x' ...").search("['audio', 'x', 'y']")
    assert expectation("x  v22sdk-x  0.1.0 ...").search("a  b\nx          v22sdk-x   0.1.0   modalities: x")
    with pytest.raises(ValueError, match="no mapping"):
        map_command(["curl", "example.org"])


def test_guide_runner_fails_on_a_broken_command_or_output(tmp_path):
    """The runner catches what breaks: a command that fails, and one that prints the wrong thing."""
    doc = (
        "## 0. Generate a package\n\n```bash\n"
        "python -c \"print('hello thermal')\"   # hello thermal\n"
        'python -c "import sys; sys.exit(3)"\n```\n\n## 1. Next\n'
    )
    with pytest.raises(pytest.fail.Exception, match=r"guide.md:5: `python -c .*` exited 3"):
        run_guide(doc, tmp_path, "zz", where="guide.md")
    assert run_guide(doc.replace("sys.exit(3)", "sys.exit(0)"), tmp_path, "zz")[0].strip() == "hello zz"
    wrong = doc.replace("# hello thermal", "# hello world")
    with pytest.raises(pytest.fail.Exception, match=r"guide.md:4: .* should print 'hello world'"):
        run_guide(wrong, tmp_path, "zz", where="guide.md")


@pytest.mark.slow  # pip install -e, a training run and `v22sdk run`: about 20 s
def test_guide_section_0_end_to_end(tmp_path):
    """docs/writing-a-plugin.md section 0, as written: generate -> pip install -e into this venv ->
    the registry and `v22sdk plugins list` show it -> its pytest passes -> a toy manifest -> an
    engine trains on it -> `v22sdk run` labels the held-out input."""
    name = f"e2e{uuid.uuid4().hex[:8]}"
    try:
        run_guide(GUIDE.read_text(encoding="utf-8"), tmp_path, name)
    finally:
        _uninstall(f"v22sdk-{name}")
    after = subprocess.run(
        [PYTHON, "-c", "from v22sdk import Registry; print(Registry().names('modalities'))"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert f"'{name}'" not in after.stdout


# -- examples/make_manifest.py ---------------------------------------------------------------------

EXPECTED_CLASSES = {"vision": ("亮", "暗", ".npy"), "audio": ("低", "高", ".npz"), "language": ("数", "词", ".txt")}


@pytest.mark.parametrize("zone", list(ZONES))
def test_make_manifest_writes_data_the_engine_loader_accepts(zone, tmp_path):
    """Each zone's script writes a seeded, balanced manifest that v22sdk's data loader reads and tokenizes."""
    from v22sdk import Registry
    from v22sdk.engine.data import read_examples, tokenize_examples

    name = f"mm{zone[:3]}{uuid.uuid4().hex[:6]}"
    root = generate(name, zone, tmp_path)
    script = root / "examples" / "make_manifest.py"
    runs = [
        subprocess.run(
            [PYTHON, str(script), str(tmp_path / d)], capture_output=True, text=True, timeout=120, cwd=tmp_path
        )
        for d in ("a", "b")
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    first, second, suffix = EXPECTED_CLASSES[zone]
    assert f"wrote 48 examples (24 {first}, 24 {second};" in runs[0].stdout
    written = sorted(p.name for p in (tmp_path / "a").iterdir())
    for f in written:  # seeded: the same bytes every run
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    assert "manifest.jsonl" in written and f"query{suffix}" in written
    sys.path.insert(0, str(root / "src"))
    try:
        module = importlib.import_module(f"v22sdk_{name}")
        registry = Registry(entry_points=False)
        assert registry.register(module).ok
        examples = read_examples(tmp_path / "a" / "manifest.jsonl", registry)
        assert len(examples) == 48 and {ex.modality for ex in examples} == {name}
        assert sorted(ex.target for ex in examples) == sorted([first, second] * 24)
        assert all(ex.is_file == (zone != "language") for ex in examples)
        batches, _ = tokenize_examples(examples, registry, cache=False)
        assert all(len(b) >= 1 and b.modality == name for b in batches)
        query = registry.modality(name).tokenize_file(tmp_path / "a" / f"query{suffix}")
        assert len(query) >= 1
        if zone == "vision":  # the classes differ in brightness: the mean slot tells them apart
            means = {
                t: [
                    registry.get_class("modalities", name).schema.values(b.attr.mean(0))[f"{name}.mean"]
                    for b, ex in zip(batches, examples)
                    if ex.target == t
                ]
                for t in (first, second)
            }
            assert min(means[first]) > max(means[second])
    finally:
        sys.path.remove(str(root / "src"))
        for mod in [m for m in sys.modules if m.startswith(f"v22sdk_{name}")]:
            del sys.modules[mod]


@pytest.mark.slow
@pytest.mark.parametrize("zone", ["audio", "language"])
def test_make_manifest_data_trains_and_runs(zone, tmp_path):
    """The audio and language toy sets are learnable too: the guide's train/run steps label the query."""
    name = f"tr{zone[:3]}{uuid.uuid4().hex[:6]}"
    generate(name, zone, tmp_path)
    suffix = EXPECTED_CLASSES[zone][2]
    doc = (
        f"{SECTION_0}\n\n```bash\npip install -e ./v22sdk-thermal\n"
        f"python v22sdk-thermal/examples/make_manifest.py data/thermal\n"
        f"v22sdk train data/thermal/manifest.jsonl --preset tiny --epochs 40 -o thermal.pt   # ... test thermal 1.000\n"
        f"v22sdk run --modality thermal --checkpoint thermal.pt data/thermal/query{suffix}   # "
        f"{EXPECTED_CLASSES[zone][0]}    confidence\n```\n"
    )
    try:
        run_guide(doc, tmp_path, name, where=f"<{zone} train/run>")
    finally:
        _uninstall(f"v22sdk-{name}")
