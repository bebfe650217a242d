"""Salvage of damaged memory stores from 10 to 1,000,000 turns: what it recovers, and whether its
counts are true. Writes results/memory/salvage-sweep.json (table in docs/memory.md).

    python scripts/salvage_sweep.py                      # 10, 1,000, 30,000 and 1,000,000 turns
    python scripts/salvage_sweep.py --sizes 10 1000      # quicker

For each size a store is written (checkpointed, with its -ack mark), then damaged in turn:
cut at 25 %, 50 % and 75 % of its bytes and at a seeded random offset, its 100-byte header zeroed,
its first page zeroed, a seeded random 64 KiB run zeroed, and (up to 30,000 turns) its last
turns left only in a WAL that is then deleted. Each damaged copy is salvaged into a new store.

The reference, "rows the damaged file still holds whole", is computed without parsing SQLite:
each turn's vectors are located in the intact file by their bytes, and a row counts when the
300 bytes before its vectors, its vectors and its page's first 16 bytes all lie in intact bytes.

Criterion (fixed before the run, ``CRITERION`` below): in every case salvage recovers at least
99 % of the reference rows; every recovered turn is one that was written, bit-identical (its
checksum verifies, and a seeded sample is compared); the reported number of turns held equals the
true number (or is absent only when the damage took both the sequence row and the mark); the
reported loss equals held minus recovered; ``complete`` is true exactly when nothing was lost.
"""

from __future__ import annotations

import argparse
import functools
import mmap
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from v22sdk.evidence import write_result  # noqa: E402
from v22sdk.memory import SQLiteTier, salvage  # noqa: E402
from v22sdk.memory.turn import Turn  # noqa: E402

CRITERION = {
    "recovered_of_reference_min": 0.99,
    "recovered_are_written_and_bit_identical": True,
    "held_reported_equals_true_held": "in every case where the sequence row or the -ack mark survived",
    "lost_equals_held_minus_recovered": True,
    "complete_iff_nothing_lost": True,
}
PAGE = 8192
BLOCK = 10_000
NAMES = [f"lang.slot{i:02d}" for i in range(24)] + [f"vis.slot{i:02d}" for i in range(24)]


@functools.lru_cache(maxsize=2)
def _block(b: int) -> list[Turn]:
    """The turns of ids ``b * BLOCK + 1 .. (b + 1) * BLOCK``, from one seeded generator."""
    rng = np.random.default_rng([b, 22])
    sent = rng.standard_normal((BLOCK, 256)).astype(np.float32)
    mem = rng.standard_normal((BLOCK, 384)).astype(np.float32)
    picks = rng.integers(0, len(NAMES), (BLOCK, 4))
    first = b * BLOCK + 1
    return [
        Turn(
            sent[i],
            mem[i],
            frozenset(NAMES[j] for j in picks[i]),
            conversation="sweep",
            modality="text",
            digest=f"d{first + i}",
            summary=f"turn {first + i}",
        )
        for i in range(BLOCK)
    ]


