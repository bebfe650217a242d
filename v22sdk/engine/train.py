"""Training and evaluation of an engine (spec §7), with upstream's safeguards made testable.

Loss: ``CE + aux·(w_a·L_A + w_b·L_B + w_c·L_C + w_d·L_D)`` (each auxiliary switchable), where
``aux`` is the self-heal factor. Upstream's MasterGate is left out on purpose: it was trained on
the same total it weighted, so its optimum was to switch the auxiliaries off (spec §7.1).

Safeguards (each has a test that injects its fault):

1. *ac explosion*: ‖ac‖ > 3·EMA(‖ac‖) starts a cool-down of ≥ 30 steps;
2. *CE spike clamp*: CE > max(3·EMA(CE), spike_floor) clamps CE to spike_floor for that step
   (no gradient from the spike) and starts a cool-down of ≥ 50 steps;
3. *progressive self-heal*: during a cool-down aux ← max(0.2, 0.95·aux), otherwise
   aux ← min(1, 1.01·aux);
4. *NaN rollback*: a non-finite loss or gradient (any parameter) restores the last good model,
   optimiser and memory state held in RAM (a snapshot taken at the end of a clean epoch, at
   most every 20 steps) and skips the step;
5. *auto-stop*: training stops when an epoch's mean loss falls below ``stop_loss``.
"""

from __future__ import annotations

import copy
import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeGuard

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..errors import EngineOutputError
from .config import EngineConfig
from .data import Dataset, to_tensors
from .memory_head import MemoryHead
from .v22 import build_model
from .vocab import PAD, OutputVocab, normalise


class Split:
    """Tensors of one split: tokens, mask, targets and aux targets, indexed like ``indices``."""

    def __init__(self, ds: Dataset, indices: Sequence[int], cfg: EngineConfig, vocab: OutputVocab):
        self.indices = list(indices)
        self.size = len(self.indices)
        if not self.size:
            return
        self.tokens, self.mask = to_tensors([ds.batches[i] for i in self.indices], cfg.max_len)
        self.targets = torch.from_numpy(
            np.stack([vocab.encode(ds.examples[i].target, cfg.out_positions) for i in self.indices])
        )
        sel = np.array(self.indices)
        self.a = torch.from_numpy(ds.aux.a[sel])
        self.c = torch.from_numpy(ds.aux.c[sel])
        self.c_mask = torch.from_numpy(ds.aux.c_mask[sel])
        self.d = torch.from_numpy(ds.aux.d[sel])
        self.attr_sets = [ds.attr_sets[i] for i in self.indices] if ds.attr_sets else None
        self.modalities = [ds.examples[i].modality for i in self.indices]
        self.texts = [normalise(ds.examples[i].target)[: cfg.out_positions - 1] for i in self.indices]

    def take(self, rows: Sequence[int]) -> dict[str, Any]:
        idx = torch.as_tensor(list(rows), dtype=torch.long)
        return {
            "tokens": self.tokens[idx],
            "mask": self.mask[idx],
            "targets": self.targets[idx],
            "a": self.a[idx],
            "c": self.c[idx],
            "c_mask": self.c_mask[idx],
            "d": self.d[idx],
            "attr_sets": [self.attr_sets[i] for i in idx.tolist()] if self.attr_sets else None,
        }


def aux_losses(out: dict[str, torch.Tensor], batch: dict[str, Any], cfg: EngineConfig) -> dict[str, torch.Tensor]:
    """L_A, L_B, L_C, L_D of one batch (zero where switched off, absent or fully masked)."""
    zero = out["logits"].new_zeros(())
    parts = {"la": zero, "lb": zero, "lc": zero, "ld": zero}
    if "ct" not in out:  # the baseline has no ABCD stages
        return parts
    if cfg.loss_a and (batch["a"] >= 0).any():
        parts["la"] = F.cross_entropy(out["a_logits"], batch["a"], ignore_index=-1)
    if cfg.loss_b:
        m = (out["attr_mean"].abs() > 0).any(0).to(out["ct"].dtype)  # slots active in the batch
        parts["lb"] = F.mse_loss(out["ct"] * m, out["attr_mean"].detach() * m).clamp(max=10.0)
    if cfg.loss_c and batch["c_mask"].sum() > 0:
        k = batch["c"].shape[1]
        err = ((out["ac"][:, :k] - batch["c"]) ** 2).mean(1)
        parts["lc"] = ((err * batch["c_mask"]).sum() / batch["c_mask"].sum()).clamp(max=10.0)
    if cfg.loss_d and (batch["d"] >= 0).any():
        parts["ld"] = F.cross_entropy(out["rel_logits"], batch["d"], ignore_index=-1)
    return parts


