"""Scaling figures of the scale-out paths, measured on this machine (prints a table; run once).

1. Tokenization on Ray Data, 1 vs 2 workers (same inputs; the Ray cluster's start-up is excluded
   and reported apart), and the single-process loop (no Ray) as the peer;
2. training, 1 vs 2 processes (torch.distributed.run, gloo, preset tiny), wall time of the whole run;
3. memory L3 latency, PostgreSQL (throwaway server on loopback, fsync on) vs SQLite (WAL,
   synchronous=FULL): one committed turn, one get by id, one exact top-1 search over N turns.

usage: python benchmarks/bench_scaling.py [--quick] [--json PATH]
(``--json results/benchmarks/bench_scaling.json`` also writes the figures there, for the docs.)
Figures on a shared 2-core machine are noisy (other jobs run); ratios within one run are the point.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "scale"))
DEMO = ROOT / "v22sdk" / "engine" / "data" / "demo"


def make_inputs(d: Path, n_text: int, n_audio: int) -> None:
    import numpy as np

    d.mkdir(parents=True)
    rng = np.random.default_rng(0)
    chars = list("因为下雨所以我们没有去公园今天天气很好我们一起去散步吧你好世界")
    for i in range(n_text):
        (d / f"t{i:05d}.txt").write_text("".join(rng.choice(chars, 400)), encoding="utf-8")
    wavs = sorted((DEMO / "audio").glob("*.wav"))
    for i in range(n_audio):
        shutil.copy(wavs[i % len(wavs)], d / f"a{i:05d}.wav")


def bench_tokenize(tmp: Path, quick: bool) -> list[tuple[str, float, str]]:
    import ray

    from v22sdk.plugins import get_registry
    from v22sdk.scale.inputs import list_items
    from v22sdk.scale.ray_jobs import tokenize
    from v22sdk.scale.shards import tokenize_rows

    src = tmp / "tok_in"
    make_inputs(src, 60 if quick else 300, 20 if quick else 100)
    items, _ = list_items(src)
    out = []
    t = time.perf_counter()
    (tmp / "solo").mkdir()
    tokenize_rows(items, tmp / "solo", registry=get_registry())
    solo = time.perf_counter() - t
    out.append(("tokenize: single process, no Ray", solo, f"{len(items) / solo:.0f} inputs/s"))
    for w in (1, 2):
        t0 = time.perf_counter()
        ray.init(num_cpus=w, include_dashboard=False, log_to_driver=False, configure_logging=False)
        up = time.perf_counter() - t0
        t = time.perf_counter()
        s = tokenize(src, tmp / f"ray{w}", num_workers=w, shard_size=32, progress=False)
        dt = time.perf_counter() - t
        ray.shutdown()
        assert s["tokenized"] == len(items), s
        out.append(
            (
                f"tokenize: Ray Data, {w} worker(s) (cluster start {up:.1f} s excluded)",
                dt,
                f"{len(items) / dt:.0f} inputs/s",
            )
        )
    return out


def bench_train(tmp: Path, quick: bool) -> list[tuple[str, float, str]]:
    data = tmp / "pairs.tsv"
    lines = (DEMO / "text.tsv").read_text(encoding="utf-8").splitlines()
    data.write_text("\n".join(lines * (2 if quick else 8)) + "\n", encoding="utf-8")
    out = []
    env = {**os.environ, "V22SDK_CACHE": str(tmp / "cache"), "PYTHONPATH": str(ROOT)}
    for n in (1, 2):
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nnodes",
            "1",
            "--nproc_per_node",
            str(n),
            "-m",
            "v22sdk.scale.ddp",
            str(data),
            "--out",
            str(tmp / f"m{n}.pt"),
            "--preset",
            "tiny",
            "--epochs",
            "3" if quick else "8",
            "--set",
            "batch_size=16",
        ]
        warm = [a if a != ("3" if quick else "8") else "1" for a in cmd]  # 1 epoch: fills the token cache
        subprocess.run(warm, env=env, capture_output=True, check=True)
        t = time.perf_counter()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        dt = time.perf_counter() - t
        assert p.returncode == 0, p.stderr[-2000:]
        loss = json.loads(p.stdout.strip().splitlines()[-1])["final_loss"]
        out.append((f"train: {n} process(es), preset tiny, whole run", dt, f"final loss {loss:.3f}"))
    return out


def _lat(fn, reps: int) -> float:
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def bench_memory(tmp: Path, quick: bool) -> list[tuple[str, float, str]]:
    import numpy as np
    from pg_server import PgServer, find_bindir
    from scale_turns import make_turn

    from v22sdk.memory import SQLiteTier
    from v22sdk.memory.postgres import PostgresTier

    n = 2000 if quick else 10_000
    turns = [make_turn(i) for i in range(1, n + 1)]
    bindir = find_bindir()
    if bindir is None:
        return [("memory: PostgreSQL", float("nan"), "skipped: no PostgreSQL binaries")]
    server = PgServer(bindir).start()
    out = []
    try:
        tiers = {"SQLite": SQLiteTier(str(tmp / "m.db")), "PostgreSQL": PostgresTier(server.create_db("bench"))}
        for name, tier in tiers.items():
            for s in range(0, n, 1000):
                tier.commit(turns[s : s + 1000])
            extra = iter(make_turn(i, "w") for i in range(1, 10_000))
            w = _lat(lambda: tier.commit([next(extra)]), 200)
            g = _lat(lambda: tier.get(n // 2), 200)
            q = turns[7].sent_vec[None] / np.linalg.norm(turns[7].sent_vec)
            qm = tier.vocab.mask(turns[7].attrs)[None]
            qc = np.array([len(turns[7].attrs)], np.int32)
            s = _lat(lambda: tier.search(q, qm, qc, k=1), 7)
            out += [
                (f"memory {name}: commit 1 turn (durable)", w, ""),
                (f"memory {name}: get by id", g, ""),
                (f"memory {name}: exact top-1 over {len(tier)} turns", s, ""),
            ]
            tier.close()
    finally:
        server.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["tokenize", "train", "memory"], default=None)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as a result file here")
    args = ap.parse_args()
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        os.environ["V22SDK_CACHE"] = str(tmp / "cache")
        for name, fn in (("tokenize", bench_tokenize), ("train", bench_train), ("memory", bench_memory)):
            if args.only in (None, name):
                rows += fn(tmp, args.quick)
    print(f"{'measurement':<62} {'time':>12}  note")
    for label, secs, note in rows:
        shown = f"{secs * 1e3:9.3f} ms" if secs < 1 else f"{secs:9.2f} s "
        print(f"{label:<62} {shown:>12}  {note}")
    if args.json:
        from v22sdk.evidence import write_result

        def shown(secs: float) -> str:
            return "—" if secs != secs else (f"{secs * 1e3:.2f} ms" if secs < 1 else f"{secs:.2f} s")

        write_result(
            args.json,
            {
                "quick": args.quick,
                "rows": [{"measure": m, "seconds": None if s != s else s, "note": n} for m, s, n in rows],
            },
            tables={
                "summary": {
                    "columns": ["measurement", "time", "note"],
                    "align": "lrl",
                    "rows": [[m, shown(s), n or "—"] for m, s, n in rows],
                }
            },
            values={"loadavg": f"{os.getloadavg()[0]:.1f}"},
        )


if __name__ == "__main__":
    main()
