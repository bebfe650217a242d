#!/usr/bin/env python
"""Engine inference at batch 1 (what ``v22sdk run`` does) beside batch 32: per-input latency and the
achieved FLOP rate against a matmul of the same FLOPs, measured in the same process (issue 21).

    .venv/bin/python benchmarks/bench_infer.py [--reps 30] [--out results/benchmarks/bench_infer.json]

The model is the bundled default checkpoint, evaluated as ``Runner.run`` does (``forward_eval``: eval
mode, no gradients, no memory write). Inputs are real tokens: one demo image, one demo sound and one
text, each run alone (batch 1) and as 32 copies (batch 32). FLOPs are model FLOPs counted by
``torch.utils.flop_counter.FlopCounterMode`` over the reference formulation (as bench_engine.py).
The peer for each row is a square float32 matmul of (about) the same FLOPs, timed in the same
process; the figure is achieved FLOP/s ÷ the matmul's. One thread (as ``run``). Times are the
median of ``--reps`` calls, CPU time of this thread (robust to other load); wall is recorded.
P7 keeps its parameter-only terms (the vocabulary's keys and values, the meta gates) between
inference calls; each row is also timed with that cache emptied before every call (the engine as
it was), and the FLOPs are counted with every term computed (model FLOPs, as bench_engine.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "v22sdk" / "engine" / "data" / "demo"


def timed(fn, reps: int) -> tuple[float, float]:
    fn()
    cpu, wall = [], []
    for _ in range(reps):
        c0, w0 = time.thread_time(), time.perf_counter()
        fn()
        cpu.append(time.thread_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--out", default=str(ROOT / "results" / "benchmarks" / "bench_infer.json"))
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at

    import torch
    from torch.utils.flop_counter import FlopCounterMode

    torch.set_num_threads(1)
    from v22sdk.engine.data import to_tensors
    from v22sdk.engine.runner import Runner
    from v22sdk.engine.stages import set_fused
    from v22sdk.engine.train import forward_eval

    inputs = {
        "image": str(sorted((DEMO / "images").glob("*.png"))[0]),
        "sound": str(sorted((DEMO / "audio").glob("*.wav"))[0]),
        "text": "因为下雨，所以我们没有去公园。",
    }
    load0 = os.getloadavg()
    rows, data = [], {"rows": {}}
    with Runner(None) as runner:
        model, cfg = runner.model, runner.cfg

        def clear_cache():
            for mod in model.modules():
                mod.__dict__.pop("_inference_cache", None)

        for kind, src in inputs.items():
            batch = runner.tokenize(src)
            schema = runner.registry.get_class("modalities", batch.modality).schema
            attr_set = schema.active_names(batch)
            for b in (1, args.batch):
                tokens, mask = to_tensors([batch] * b, cfg.max_len)
                sets = [attr_set] * b

                def fwd():
                    return forward_eval(model, tokens, mask, sets, write_memory=False)

                def fwd_uncached():  # as before P7 kept its parameter-only terms
                    clear_cache()
                    return fwd()

                set_fused(model, False)
                clear_cache()  # model FLOPs: every term computed
                with FlopCounterMode(display=False) as counter:
                    fwd()
                flops = counter.get_total_flops()
                set_fused(model, True)
                reps = args.reps if b == 1 else max(5, args.reps // 4)
                cpu_u, _ = timed(fwd_uncached, reps)
                cpu, wall = timed(fwd, reps)
                n = max(8, round((flops / 2) ** (1 / 3)))
                a, c = torch.randn(n, n), torch.randn(n, n)
                mm_cpu, _ = timed(lambda: a @ c, args.reps)
                share = (flops / cpu) / (2 * n**3 / mm_cpu)
                key = f"{kind}, batch {b}"
                data["rows"][key] = {
                    "tokens_per_input": len(batch),
                    "flops": flops,
                    "cpu_s": cpu,
                    "wall_s": wall,
                    "cpu_s_without_cache": cpu_u,
                    "matmul_n": n,
                    "matmul_cpu_s": mm_cpu,
                    "share_of_matmul": share,
                }
                print(
                    f"{key:18s} {len(batch):4d} tok  {cpu * 1e3 / b:8.3f} ms/input CPU ({cpu * 1e3:8.2f} ms/call; "
                    f"{cpu_u * 1e3:8.2f} without P7's cache)  {flops / 1e6:9.1f} MFLOP  {share:6.1%} of a {n}³ matmul"
                )
                rows.append(
                    [
                        kind,
                        str(b),
                        str(len(batch)),
                        f"{cpu * 1e3 / b:.3f}",
                        f"{cpu_u * 1e3 / b:.3f}",
                        f"{cpu * 1e3:.2f}",
                        f"{flops / b / 1e6:.1f}",
                        f"{share:.0%}",
                    ]
                )
    load1 = os.getloadavg()
    print(f"load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end")
    if args.no_write:
        return
    from v22sdk.evidence import write_result

    data.update({"preset": cfg.engine, "loadavg_start": list(load0), "loadavg_end": list(load1), "reps": args.reps})
    write_result(
        args.out,
        data,
        name="bench_infer",
        criterion={
            "measured": "per-input CPU latency of forward_eval at batch 1 and batch 32, and the "
            "achieved FLOP rate as a share of a square matmul of the same FLOPs, same process"
        },
        tables={
            "infer": {
                "columns": [
                    "input",
                    "batch",
                    "tokens per input",
                    "CPU ms per input",
                    "same, P7's terms recomputed each call",
                    "CPU ms per call",
                    "model MFLOP per input",
                    "share of a matmul of the same FLOPs",
                ],
                "align": "lrrrrrrr",
                "rows": rows,
            }
        },
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
