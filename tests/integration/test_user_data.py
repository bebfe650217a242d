"""Users' data is sacred: the benchmarks (quick modes), the examples and scripts, and a CLI session
change nothing outside their temporary folders.

Every command runs with a fake home (``HOME`` and the XDG folders inside a temporary folder, the
memory and cache variables unset, so the defaults apply) and a temporary working folder, then:

* the benchmarks, examples and scripts must not have written into the fake home's v22sdk data or
  cache folders (the user's memory store and token cache): only the CLI, run by the user, may;
* nothing in the repository changed (``git status``).

Paths are derived from ``HOME`` and the XDG variables (platformdirs), so a command that reached
the real user's folders would have had to name them outright. They are not compared before and
after: on a shared machine other processes write there, and the change could not be attributed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "v22sdk" / "engine" / "data" / "demo"
PY = sys.executable
BIN = Path(PY).with_name("v22sdk")

pytestmark = pytest.mark.slow  # about 2-4 minutes on 2 cores: every benchmark and example once

# (name, argv with {tmp} for the temporary working folder); quick modes only
BENCHMARKS = [
    ("bench_core", [PY, "benchmarks/bench_core.py", "--repeat", "1", "--json", "{tmp}/r/core.json"]),
    (
        "bench_text",
        [PY, "benchmarks/bench_text.py", "--bytes", "20000", "--repeat", "1", "--json", "{tmp}/r/text.json"],
    ),
    (
        "bench_vision",
        [PY, "benchmarks/bench_vision.py", "--repeat", "1", "--copies", "1", "--json", "{tmp}/r/vision.json"],
    ),
    (
        "bench_audio",
        [
            PY,
            "benchmarks/bench_audio.py",
            "--seconds",
            "1",
            "--repeat",
            "1",
            "--pyin-seconds",
            "0.5",
            "--json",
            "{tmp}/r/audio.json",
        ],
    ),
    (
        "bench_engine",
        [PY, "benchmarks/bench_engine.py", "--steps", "1", "--presets", "small", "--json", "{tmp}/r/engine.json"],
    ),
    ("bench_run", [PY, "benchmarks/bench_run.py", "--reps", "1", "--cold-reps", "1", "--json", "{tmp}/r/run.json"]),
    (
        "bench_memory",
        [
            PY,
            "benchmarks/bench_memory.py",
            "--quick",
            "--only",
            "l2,write",
            "--dir",
            "{tmp}/memory-data",
            "--out",
            "{tmp}/r/memory.json",
        ],
    ),
    ("bench_specdec", [PY, "benchmarks/bench_specdec.py", "--repeats", "3", "--json", "{tmp}/r/specdec.json"]),
    (
        "bench_scaling",
        [PY, "benchmarks/bench_scaling.py", "--quick", "--only", "memory", "--json", "{tmp}/r/scaling.json"],
    ),
]
EXAMPLES = [
    ("depth example", [PY, "contrib/v22sdk-depth/examples/make_manifest.py", "{tmp}/depth"]),
    ("imu example", [PY, "contrib/v22sdk-imu/examples/make_manifest.py", "{tmp}/imu"]),
    ("make_demo_data", [PY, "scripts/make_demo_data.py", "--out", "{tmp}/demo"]),
    (
        "ablate_engine",
        [
            PY,
            "scripts/ablate_engine.py",
            "--variants",
            "default",
            "--seeds",
            "1",
            "--epochs",
            "1",
            "--json",
            "{tmp}/r/ablation.json",
        ],
    ),
    ("render_docs --check", [PY, "scripts/render_docs.py", "--check"]),
]
CLI_SESSION = [
    [str(BIN), "plugins", "list"],
    [str(BIN), "explain", "因为下雨，所以我们没有去公园。"],
    [str(BIN), "tokenize", str(DEMO / "images" / "apple_20.png"), "--modality", "vision", "--out", "{tmp}/image.npz"],
    [str(BIN), "tokenize", str(DEMO / "audio" / "tone_1900hz.wav"), "--out", "{tmp}/sound.npz"],
    [str(BIN), "run", str(DEMO / "images" / "apple_20.png"), "--json"],
    [str(BIN), "run", "--modality", "text", "你好吗？"],
    [str(BIN), "memory", "stats"],
    [str(BIN), "train", str(DEMO / "text.tsv"), "--preset", "tiny", "--epochs", "1", "-o", "{tmp}/m.pt"],
]


def _env(home: Path, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("V22SDK_", "XDG_"))}
    # third-party data caches that are read, not the user's v22sdk data: keep their real places
    # (scikit-image's sample photographs are fetched into its cache; there is no network in CI runs)
    try:
        import pooch

        env.setdefault("SKIMAGE_DATADIR", str(pooch.os_cache("scikit-image")))
    except ImportError:
        pass
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        TMPDIR=str(tmp / "tmp"),
        PYTHONDONTWRITEBYTECODE="1",
        OMP_NUM_THREADS="1",
    )
    return env


def _repo_state() -> str:
    out = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return "\n".join(line for line in out.splitlines() if "__pycache__" not in line)


def _v22sdk_files(home: Path) -> list[str]:
    """Files in the fake home's v22sdk folders (the user's memory store and token cache)."""
    return sorted(str(f.relative_to(home)) for f in home.rglob("*") if f.is_file() and "v22sdk" in f.parts)


def _run(argv: list[str], tmp: Path, env: dict[str, str], cwd: Path) -> None:
    argv = [a.replace("{tmp}", str(tmp)) for a in argv]
    argv = [str(ROOT / a) if a.startswith(("benchmarks/", "scripts/", "contrib/")) else a for a in argv]
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, f"{' '.join(argv)} failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"


@pytest.fixture
def sandbox():
    # in the system's temporary folder, not pytest's (private to this user): run as root, the
    # PostgreSQL benchmark starts its server as the 'postgres' user, who must reach its folders
    base = Path(tempfile.mkdtemp(prefix="v22sdk-userdata-"))
    home, tmp, work = base / "home", base / "t", base / "work"
    for d in (home, tmp / "tmp", tmp / "r", work):
        d.mkdir(parents=True)
    for d in (base, tmp, tmp / "tmp", work):
        d.chmod(0o755)
    before = _repo_state()
    try:
        yield home, tmp, work, _env(home, tmp)
        assert _repo_state() == before, "the repository changed"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_benchmarks_and_examples_leave_the_users_folders_alone(sandbox):
    home, tmp, work, env = sandbox
    if shutil.which("initdb") is None and not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")):
        pytest.skip("bench_scaling --only memory needs PostgreSQL's binaries (scripts/ci_services.sh)")
    for name, argv in BENCHMARKS + EXAMPLES:
        _run(argv, tmp, env, work)
        assert _v22sdk_files(home) == [], f"{name} wrote into the user's v22sdk folders"
    assert len(list((tmp / "r").glob("*.json"))) == len(BENCHMARKS) + 1  # every result file went where it was told


def _readme_demo() -> list[str]:
    """The README's demo: the ``v22sdk run`` of its first command block (after the set-up)."""
    import re
    import shlex

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"Set up and run the demo.*?```sh\n(.*?)```", readme, re.DOTALL)
    assert block, "README has no demo block"
    argv = shlex.split(block[1].strip().split("&&")[-1])
    assert argv[:2] == [".venv/bin/v22sdk", "run"], argv
    return [str(BIN)] + [str(ROOT / a) if (ROOT / a).exists() else a for a in argv[1:]]


def test_the_readme_demo_leaves_the_users_folders_alone(sandbox):
    """A newcomer's first command is an example, not their session: it must not start their memory."""
    home, tmp, work, env = sandbox
    argv = _readme_demo()
    r = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "七" in r.stdout, r.stdout
    assert _v22sdk_files(home) == [], "the README demo wrote into the user's v22sdk folders"
    # the check can fail: the same command without --no-memory writes the user's store
    subprocess.run([a for a in argv if a != "--no-memory"], cwd=work, env=env, capture_output=True, timeout=600)
    assert any(f.endswith("memory.sqlite3") for f in _v22sdk_files(home))


def test_a_cli_session_writes_only_into_the_home_it_is_given(sandbox):
    home, tmp, work, env = sandbox
    for argv in CLI_SESSION:
        _run(argv, tmp, env, work)
    # the session used the (fake) user's memory store, as a user's session would
    assert any(f.endswith("memory.sqlite3") for f in _v22sdk_files(home)), _v22sdk_files(home)
