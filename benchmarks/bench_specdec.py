"""Overhead of the exact speculative sampler per round, against one target forward pass.

Measures, with the experiment's target architecture (3 layers, d = 96, vocab 97; random weights,
timing does not depend on them) at context length 48 and gamma = 7, on CPU:

- ``target``: one target pass scoring context + 7 drafted tokens (what every round needs);
- ``verify``: the rejection step alone (acceptance, residual, resampling / bonus);
- ``round - target``: a whole ``speculative_round`` with a zero-cost draft (uniform q) minus the
  target pass, i.e. all sampler bookkeeping per round (uniforms, 7 draws from q, verify, Python);

for batch 1 (the generation loop) and batch 64 (``speculative_round_batch``). Prints medians and
the ratios overhead / target pass. Run: ``python benchmarks/bench_specdec.py [--threads N]``
(``--json results/benchmarks/bench_specdec.json`` also writes the figures there, for the docs).
Figures are noisy on a shared machine; the ratio is the figure to quote.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path


def _median_s(fn, repeats: int) -> float:
    for _ in range(max(repeats // 10, 3)):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as a result file here")
    args = ap.parse_args()
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at

    import torch

    from v22sdk.specdec.models import CharTransformer, TargetConfig, TransformerTarget
    from v22sdk.specdec.sampler import speculative_round, speculative_round_batch, verify
    from v22sdk.specdec.toy import UniformDraft

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cfg = TargetConfig()
    model = CharTransformer(cfg).eval()
    target = TransformerTarget(model)
    gamma, ctx_len, vocab = 7, 48, cfg.vocab
    print(
        f"torch {torch.__version__}, threads {args.threads}, gamma {gamma}, context {ctx_len}, vocab {vocab}, "
        f"target params {sum(p.numel() for p in model.parameters())}"
    )
    print(
        f"{'batch':>5} {'target pass':>12} {'verify':>10} {'round-target':>13} {'verify/target':>14} "
        f"{'overhead/target':>16}"
    )
    figures = {}
    for bsz in (1, 64):
        g = torch.Generator().manual_seed(1)
        ctx = torch.randint(0, vocab, (bsz, ctx_len))
        drafted = torch.randint(0, vocab, (bsz, gamma))
        p = target.distributions(ctx, drafted, 1.0)
        q = torch.full((bsz, gamma, vocab), 1.0 / vocab, dtype=torch.float64)
        u_acc = torch.rand(bsz, gamma, dtype=torch.float64)
        u_next = torch.rand(bsz, dtype=torch.float64)
        draft = UniformDraft(vocab)
        t_target = _median_s(lambda: target.distributions(ctx, drafted, 1.0), args.repeats)
        t_verify = _median_s(lambda: verify(p, q, drafted, u_acc, u_next), args.repeats)
        if bsz == 1:
            t_round = _median_s(lambda: speculative_round(target, draft, ctx, gamma, 1.0, g), args.repeats)
        else:
            t_round = _median_s(lambda: speculative_round_batch(target, draft, ctx, gamma, 1.0, g), args.repeats)
        # signed: a round measured faster than the target pass alone (overhead below the medians'
        # noise, as at large batches) is reported as such, not clipped to a precise-looking zero
        overhead = t_round - t_target
        figures[bsz] = {"target_s": t_target, "verify_s": t_verify, "round_s": t_round, "overhead_s": overhead}
        print(
            f"{bsz:>5} {1e3 * t_target:>10.3f}ms {1e3 * t_verify:>8.3f}ms {1e3 * overhead:>11.3f}ms "
            f"{t_verify / t_target:>14.3f} {overhead / t_target:>16.3f}"
        )

    if args.json:
        from v22sdk.evidence import write_result

        def ms(x: float) -> str:
            return f"{1e3 * x:.2f} ms" if x < 0.1 else f"{1e3 * x:.0f} ms"

        write_result(
            args.json,
            {str(k): v for k, v in figures.items()}
            | {"repeats": args.repeats, "gamma": gamma, "context": ctx_len, "threads": args.threads},
            tables={
                "summary": {
                    "columns": [
                        "batch",
                        "one target pass",
                        "`verify`",
                        "whole round minus target pass",
                        "verify / target",
                        "sampler overhead / target",
                    ],
                    "align": "rrrrrr",
                    "rows": [
                        [
                            str(b),
                            ms(f["target_s"]),
                            ms(f["verify_s"]),
                            ms(f["overhead_s"]),
                            f"{f['verify_s'] / f['target_s']:.3f}",
                            f"{f['overhead_s'] / f['target_s']:.2f}",
                        ]
                        for b, f in figures.items()
                    ],
                }
            },
            values={"loadavg": f"{os.getloadavg()[0]:.1f}"},
        )


if __name__ == "__main__":
    main()
