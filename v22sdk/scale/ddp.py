"""Data-parallel training on ``torch.distributed`` (gloo on CPU), started by torchrun.

    python -m torch.distributed.run --standalone --nproc_per_node 2 -m v22sdk.scale.ddp DATA --out v22.pt
    v22sdk train DATA --nproc 2          # the same, once the CLI dispatches --nproc (see scale/cli.py)

What each of the N processes (ranks) does, per optimiser step of the single-process trainer:

1. the global batch (``batch_size`` rows, the same rows in the same order as single-process
   training: same seed, same permutation) is cut into N contiguous shards; rank r runs forward and
   backward on shard r only;
2. the loss values the safeguards look at (CE and the auxiliaries) are replaced by their
   row-weighted global means (value only: ``x + (global - x).detach()``), so the spike clamp sees
   the same CE on every rank;
3. the gradients are summed across ranks in ONE flat buffer (``all_reduce``, DDP's bucketed
   all-reduce with a single bucket), each rank's weighted by its row count, then divided by the
   global row count: the update is the gradient of the whole batch's row-weighted mean loss. A
   non-finite loss or gradient on any rank makes every rank's gradient NaN, so all roll back
   together;
4. buffers (``loss_state``) and the safeguard state (self-heal factor, cool-down, EMAs) are
   broadcast from rank 0 before each step, as DDP's ``broadcast_buffers`` does.

Parameters are broadcast from rank 0 once at start. Every rank therefore holds bit-identical
parameters after every step (the 2-process test checks it). Rank 0 alone evaluates, logs and
writes the checkpoint.

Why not the ``DistributedDataParallel`` wrapper itself: the trainer skips ``backward()`` on a
non-finite loss (safeguard 4, NaN rollback); under DDP a rank that skips backward leaves the
others waiting in the gradient all-reduce forever. The trainer's ``after_backward`` hook runs on
every step, so the all-reduce here always happens on every rank.

Not identical to one process: CE is a mean over the tokens of a shard, so shards with different
token counts weight tokens slightly differently (the same holds for DDP); and each rank's
memory (stage E) holds only the turns of its own shards.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_PARTS = ("ce", "la", "lb", "lc", "ld")


def _trainer_class():
    import math

    import torch
    import torch.distributed as dist

    from ..engine.train import Trainer

    class DistributedTrainer(Trainer):
        """The engine's :class:`Trainer`, one rank of a data-parallel group (see the module doc)."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.rank, self.world = dist.get_rank(), dist.get_world_size()
            with torch.no_grad():
                for t in [*self.model.parameters(), *self.model.buffers()]:
                    dist.broadcast(t.data, src=0)
            self._n_local = 0
            self.hooks["loss"] = self._global_loss_values
            self.hooks["after_backward"] = self._all_reduce_grads
            self.snapshot_step = -(10**9)  # force the first snapshot to hold the broadcast state
            self._snapshot()

        # -- per step --------------------------------------------------------------------------
        def train_step(self, rows: Sequence[int]):
            rows = list(rows)
            bounds = [len(rows) * r // self.world for r in range(self.world + 1)]
            mine = rows[bounds[self.rank] : bounds[self.rank + 1]]
            self._n_local = len(mine)
            # A rank with no rows (a last batch smaller than the world) still takes part with zero
            # weight: it computes on one row and contributes nothing to the sums.
            self._sync_state()
            r = super().train_step(mine or rows[:1])
            flag = torch.tensor([0.0 if r is None else 1.0])
            dist.all_reduce(flag, op=dist.ReduceOp.MIN)
            if r is None or flag.item() == 0.0:
                return None
            vals = torch.tensor(
                [r[k] * self._n_local for k in ("loss", "acc")] + [float(self._n_local)], dtype=torch.float64
            )
            dist.all_reduce(vals)
            r["loss"], r["acc"] = (vals[:2] / vals[2]).tolist()
            return r

        def _sync_state(self) -> None:
            state = torch.tensor([self.aux, self.cool_down, self.ac_ema, self.ce_ema], dtype=torch.float64)
            dist.broadcast(state, src=0)
            self.aux, cd, self.ac_ema, self.ce_ema = state.tolist()
            self.cool_down = int(cd)
            with torch.no_grad():
                for b in self.model.buffers():
                    dist.broadcast(b.data, src=0)

        def _global_loss_values(self, _trainer, parts: dict) -> None:
            n = float(self._n_local)
            local = torch.stack([parts[k].detach().double().reshape(()) for k in _PARTS])
            vec = torch.cat([local * n, torch.tensor([n], dtype=torch.float64)])
            dist.all_reduce(vec)
            glob = vec[:-1] / vec[-1]
            for i, k in enumerate(_PARTS):
                parts[k] = parts[k] + (glob[i] - local[i]).to(parts[k].dtype).detach()

        def _all_reduce_grads(self, _trainer) -> None:
            params = list(self.model.parameters())
            n = float(self._n_local)
            flat = torch.cat(
                [(p.grad.reshape(-1) * n) if p.grad is not None else torch.zeros(p.numel()) for p in params]
            )
            present = torch.tensor([p.grad is not None for p in params], dtype=torch.float32)
            bad = (
                float(not all(p.grad is None or bool(torch.isfinite(p.grad).all()) for p in params))
                if any(p.grad is not None for p in params)
                else 1.0
            )  # no backward: non-finite loss
            meta = torch.cat([present, torch.tensor([n, bad])])
            dist.all_reduce(flat)
            dist.all_reduce(meta)
            total, any_bad = float(meta[-2]), float(meta[-1]) > 0
            flat /= max(total, 1.0)
            if any_bad:
                flat.fill_(math.nan)
            at = 0
            for p, pres in zip(params, meta[:-2].tolist()):
                k = p.numel()
                if pres > 0 or any_bad:
                    p.grad = flat[at : at + k].view_as(p).clone()
                at += k

    return DistributedTrainer


def _params_digest(model) -> str:
    import hashlib

    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def train(
    data: str,
    out: str,
    *,
    preset_name: str = "small",
    engine: str = "v22",
    epochs: int | None = None,
    seed: int = 0,
    sample: int | None = None,
    sets: dict[str, Any] | None = None,
    val_frac: float = 0.1,
    test_frac: float = 0.1,
    log_path: str | None = None,
    threads: int = 1,
    report: str | None = None,
) -> dict[str, Any] | None:
    """The body of one rank (inside ``torch.distributed``); rank 0 returns the metrics."""
    import torch
    import torch.distributed as dist

    from ..engine.checkpoint import save_checkpoint
    from ..engine.config import preset
    from ..engine.data import load_dataset, make_split
    from ..engine.v22 import parameter_count
    from ..engine.vocab import OutputVocab

    if threads > 0:
        torch.set_num_threads(threads)
    rank, world = dist.get_rank(), dist.get_world_size()
    cfg = preset(preset_name, engine=engine, seed=seed, **(sets or {}), **({"epochs": epochs} if epochs else {}))
    # Rank 0 tokenizes first and fills the token cache; the others then read it instead of racing on it.
    if rank == 0:
        ds = load_dataset(data, sample=sample, seed=cfg.seed)
    dist.barrier()
    if rank != 0:
        ds = load_dataset(data, sample=sample, seed=cfg.seed)
    split = make_split(ds.examples, cfg.seed, val_frac, test_frac)
    vocab = OutputVocab.build([ds.examples[i].target for i in split["train"]])
    if rank == 0 and log_path:
        Path(log_path).write_text("", encoding="utf-8")
    trainer = _trainer_class()(cfg, ds, split, vocab, log_path=log_path if rank == 0 else None)
    trainer.fit(progress=False)
    trainer._sync_state()  # buffers as rank 0 holds them (what the checkpoint stores)
    digest = _params_digest(trainer.model)
    if report:
        with open(f"{report}.rank{rank}.json", "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "rank": rank,
                    "world": world,
                    "params_sha256": digest,
                    "steps": trainer.step,
                    "history": trainer.history,
                },
                fh,
            )
    result = None
    if rank == 0:
        metrics = {name: trainer.evaluate(name) for name in ("train", "val", "test") if trainer.data[name].size}
        last = trainer.history[-1] if trainer.history else {}
        metrics.update(
            final_loss=last.get("loss"),
            epochs=last.get("epoch"),
            stopped_early=trainer.stopped_early,
            parameters=parameter_count(trainer.model),
            world_size=world,
            safeguards={"spikes": trainer.spikes, "rollbacks": trainer.rollbacks, "ac_alarms": trainer.ac_alarms},
        )
        info = {
            "source": str(Path(data).resolve()),
            "digest": ds.digest,
            "source_rel": os.path.relpath(Path(data).resolve(), Path(out).resolve().parent),
            "n": len(ds.examples),
            "modalities": sorted(set(ds.modalities)),
            "sample": sample,
        }
        save_checkpoint(
            out,
            trainer.model,
            cfg,
            vocab,
            split=split,
            data=info,
            metrics=metrics,
            history=[{k: v for k, v in h.items() if not isinstance(v, dict)} for h in trainer.history],
        )
        result = metrics
    dist.barrier()  # nobody leaves before the checkpoint exists
    return result


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m v22sdk.scale.ddp", description="one rank of v22sdk train --nproc N")
    p.add_argument("data")
    p.add_argument("--out", "-o", default="v22.pt")
    p.add_argument("--engine", default="v22")
    p.add_argument("--preset", default="small", choices=["small", "full", "tiny"])
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sample", type=int, default=None)
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--val-frac", type=float, default=0.1)
    p.add_argument("--test-frac", type=float, default=0.1)
    p.add_argument("--log", dest="log_path", default=None)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--report", default=None, help="write PREFIX.rankR.json per rank (parameter digest, history)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of each rank (``torchrun ... -m v22sdk.scale.ddp``)."""
    import torch.distributed as dist

    from ..engine.config import set_overrides
    from ..errors import V22Error

    args = _parse(argv)
    if "RANK" not in os.environ:
        print(
            "error: run under torchrun (python -m torch.distributed.run --nproc_per_node N -m v22sdk.scale.ddp ...)"
            " or use 'v22sdk train --nproc N'",
            file=sys.stderr,
        )
        return 2
    dist.init_process_group("gloo")
    try:
        metrics = train(
            args.data,
            args.out,
            preset_name=args.preset,
            engine=args.engine,
            epochs=args.epochs,
            seed=args.seed,
            sample=args.sample,
            sets=set_overrides(tuple(args.sets)),
            val_frac=args.val_frac,
            test_frac=args.test_frac,
            log_path=args.log_path,
            threads=args.threads,
            report=args.report,
        )
    except V22Error as exc:
        print(f"error (rank {dist.get_rank()}): {exc}", file=sys.stderr)
        return exc.exit_code
    finally:
        dist.destroy_process_group()
    if metrics is not None:
        print(
            json.dumps(
                {
                    "checkpoint": args.out,
                    "final_loss": metrics["final_loss"],
                    "epochs": metrics["epochs"],
                    "world_size": metrics["world_size"],
                    "test": metrics.get("test", {}).get("all"),
                }
            )
        )
    return 0


def launch(nproc: int, argv: Sequence[str], *, port: int | None = None) -> int:
    """Start ``nproc`` ranks on this machine the standard way (``torch.distributed.run``); returns its exit code."""
    import subprocess

    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", str(nproc)]
    cmd += ["--master_addr", "127.0.0.1", "--master_port", str(port)] if port else ["--standalone"]
    cmd += ["-m", "v22sdk.scale.ddp", *argv]
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
