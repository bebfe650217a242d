"""Train-and-save and evaluate-a-checkpoint: the bodies of ``v22sdk train`` and ``v22sdk eval``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CheckpointError, InputError, OutputError
from .checkpoint import load_checkpoint, save_checkpoint
from .config import EngineConfig
from .data import load_dataset, make_split, read_examples, read_sharded
from .vocab import OutputVocab


def train_engine(
    source,
    cfg: EngineConfig,
    out: str | Path,
    *,
    registry=None,
    sample: int | None = None,
    val_frac: float = 0.1,
    test_frac: float = 0.1,
    log_path=None,
    progress: bool = False,
    use_text_plugin: bool = True,
    cache: bool = True,
    hooks=None,
    on_epoch: Callable | None = None,
    storage: str = "float32",
    modality: str | None = None,
    sources: list[dict] | None = None,
    keep_best: bool = False,
    eval_every: int = 10,
) -> dict[str, Any]:
    """Read, tokenize, split, train, evaluate on every split, calibrate, save; returns the metrics.

    ``modality`` reads the files of a folder data set and the manifest lines that name none
    (needed when several modalities read one extension). ``out`` and ``log_path`` are checked
    (:func:`v22sdk._io.check_output_path`) before anything else is done. With a validation split
    the checkpoint also gets its calibration and open-set statistics (:func:`fit_confidence`).
    ``sources`` (name, version, licence … of each source the data came from) is stored with the
    checkpoint's data description, for ``v22sdk run --knows``. ``keep_best`` keeps the state with
    the best validation exact match (evaluated every ``eval_every`` epochs) instead of the last.
    """
    from .._io import check_output_path
    from ..plugins import get_registry
    from .fidelity import fit_floors
    from .train import Trainer
    from .v22 import parameter_count

    check_output_path(out)
    if log_path:
        check_output_path(log_path)
    ds = load_dataset(source, registry, sample=sample, seed=cfg.seed, cache=cache, modality=modality)
    split = make_split(ds.examples, cfg.seed, val_frac, test_frac)
    # the output vocabulary comes from the training targets only: held-out characters map to <unk>
    vocab = OutputVocab.build([ds.examples[i].target for i in split["train"]], use_text_plugin=use_text_plugin)
    if log_path:
        try:
            Path(log_path).write_text("", encoding="utf-8")
        except OSError as exc:
            raise OutputError(str(log_path), exc.strerror or str(exc)) from None
    trainer = Trainer(cfg, ds, split, vocab, hooks=hooks, log_path=log_path)
    trainer.fit(progress=progress, on_epoch=on_epoch, keep_best=keep_best, eval_every=eval_every)
    metrics: dict[str, Any] = {
        name: trainer.evaluate(name) for name in ("train", "val", "test") if trainer.data[name].size
    }
    last = trainer.history[-1] if trainer.history else {}
    metrics["final_loss"] = last.get("loss")
    metrics["epochs"] = last.get("epoch")
    metrics["stopped_early"] = trainer.stopped_early
    if keep_best:
        metrics["best_epoch"] = trainer.best_epoch
    metrics["parameters"] = parameter_count(trainer.model)
    metrics["safeguards"] = {"spikes": trainer.spikes, "rollbacks": trainer.rollbacks, "ac_alarms": trainer.ac_alarms}
    metrics["unreachable"] = unreachable_targets(ds, split, vocab, cfg.out_positions)
    confidence = fit_confidence(trainer.model, trainer.data, vocab)
    if confidence:
        metrics["calibration"] = {k: v for k, v in confidence["calibration"].items() if k != "method"}
    import os

    data = {
        "source": str(Path(source).resolve()),
        "digest": ds.digest,
        "identity": ds.identity,
        # relative to the checkpoint too, so a checkpoint shipped next to its data finds it anywhere
        "source_rel": os.path.relpath(Path(source).resolve(), Path(out).resolve().parent),
        "n": len(ds.examples),
        "modalities": sorted(set(ds.modalities)),
        "sample": sample,
        "modality": modality,
        "labels": training_labels(trainer.data["train"]),
        "sources": list(sources or []),
        "fidelity_floors": fit_floors([ds.batches[i] for i in split["train"]], registry or get_registry()),
    }
    save_checkpoint(
        out,
        trainer.model,
        cfg,
        vocab,
        split=split,
        data=data,
        metrics=metrics,
        history=[{k: v for k, v in h.items() if not isinstance(v, dict)} for h in trainer.history],
        storage=storage,
        calibration=confidence.get("calibration"),
        open_set=confidence.get("open_set"),
    )
    return {"metrics": metrics, "trainer": trainer, "dataset": ds, "split": split, "vocab": vocab}


def training_labels(train) -> dict[str, list[str]]:
    """Per modality, the distinct targets of a training split (what the checkpoint can answer)."""
    out: dict[str, set[str]] = {}
    for mod, text in zip(getattr(train, "modalities", []), getattr(train, "texts", [])):
        out.setdefault(mod, set()).add(text)
    return {m: sorted(v) for m, v in sorted(out.items())}


def split_features(model, data, vocab: OutputVocab, calibration: dict | None = None) -> dict[str, Any]:
    """One forward pass over a split: the open-set features (:func:`~v22sdk.engine.openset.features_of`),
    the decoded answers, whether each is right, ``targets``, ``labels`` (the target texts) and
    ``modalities``; and ``confidence`` under ``calibration`` when given."""
    from .calibration import calibrated_confidence, string_confidence
    from .openset import features_of
    from .train import collect_outputs

    out = collect_outputs(model, data)
    ids, raw = string_confidence(out["logits"])
    decoded = [vocab.decode(row) for row in ids.tolist()]
    feats = features_of(out, data.tokens, data.mask, raw, decoded)
    feats["correct"] = [d == gold for d, gold in zip(decoded, data.texts)]
    feats.update(targets=data.targets.numpy(), labels=list(data.texts), modalities=list(data.modalities))
    if calibration:
        feats["confidence"] = calibrated_confidence(feats["logits"], calibration, feats["modalities"])
    return feats


def fit_confidence(
    model, data: dict, vocab: OutputVocab, *, calibration: str = "global", open_set: str = "mahalanobis(sent_vec)"
) -> dict[str, Any]:
    """The checkpoint's calibration and open-set scorer, or ``{}`` without a validation split.

    Calibration (:func:`~v22sdk.engine.calibration.fit_calibration`, method ``calibration``) is
    fitted on the validation split, with its expected calibration error before and after. The
    open-set scorer ``open_set`` (:data:`~v22sdk.engine.openset.CANDIDATES`) is fitted on the
    training split, each modality's threshold the 95 % quantile of its validation scores.
    """
    import numpy as np

    from .calibration import expected_calibration_error, fit_calibration
    from .openset import fit_scorer

    train, val = data.get("train"), data.get("val")
    if val is None or not val.size or train is None or not train.size:
        return {}
    v = split_features(model, val, vocab)
    fitted = fit_calibration(calibration, v["logits"], v["correct"], v["targets"], v["modalities"])
    raw = v["confidence"]
    v = split_features(model, val, vocab, fitted)
    correct = np.array(v["correct"])
    cal = {
        "method": "temperature",
        "objective": calibration,
        **fitted,
        "split": "val",
        "n": int(val.size),
        "val_accuracy": float(correct.mean()),
        "val_ece_before": expected_calibration_error(raw, correct),
        "val_ece_after": expected_calibration_error(v["confidence"], correct),
    }
    t = split_features(model, train, vocab, fitted)
    scorer = fit_scorer(open_set, t, t["labels"], t["modalities"])
    scores, _ = scorer.score(v, v["modalities"])
    scorer.set_thresholds(scores, v["modalities"])
    return {"calibration": cal, "open_set": scorer.to_state()}


def unreachable_targets(ds, split: dict[str, list[int]], vocab: OutputVocab, out_positions: int) -> dict[str, dict]:
    """Per held-out split, what makes its figures mean less than they seem: targets with a character
    that no training target has (it decodes as <unk>: no model can match them), targets longer
    than the decoder's ``out_positions − 1`` characters (scored on that prefix), and inputs that
    are byte-identical to a training example's (``in_train``: not held out at all)."""
    from .vocab import normalise

    digests = ds.contents
    seen = {digests[i] for i in split.get("train", [])}
    out = {}
    for name in ("val", "test"):
        unseen = truncated = in_train = 0
        for i in split.get(name, []):
            target = normalise(ds.examples[i].target)
            unseen += any(c not in vocab.index for c in target)
            truncated += len(target) > out_positions - 1
            in_train += digests[i] in seen
        out[name] = {
            "n": len(split.get(name, [])),
            "unseen_chars": unseen,
            "truncated": truncated,
            "in_train": in_train,
        }
    return out


