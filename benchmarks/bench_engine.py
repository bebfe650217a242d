#!/usr/bin/env python
"""Engine training throughput (tokens/s) and achieved FLOP rate vs. a large matmul, same run.

    python benchmarks/bench_engine.py [--threads N] [--steps S]

For each preset (small, full) and engine (v22, baseline) it times optimiser steps (forward,
backward, Adam) on a synthetic batch, counts the step's floating-point operations with
``torch.utils.flop_counter.FlopCounterMode`` and divides. The peer is a 2048³ float32 matmul
timed in the same process with the same thread count; the figure asked for is
achieved / matmul (target ≥ 30 %). Numbers on a shared machine are noisy: the median of the
timed steps is used.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from v22sdk.engine.config import preset
from v22sdk.engine.v22 import build_model, parameter_count

SHAPES = {"small": (16, 32, 120), "full": (16, 64, 400)}  # batch, tokens per input, vocabulary


def matmul_flops(n: int = 2048, reps: int = 5) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t)
    return 2 * n ** 3 / statistics.median(times)


def bench(preset_name: str, engine: str, steps: int) -> dict:
    from torch.utils.flop_counter import FlopCounterMode

    b, n, v = SHAPES[preset_name]
    torch.manual_seed(0)
    cfg = preset(preset_name, engine=engine)
    model = build_model(cfg, F.normalize(torch.randn(v, 256), dim=-1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=True)
    x = torch.zeros(b, n, 640)
    x[..., :256] = F.normalize(torch.randn(b, n, 256), dim=-1)
    x[..., 256:] = torch.rand(b, n, 384).mul(2).sub(1) * (torch.rand(b, n, 384) < 0.1)
    mask = torch.ones(b, n, dtype=torch.bool)
    target = torch.randint(3, v, (b, cfg.out_positions))

    def step():
        out = model(x, mask)
        loss = F.cross_entropy(out["logits"].reshape(-1, v), target.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    step()  # warm-up (allocations, memory head filled)
    with FlopCounterMode(display=False) as counter:
        step()
    flops = counter.get_total_flops()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    sec = statistics.median(times)
    return {"preset": preset_name, "engine": engine, "params": parameter_count(model), "batch": b, "tokens": n,
            "step_ms": sec * 1e3, "tokens_per_s": b * n / sec, "gflop_per_step": flops / 1e9,
            "gflop_per_s": flops / sec / 1e9}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--presets", default="small,full")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    peer = matmul_flops()
    print(f"torch {torch.__version__}, {args.threads} thread(s); peer 2048³ matmul: {peer / 1e9:.1f} GFLOP/s")
    print(f"{'preset':<6} {'engine':<9} {'params':>11} {'step ms':>9} {'tokens/s':>10} {'GFLOP/step':>11} "
          f"{'GFLOP/s':>8} {'vs matmul':>9}")
    for name in args.presets.split(","):
        for engine in ("v22", "baseline"):
            r = bench(name, engine, args.steps)
            print(f"{r['preset']:<6} {r['engine']:<9} {r['params']:>11,} {r['step_ms']:>9.1f} {r['tokens_per_s']:>10.0f} "
                  f"{r['gflop_per_step']:>11.3f} {r['gflop_per_s']:>8.1f} {r['gflop_per_s'] * 1e9 / peer:>9.1%}")
    peer2 = matmul_flops()
    print(f"peer matmul re-measured at the end: {peer2 / 1e9:.1f} GFLOP/s (noise on a shared machine)")


if __name__ == "__main__":
    main()