def turns(start: int, stop: int) -> list[Turn]:
    """Turns ``start..stop-1`` (each id always gets the same vectors)."""
    out = []
    for k in range(start, stop):
        out.append(_block((k - 1) // BLOCK)[(k - 1) % BLOCK])
    return out


def build(path: str, n: int, in_wal: int = 0) -> None:
    store = SQLiteTier(path, synchronous="NORMAL")
    for a in range(1, n - in_wal + 1, BLOCK):
        store.commit(turns(a, min(n - in_wal, a + BLOCK - 1) + 1))
    if in_wal:
        store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store._conn.execute("PRAGMA wal_autocheckpoint = 0")
        for k in range(n - in_wal + 1, n + 1):
            store.commit(turns(k, k + 1))
        crash = path + ".crash"
        for suffix in ("", "-wal", "-ack"):
            shutil.copy(path + suffix, crash + suffix)
        store.close()
        for suffix in ("", "-ack"):
            os.replace(crash + suffix, path + suffix)
        os.remove(crash + "-wal")  # the WAL deleted after the crash
        return
    store.close()


def locate(path: str, n: int) -> np.ndarray:
    """Byte offset of each turn's sent_vec in the file (index 0 unused), by its bytes."""
    at = np.zeros(n + 1, np.int64)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        pos = 0
        for a in range(1, n + 1, BLOCK):
            for t in turns(a, min(n, a + BLOCK - 1) + 1):
                key = t.sent_vec.astype("<f4").tobytes()
                k = int(t.digest[1:])
                found = m.find(key, max(0, pos - 64 * PAGE))
                if found < 0:
                    found = m.find(key)
                if found < 0:
                    raise SystemExit(f"turn {k} not found in {path}")
                at[k] = pos = found
    return at


def reference(spans: np.ndarray, intact) -> set[int]:
    pages = spans // PAGE * PAGE
    ok = intact(pages, pages + 16) & intact(spans - 300, spans + 2560 + 16)
    ok[0] = False
    return set(np.flatnonzero(ok).tolist())


def damaged_copy(src: str, dst: str, cut: int | None = None, zero: tuple[int, int] | None = None) -> None:
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        left = os.path.getsize(src) if cut is None else cut
        while left > 0:
            chunk = fi.read(min(left, 64 << 20))
            fo.write(chunk)
            left -= len(chunk)
    if zero:
        with open(dst, "r+b") as f:
            f.seek(zero[0])
            f.write(bytes(zero[1] - zero[0]))
    shutil.copy(src + "-ack", dst + "-ack")


def check(out: str, n: int, held_true: int, report: dict, ref: set[int], rng) -> dict:
    with SQLiteTier(out, check="none") as s:
        ids = np.array([r[0] for r in s._query("SELECT id FROM turns ORDER BY id")], np.int64)
        sample = rng.choice(ids, size=min(50, len(ids)), replace=False) if len(ids) else []
        identical = all(_same(s.get(int(k))) for k in sample)
    got = set(ids.tolist())
    lost_true = held_true - len(got)
    return {
        "reference_rows": len(ref),
        "recovered": len(got),
        "recovered_of_reference": (len(got & ref) / len(ref)) if ref else 1.0,
        "recovered_not_written": len(got - set(range(1, n + 1))),
        "sample_identical": bool(identical),
        "held_reported": report["held"],
        "held_true": held_true,
        "lost_reported": report["lost"],
        "lost_true": lost_true,
        "complete_reported": report["complete"],
        "complete_true": lost_true == 0,
        "header": report["header"],
        "missing_pages": report["missing_pages"],
    }


def _same(t: Turn) -> bool:
    k = int(t.digest[1:])
    want = turns(k, k + 1)[0]
    return t.sent_vec.tobytes() == want.sent_vec.tobytes() and t.mem_emb.tobytes() == want.mem_emb.tobytes()


def sweep(size: int, work: Path, rng) -> list[dict]:
    path = str(work / f"s{size}.db")
    t0 = time.perf_counter()
    build(path, size)
    built = time.perf_counter() - t0
    spans = locate(path, size)
    total = os.path.getsize(path)
    cases = [
        ("cut 25 %", total // 4, None),
        ("cut 50 %", total // 2, None),
        ("cut 75 %", total * 3 // 4, None),
        ("cut at random", int(rng.integers(0, total)), None),
        ("header zeroed", None, (0, 100)),
        ("first page zeroed", None, (0, PAGE)),
    ]
    lo = int(rng.integers(0, max(1, total - 65536)))
    cases.append(("64 KiB zeroed at random", None, (lo, min(total, lo + 65536))))
    rows = []
    for name, cut, zero in cases:
        src, out = str(work / "damaged.db"), str(work / "out.db")
        damaged_copy(path, src, cut, zero)
        if cut is not None:
            ref = reference(spans, lambda a, b, c=cut: b <= c)
        else:
            ref = reference(spans, lambda a, b, z=zero: (b <= z[0]) | (a >= z[1]))
        cpu, wall = time.process_time(), time.perf_counter()
        report = salvage(src, out)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        row = {
            "size": size,
            "damage": name,
            "bytes": total,
            "salvage_cpu_s": round(cpu, 2),
            "salvage_wall_s": round(wall, 2),
            "build_s": round(built, 1),
            **check(out, size, size, report, ref, rng),
        }
        rows.append(row)
        print(row, flush=True)
        for p in (src, src + "-ack", out):
            if os.path.exists(p):
                os.remove(p)
    if size <= 30_000:  # the last tenth of the turns only in a WAL that is then deleted
        in_wal = max(1, size // 10)
        wal_path = str(work / f"w{size}.db")
        build(wal_path, size, in_wal)
        report = salvage(wal_path, str(work / "out.db"))
        row = {
            "size": size,
            "damage": f"WAL of the last {in_wal} deleted",
            "bytes": os.path.getsize(wal_path),
            "salvage_cpu_s": None,
            "salvage_wall_s": None,
            "build_s": None,
            **check(str(work / "out.db"), size, size, report, set(range(1, size - in_wal + 1)), rng),
        }
        rows.append(row)
        print(row, flush=True)
        for p in (wal_path, wal_path + "-ack", str(work / "out.db")):
            if os.path.exists(p):
                os.remove(p)
    for p in (path, path + "-ack"):
        os.remove(p)
    return rows


def verdict(row: dict) -> bool:
    held_ok = row["held_reported"] == row["held_true"] or row["held_reported"] is None
    return (
        row["recovered_of_reference"] >= CRITERION["recovered_of_reference_min"]
        and row["recovered_not_written"] == 0
        and row["sample_identical"]
        and held_ok
        and (row["held_reported"] is None or row["lost_reported"] == row["lost_true"])
        and row["complete_reported"] == row["complete_true"]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 1_000, 30_000, 1_000_000])
    ap.add_argument("--work", default=None, help="folder for the stores (default: a temporary one)")
    ap.add_argument("--out", default=str(ROOT / "results" / "memory" / "salvage-sweep.json"))
    args = ap.parse_args()
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    rng = np.random.default_rng(2222)
    work = Path(args.work or tempfile.mkdtemp(prefix="salvage-sweep-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in args.sizes:
        rows += sweep(size, work, rng)
    for r in rows:
        r["meets_criterion"] = verdict(r)
    table = {
        "columns": [
            "turns",
            "damage",
            "rows whole in the file",
            "recovered",
            "of those whole",
            "held: reported / true",
            "lost: reported / true",
            "salvage CPU s",
            "criterion",
        ],
        "align": "rlrrrrrrl",
        "rows": [
            [
                f"{r['size']:,}",
                r["damage"],
                f"{r['reference_rows']:,}",
                f"{r['recovered']:,}",
                f"{100 * r['recovered_of_reference']:.2f} %",
                f"{r['held_reported'] if r['held_reported'] is not None else '-'} / {r['held_true']:,}",
                f"{r['lost_reported']:,} / {r['lost_true']:,}",
                "-" if r["salvage_cpu_s"] is None else f"{r['salvage_cpu_s']:.2f}",
                "met" if r["meets_criterion"] else "NOT met",
            ]
            for r in rows
        ],
    }
    write_result(
        args.out,
        {"rows": rows, "all_met": all(r["meets_criterion"] for r in rows)},
        tables={"sweep": table},
        criterion=CRITERION,
        name="memory-salvage-sweep",
    )
    print(f"wrote {args.out}: criterion met in {sum(r['meets_criterion'] for r in rows)} of {len(rows)} cases")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