def evaluate_checkpoint(
    checkpoint, source=None, *, split: str | None = None, registry=None, modality: str | None = None
) -> dict[str, Any]:
    """Metrics of a checkpoint on a split of its own data set (default ``test``) or on all of ``source``.

    Refused before anything is tokenized: a split with no examples, and data of a modality the
    checkpoint was not trained on (it would answer with confident garbage).
    """
    from .train import Split, evaluate

    model, cfg, vocab, doc = load_checkpoint(checkpoint)
    data_info = doc.get("data", {})
    modality = modality or data_info.get("modality")
    if source is None:
        source = recorded_source(checkpoint, data_info)
        if not source or not Path(source).exists():
            raise CheckpointError(f"checkpoint {checkpoint} was trained on {source!r}, which is not here; pass DATA")
        split = split or "test"
        indices = list(range(data_info.get("n", 0))) if split == "all" else doc["split"][split]
        if not indices:
            sizes = ", ".join(f"{len(doc['split'].get(s, []))} {s}" for s in ("train", "val", "test"))
            raise InputError(
                str(checkpoint),
                f"the {split} split of checkpoint {checkpoint} is empty "
                f"({data_info.get('n', '?')} examples: {sizes}); nothing to evaluate",
            )
        ds = load_dataset(source, registry, sample=data_info.get("sample"), seed=cfg.seed, modality=modality)
        # the examples' identity, not the token digest: a tokenizer edit must not orphan every split
        # (checkpoints written before the identity was recorded can only compare the token digest)
        same = (
            (ds.identity == data_info["identity"])
            if "identity" in data_info
            else (ds.digest == data_info.get("digest"))
        )
        if not same:
            raise CheckpointError(
                f"the data set {source} changed since checkpoint {checkpoint} was trained "
                "(its recorded split no longer applies); pass DATA to evaluate on all of it"
            )
    else:
        _check_modalities(source, _modalities_of(source, registry, modality), checkpoint, data_info)
        ds = load_dataset(source, registry, seed=cfg.seed, modality=modality)
        split = split or "all"
        indices = list(range(len(ds.examples))) if split == "all" else make_split(ds.examples, cfg.seed)[split]
        if not indices:
            raise InputError(
                str(source),
                f"its {split} split is empty ({len(ds.examples)} examples); nothing to evaluate (try --split all)",
            )
    result = evaluate(model, Split(ds, indices, cfg, vocab), vocab)
    return {"checkpoint": str(checkpoint), "data": str(source), "split": split, "engine": cfg.engine, "metrics": result}


