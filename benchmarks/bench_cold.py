"""Cold commands: the CPU time of one fresh ``v22sdk`` process, beside ``python -c pass`` and
``python -c "import torch"`` measured in the same run (issue 21).

    .venv/bin/python benchmarks/bench_cold.py [--rounds 7] [--out results/benchmarks/bench_cold.json]

Every contender is a fresh process; the rounds interleave them (round r runs each contender once,
in a shuffled order), so a change of the machine's load touches all of them alike. The figure is
the child's CPU time (user + system, from ``os.wait4``), which other jobs on a shared machine
inflate far less than wall time; wall time is recorded too. The medians over the rounds are
compared with the targets, and the spread (min-max) is printed.

Inputs: a 512×512 photo (PNG), a 3.0 s 16 kHz recording (WAV), a 1,000-character Chinese/English
text file (.txt); ``run`` uses the bundled checkpoint. The memory (``V22SDK_MEMORY``) and token
cache (``V22SDK_CACHE``) point into a temporary folder: the user's are never touched. One thread
(``OMP_NUM_THREADS=1``) as the other benchmarks; ``run`` pins its pools to one thread itself.
Every contender reads compiled bytecode from one cache in the temporary folder
(``PYTHONPYCACHEPREFIX``), filled by a warm-up run of each, as an installed package has it.

Targets: ``tokenize FILE`` ≤ 0.5 s CPU for image, sound and text; ``run FILE`` ≤ 1.3 × ``import
torch`` for every modality; ``--help`` and ``plugins list`` ≤ 0.3 s CPU with every contrib plugin
installed (the dev environment installs them all).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "results" / "benchmarks" / "bench_cold.json"
BIN = str(Path(sys.executable).with_name("v22sdk"))
PY = sys.executable

TARGETS = {
    "tokenize_cpu_s": 0.5,
    "run_over_import_torch": 1.3,
    "help_cpu_s": 0.3,
    "plugins_list_cpu_s": 0.3,
}


def make_inputs(tmp: Path) -> dict[str, Path]:
    import cv2
    import soundfile as sf

    photo = sorted((ROOT / "v22sdk" / "engine" / "data" / "demo" / "images").glob("*.png"))[0]
    img = cv2.resize(cv2.imread(str(photo), cv2.IMREAD_COLOR), (512, 512), interpolation=cv2.INTER_CUBIC)
    rng = np.random.default_rng(0)
    img = np.clip(img.astype(np.int16) + rng.integers(-6, 7, img.shape), 0, 255).astype(np.uint8)
    png = tmp / "photo.png"
    cv2.imwrite(str(png), img)
    rate = 16_000
    t = np.arange(3 * rate) / rate
    x = 0.3 * sum(np.sin(2 * np.pi * 150 * k * t * (1 + 0.1 * t)) / k for k in range(1, 8))
    x = x * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t)) + 0.01 * rng.standard_normal(t.size)
    wav = tmp / "voice.wav"
    sf.write(str(wav), x, rate, subtype="PCM_16")
    return {"image": png, "sound": wav}


def text_file(tmp: Path) -> Path:
    base = (
        "因为下雨，所以我们没有去公园。We stayed at home because it rained. 他很聪明，但是很懒。"
        "今天是2024年3月5日，气温21.5度。The quick brown fox jumps over the lazy dog. "
        "中华人民共和国成立于1949年。这是一个测试：分词、词性标注、句子边界。"
    )
    text = (base * (1000 // len(base) + 1))[:1000]
    path = tmp / "note.txt"
    path.write_text(text, encoding="utf-8")
    return path


def child_cpu(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one fresh process; it must succeed."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({p.returncode}): {err.decode(errors='replace')[-500:]}")
    return ru.ru_utime + ru.ru_stime, wall


def child_envs(tmp: Path, **extra: str) -> tuple[dict[str, str], dict[str, str]]:
    """The timed processes' environment and the warm-up's, both in the temporary folder ``tmp``.

    Bytecode: every process reads its compiled modules from one cache in ``tmp``
    (PYTHONPYCACHEPREFIX), written by the warm-up run (the second environment, which may write
    it), as an installed package has them (pip compiles at install; Python writes them on first
    import). Without it an editable checkout under PYTHONDONTWRITEBYTECODE=1 recompiled all of
    v22sdk's imported source (about 600 kB, 0.1-0.2 s of CPU) in every v22sdk process, while
    torch's came compiled. The memory store and caches are in ``tmp`` too, never the user's.
    """
    env = {
        **os.environ,
        "V22SDK_MEMORY": str(tmp / "memory"),
        "V22SDK_CACHE": str(tmp / "cache"),
        **extra,
        "PYTHONPYCACHEPREFIX": str(tmp / "pycache"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return env, {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", default=str(RESULT))
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at

    with tempfile.TemporaryDirectory(prefix="v22-bench-cold-") as tmp_s:
        tmp = Path(tmp_s)
        inputs = make_inputs(tmp)
        inputs["text"] = text_file(tmp)
        env, warm_env = child_envs(tmp, OMP_NUM_THREADS="1")
        contenders = {
            "python -c pass": [PY, "-c", "pass"],
            "python -c 'import torch'": [PY, "-c", "import torch"],
            "v22sdk --help": [BIN, "--help"],
            "v22sdk plugins list": [BIN, "plugins", "list"],
        }
        for kind, path in inputs.items():
            contenders[f"v22sdk tokenize {kind}"] = [BIN, "tokenize", str(path)]
        for kind, path in inputs.items():
            contenders[f"v22sdk run {kind}"] = [BIN, "run", str(path)]
        for argv in contenders.values():  # once each: the OS file cache, .pyc files, the memory folder
            child_cpu(argv, warm_env)
        cpu = {k: [] for k in contenders}
        wall = {k: [] for k in contenders}
        rng = random.Random(21)
        load0 = os.getloadavg()
        for r in range(args.rounds):
            order = list(contenders)
            rng.shuffle(order)
            for k in order:
                c, w = child_cpu(contenders[k], env)
                cpu[k].append(c)
                wall[k].append(w)
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
        load1 = os.getloadavg()

    med = {k: statistics.median(v) for k, v in cpu.items()}
    torch_cpu = med["python -c 'import torch'"]
    rows, checks = [], {}
    for k in contenders:
        target, ratio = "—", None
        if k.startswith("v22sdk tokenize"):
            target, ok = f"≤ {TARGETS['tokenize_cpu_s']} s", med[k] <= TARGETS["tokenize_cpu_s"]
        elif k.startswith("v22sdk run"):
            ratio = med[k] / torch_cpu
            target, ok = (
                f"≤ {TARGETS['run_over_import_torch']} × import torch",
                ratio <= TARGETS["run_over_import_torch"],
            )
        elif k == "v22sdk --help":
            target, ok = f"≤ {TARGETS['help_cpu_s']} s", med[k] <= TARGETS["help_cpu_s"]
        elif k == "v22sdk plugins list":
            target, ok = f"≤ {TARGETS['plugins_list_cpu_s']} s", med[k] <= TARGETS["plugins_list_cpu_s"]
        else:
            ok = None
        if ok is not None:
            checks[k] = bool(ok)
        rows.append(
            [
                k,
                f"{med[k]:.3f}",
                f"{min(cpu[k]):.3f}–{max(cpu[k]):.3f}",
                f"{statistics.median(wall[k]):.2f}",
                "—" if ratio is None else f"{ratio:.2f}",
                target,
                "—" if ok is None else ("yes" if ok else "no"),
            ]
        )
    print(f"{'command':32s} {'CPU s':>7s} {'spread':>13s} {'wall s':>7s} {'×torch':>7s}  target  met")
    for row in rows:
        print(f"{row[0]:32s} {row[1]:>7s} {row[2]:>13s} {row[3]:>7s} {row[4]:>7s}  {row[5]}  {row[6]}")
    print(f"load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end")
    if args.no_write:
        return
    from v22sdk.evidence import write_result

    write_result(
        args.out,
        {
            "rounds": args.rounds,
            "cpu_s": cpu,
            "wall_s": wall,
            "median_cpu_s": med,
            "met": checks,
            "loadavg_start": list(load0),
            "loadavg_end": list(load1),
        },
        name="bench_cold",
        criterion={
            "targets": TARGETS,
            "statistic": "median over rounds of the child's CPU time "
            "(user + system), contenders interleaved in a shuffled order per round",
        },
        tables={
            "cold": {
                "columns": [
                    f"fresh process ({args.rounds} rounds, interleaved)",
                    "CPU median (s)",
                    "CPU min–max (s)",
                    "wall median (s)",
                    "CPU / import torch",
                    "target",
                    "met",
                ],
                "align": "lrrrrll",
                "rows": rows,
            }
        },
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