def _clone_state(obj) -> Any:
    """A deep copy of a state dict (tensors cloned; much faster than copy.deepcopy)."""

    def clone(x):
        if isinstance(x, torch.Tensor):
            return x.detach().clone()
        if isinstance(x, dict):
            return {k: clone(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clone(v) for v in x]
        return copy.copy(x)

    return clone(obj.state_dict())


class EngineModel(Protocol):
    """What training uses of an engine's model besides ``nn.Module`` (``v22sdk/engine/plugin.py``
    says what an engine from another distribution provides): its optimiser groups, the loss-state
    input, its memory head (None without one), and ``aux``, the self-heal factor that the trainer
    sets before each step (a model may ignore it)."""

    aux: float

    @property
    def memory(self) -> MemoryHead | None: ...

    def stage_groups(self) -> dict[str, list[nn.Parameter]]: ...

    def update_loss_state(self, accuracy: float, ce: float) -> None: ...


def is_engine_model(model: nn.Module) -> TypeGuard[EngineModel]:
    """Whether ``model`` has what :class:`EngineModel` names (``aux`` is the trainer's to set)."""
    return (
        callable(getattr(model, "stage_groups", None))
        and callable(getattr(model, "update_loss_state", None))
        and hasattr(model, "memory")
    )


def _memory_state(mem: MemoryHead | None) -> dict | None:
    """A copy of the memory head's own state (FifoMemory has one; a store-backed memory keeps its
    turns in its store), for a rollback."""
    return copy.deepcopy(mem.state_dict()) if mem is not None and hasattr(mem, "state_dict") else None


def _restore_memory(mem: MemoryHead | None, state: dict | None) -> None:
    if state is not None and mem is not None and hasattr(mem, "load_state_dict"):
        mem.load_state_dict(copy.deepcopy(state))


class Trainer:
    """Fits one engine on a data set's train split; evaluates any split.

    ``hooks`` maps an event to a callable, for fault injection in tests and for logging:
    ``"loss"(trainer, parts)`` may change the loss parts before the safeguards look at them;
    ``"after_backward"(trainer)`` may change gradients before the NaN check.
    """

    def __init__(
        self,
        cfg: EngineConfig,
        ds: Dataset,
        split: dict[str, list[int]],
        vocab: OutputVocab,
        *,
        hooks: dict[str, Callable] | None = None,
        log_path: str | Path | None = None,
    ):
        torch.manual_seed(cfg.seed)
        self.cfg, self.ds, self.split, self.vocab = cfg, ds, split, vocab
        self.model = model = build_model(cfg, torch.from_numpy(vocab.embeddings))
        if not is_engine_model(model):
            from ..errors import InputError

            raise InputError(
                f"engine {cfg.engine!r}",
                "its model lacks stage_groups(), update_loss_state() or memory (see v22sdk/engine/plugin.py)",
            )
        self.engine: EngineModel = model
        groups = self.engine.stage_groups()
        self.opt = torch.optim.Adam(
            [
                {"params": ps, "lr": cfg.lr * cfg.lr_mult.get(name, 1.0), "name": name}
                for name, ps in groups.items()
                if ps
            ],
            fused=True,
        )
        self.data = {name: Split(ds, idx, cfg, vocab) for name, idx in split.items()}
        self.hooks = hooks or {}
        self.log_path = Path(log_path) if log_path else None
        self.history: list[dict[str, Any]] = []
        self.step = 0
        self.ce_ema, self.ac_ema, self.cool_down, self.aux = 8.0, 1.0, 0, 1.0
        self.spikes = self.rollbacks = self.ac_alarms = 0
        self.stopped_early = False
        self.snapshot_every = 20  # steps between in-memory snapshots of the last good state
        self._snapshot()

    # -- safeguard state ---------------------------------------------------------------------
    def _snapshot(self) -> None:
        """Hold the last good state in memory (model, optimiser, memory head)."""
        self.snapshot_step = self.step
        self.good = (_clone_state(self.model), _clone_state(self.opt), _memory_state(self.engine.memory))

    def _rollback(self) -> None:
        model_state, opt_state, mem_state = self.good
        self.model.load_state_dict(model_state)
        self.opt.load_state_dict(opt_state)
        _restore_memory(self.engine.memory, mem_state)
        self.opt.zero_grad(set_to_none=True)
        self.rollbacks += 1

    def _grad_norm(self) -> float:
        """Total gradient norm (NaN/inf when any gradient is), clipped to ``clip_grad`` when finite."""
        grads = [p.grad for p in self.model.parameters() if p.grad is not None]
        if not grads:
            return 0.0
        norm = float(torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads))))
        if math.isfinite(norm) and self.cfg.clip_grad > 0 and norm > self.cfg.clip_grad:
            torch._foreach_mul_(grads, self.cfg.clip_grad / (norm + 1e-6))
        return norm

    # -- one step ----------------------------------------------------------------------------
    def train_step(self, rows: Sequence[int]) -> dict[str, float] | None:
        """One optimiser step on train rows; None when the step was rolled back."""
        cfg, model = self.cfg, self.model
        model.train()
        self.engine.aux = self.aux
        batch = self.data["train"].take(rows)
        out = model(batch["tokens"], batch["mask"], batch["attr_sets"])
        if self.step == 0:  # fail before training, not after it, when a plugin engine lacks an output
            val = self.data.get("val")
            require_outputs(
                model, out, ("logits", "sent_vec") if val is not None and val.size else ("logits",), cfg.engine
            )
        logits = out["logits"]
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch["targets"].reshape(-1), ignore_index=PAD)
        parts = {"ce": ce, **aux_losses(out, batch, cfg)}
        if "loss" in self.hooks:
            self.hooks["loss"](self, parts)
        ce_val = float(parts["ce"].detach())
        spike = math.isfinite(ce_val) and ce_val > max(3.0 * self.ce_ema, cfg.spike_floor)
        if spike:
            self.spikes += 1
            self.cool_down = max(self.cool_down, 50)
            parts["ce"] = parts["ce"].clamp(max=cfg.spike_floor)
        if math.isfinite(ce_val):
            self.ce_ema = 0.9 * self.ce_ema + 0.1 * min(ce_val, cfg.spike_floor if spike else ce_val)
        if "ac" in out:
            acn = float(out["ac"].detach().norm(dim=-1).mean())
            if math.isfinite(acn):
                if acn > 3.0 * self.ac_ema:
                    self.ac_alarms += 1
                    self.cool_down = max(self.cool_down, 30)
                self.ac_ema = 0.95 * self.ac_ema + 0.05 * acn
        if self.cool_down > 0:
            self.aux = max(0.2, self.aux * 0.95)
            self.cool_down -= 1
        else:
            self.aux = min(1.0, self.aux * 1.01)
        total = parts["ce"] + self.aux * (
            cfg.w_a * parts["la"] + cfg.w_b * parts["lb"] + cfg.w_c * parts["lc"] + cfg.w_d * parts["ld"]
        )
        self.opt.zero_grad(set_to_none=True)
        if torch.isfinite(total):
            total.backward()
        if "after_backward" in self.hooks:
            self.hooks["after_backward"](self)
        self.step += 1
        if not torch.isfinite(total) or not math.isfinite(self._grad_norm()):
            self._rollback()
            return None
        self.opt.step()
        with torch.no_grad():
            valid = batch["targets"] != PAD
            acc = float(((logits.argmax(-1) == batch["targets"]) & valid).sum() / valid.sum().clamp_min(1))
        self.engine.update_loss_state(acc, ce_val)
        return {
            "loss": float(total.detach()),
            "ce": ce_val,
            "acc": acc,
            "spike": spike,
            **{k: float(v.detach()) for k, v in parts.items() if k != "ce"},
        }

    # -- the loop ----------------------------------------------------------------------------
    def fit(
        self,
        epochs: int | None = None,
        *,
        progress: bool = False,
        eval_every: int = 10,
        on_epoch: Callable[[dict], None] | None = None,
        keep_best: bool = False,
    ) -> list[dict[str, Any]]:
        """Train for ``epochs`` (auto-stop may end sooner), evaluating the validation split every
        ``eval_every`` epochs. ``keep_best``: at the end, restore the evaluated state with the best
        validation exact match (character accuracy breaks ties; ``self.best_epoch`` says which),
        so a late divergence is not what is kept."""
        cfg = self.cfg
        best: tuple | None = None
        self.best_epoch = None
        epochs = cfg.epochs if epochs is None else epochs
        train = self.data["train"]
        if not train.size:
            from ..errors import InputError

            raise InputError("<data set>", "the train split is empty")
        bar = _progress(progress)
        task = bar.add_task("training", total=epochs) if bar else None
        start = time.perf_counter()
        try:
            for epoch in range(1, epochs + 1):
                order = np.random.default_rng(cfg.seed + epoch).permutation(train.size)
                losses, clean = [], True
                for s in range(0, train.size, cfg.batch_size):
                    r = self.train_step(order[s : s + cfg.batch_size].tolist())
                    if r is None:
                        clean = False
                    else:
                        losses.append(r)
                mean = (
                    {k: float(np.mean([r[k] for r in losses])) for k in ("loss", "ce", "acc", "la", "lb", "lc", "ld")}
                    if losses
                    else {"loss": float("nan")}
                )
                rec: dict[str, Any] = {
                    "epoch": epoch,
                    "step": self.step,
                    **mean,
                    "aux": self.aux,
                    "cool_down": self.cool_down,
                    "spikes": self.spikes,
                    "rollbacks": self.rollbacks,
                    "ac_alarms": self.ac_alarms,
                    "seconds": round(time.perf_counter() - start, 3),
                }
                if clean and losses and self.step - self.snapshot_step >= self.snapshot_every:
                    self._snapshot()
                done = bool(losses) and mean["loss"] < cfg.stop_loss
                if (
                    self.data.get("val")
                    and self.data["val"].size
                    and (epoch % eval_every == 0 or done or epoch == epochs)
                ):
                    rec["val"] = self.evaluate("val")["all"]
                    key = (rec["val"]["exact"], rec["val"]["char"])
                    if keep_best and (best is None or key > best[0]):
                        best = (key, epoch, _clone_state(self.model), _memory_state(self.engine.memory))
                self._log(rec)
                if on_epoch:
                    on_epoch(rec)
                if bar:
                    bar.update(task, advance=1, description=f"loss {rec['loss']:.4g}")
                if done:
                    self.stopped_early = True
                    break
        finally:
            if bar:
                bar.stop()
        if best is not None:
            _, self.best_epoch, state, mem_state = best
            self.model.load_state_dict(state)
            _restore_memory(self.engine.memory, mem_state)
        return self.history

    def _log(self, rec: dict[str, Any]) -> None:
        self.history.append(rec)
        if self.log_path:
            try:
                with open(self.log_path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            except OSError as exc:  # a full disk, a removed folder: name the log, not a traceback
                from ..errors import OutputError

                raise OutputError(str(self.log_path), exc.strerror or str(exc)) from None

    def evaluate(self, split: str = "test") -> dict[str, dict[str, float]]:
        return evaluate(self.model, self.data[split], self.vocab)


def _progress(enabled: bool):
    if not enabled:
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    bar.start()
    return bar


@torch.no_grad()
def forward_eval(
    model, tokens: torch.Tensor, mask: torch.Tensor, attr_sets=None, write_memory: bool = True
) -> dict[str, torch.Tensor]:
    """The model's outputs in eval mode (``logits``, ``sent_vec``, ...), stage E writing to its
    memory only if ``write_memory``."""
    model.eval()
    stage_e = getattr(model, "stage_e", None)
    old = stage_e.write_enabled if stage_e is not None else None
    if stage_e is not None:
        stage_e.write_enabled = write_memory
    try:
        return model(tokens, mask, attr_sets)
    finally:
        if stage_e is not None:
            stage_e.write_enabled = old


def decode(logits: torch.Tensor, vocab: OutputVocab, temperature: float = 1.0) -> tuple[list[str], list[float]]:
    """Decoded texts and confidences: the probability of each decoded string, the product of its
    characters' and its ``<eos>``'s probabilities after dividing the logits by ``temperature``
    (the checkpoint's calibration; see :mod:`v22sdk.engine.calibration`)."""
    prob = torch.softmax(logits.float() / temperature, -1)
    p, ids = prob.max(-1)  # (B, P)
    texts, confs = [], []
    for row_ids, row_p in zip(ids.tolist(), p.tolist()):
        text = vocab.decode(row_ids)
        n = min(len(text) + 1, len(row_ids))
        texts.append(text)
        confs.append(float(np.prod(row_p[:n])))
    return texts, confs


@torch.no_grad()
def predict(
    model,
    tokens: torch.Tensor,
    mask: torch.Tensor,
    vocab: OutputVocab,
    attr_sets=None,
    write_memory: bool = True,
    temperature: float = 1.0,
) -> tuple[list[str], list[float]]:
    """Decoded texts and confidences (:func:`decode`) of one batch."""
    return decode(forward_eval(model, tokens, mask, attr_sets, write_memory)["logits"], vocab, temperature)


#: what reads each output of an engine's forward pass beyond ``logits`` (docs/engine.md, "Engines as plugins")
OUTPUT_NEEDED_FOR = {
    "logits": "training and decoding",
    "sent_vec": "fitting calibration and the open set after training (any run with a validation split) and "
    "the familiarity score of v22sdk run",
}


def require_outputs(model, out: dict, keys: Sequence[str], engine: str | None = None) -> None:
    """Raise :class:`~v22sdk.errors.EngineOutputError` naming the first of ``keys`` that the
    forward pass ``out`` of ``model`` (of the engine named ``engine``) lacks."""
    for k in keys:
        if k not in out:
            engine = engine or getattr(getattr(model, "cfg", None), "engine", None) or type(model).__name__
            raise EngineOutputError(engine, k, OUTPUT_NEEDED_FOR.get(k, "the SDK"), out.keys())


def collect_outputs(
    model, data: Split, keys: Sequence[str] = ("logits", "sent_vec"), batch_size: int = 64
) -> dict[str, torch.Tensor]:
    """The named outputs of every example of a split, in order (memory read, not written)."""
    parts: dict[str, list[torch.Tensor]] = {k: [] for k in keys}
    for s in range(0, data.size, batch_size):
        b = data.take(range(s, min(s + batch_size, data.size)))
        out = forward_eval(model, b["tokens"], b["mask"], b["attr_sets"], write_memory=False)
        require_outputs(model, out, keys)
        for k in keys:
            parts[k].append(out[k].float())
    return {k: torch.cat(v) for k, v in parts.items()}


def evaluate(model, data: Split, vocab: OutputVocab, batch_size: int = 64) -> dict[str, dict[str, float]]:
    """Exact match and character accuracy (right character at the right position, over the
    target's length) per modality and over all (``"all"``). Memory is read, not written, so that
    each example's result does not depend on the order of evaluation."""
    if not data.size:
        return {}
    preds: list[str] = []
    for s in range(0, data.size, batch_size):
        b = data.take(range(s, min(s + batch_size, data.size)))
        preds += predict(model, b["tokens"], b["mask"], vocab, b["attr_sets"], write_memory=False)[0]
    rows: dict[str, list[tuple[float, float]]] = {}
    for pred, gold, mod in zip(preds, data.texts, data.modalities):
        exact = float(pred == gold)
        chars = sum(1 for a, b in zip(pred, gold) if a == b) / max(len(gold), 1)
        rows.setdefault(mod, []).append((exact, chars))
        rows.setdefault("all", []).append((exact, chars))
    return {
        m: {"exact": float(np.mean([r[0] for r in v])), "char": float(np.mean([r[1] for r in v])), "n": len(v)}
        for m, v in rows.items()
    }