def recorded_source(checkpoint, data_info: dict[str, Any]) -> str | None:
    """The data set a checkpoint was trained on: its recorded path, or else the path recorded relative
    to the checkpoint (a checkpoint shipped next to its data); None when it records neither."""
    source = data_info.get("source")
    rel = data_info.get("source_rel")
    if (not source or not Path(source).exists()) and rel and (Path(checkpoint).resolve().parent / rel).exists():
        source = str(Path(checkpoint).resolve().parent / rel)
    return source


def _modalities_of(source, registry, modality: str | None) -> list[str]:
    """The modality of every example of ``source``, read without tokenizing anything."""
    if (Path(source) / "manifest.json").is_file():  # tokenized shards: their items name their modality
        return [ex.modality for ex in read_sharded(source)[0]]
    return [ex.modality for ex in read_examples(source, registry, modality=modality)]


def _check_modalities(source, modalities: list[str], checkpoint, data_info: dict[str, Any]) -> None:
    """InputError when ``source`` holds a modality the checkpoint was not trained on."""
    trained = data_info.get("modalities")
    if not trained:  # a checkpoint that does not record them: nothing to compare with
        return
    foreign = sorted(set(modalities) - set(trained))
    if foreign:
        n = sum(m in foreign for m in modalities)
        raise InputError(
            str(source),
            f"holds {', '.join(foreign)} input ({n} of {len(modalities)} examples), but "
            f"checkpoint {checkpoint} was trained on {', '.join(trained)} only",
        )


def write_plot(history: list[dict[str, Any]], path: str | Path) -> Path:
    """The loss curves (total, CE and the auxiliaries) by epoch, as PNG, PDF or SVG (from the suffix),
    written through :func:`v22sdk._io.atomic_output`."""
    import matplotlib

    from .._io import atomic_output

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    epochs = [h["epoch"] for h in history]
    for key, label in (("loss", "total"), ("ce", "CE"), ("la", "L_A"), ("lb", "L_B"), ("lc", "L_C"), ("ld", "L_D")):
        ys = [h.get(key) for h in history]
        if any(y is not None and y > 0 for y in ys):
            ax.plot(epochs, [max(y, 1e-8) if y is not None else float("nan") for y in ys], label=label)
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss")
    ax.legend()
    fig.tight_layout()
    fmt = Path(path).suffix.lower().lstrip(".") or "png"
    try:
        with atomic_output(path, "wb") as fh:
            fig.savefig(fh, dpi=100, format=fmt)
    finally:
        plt.close(fig)
    return Path(path)


def metrics_table(metrics: dict[str, Any]) -> list[tuple[str, str, float, float, int]]:
    """Rows (split, modality, exact, char, n) of a metrics dict."""
    rows = []
    for split in ("train", "val", "test", "all"):
        for mod, m in (metrics.get(split) or {}).items():
            if isinstance(m, dict):
                rows.append((split, mod, m["exact"], m["char"], m["n"]))
    return rows


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2)
