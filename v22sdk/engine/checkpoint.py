"""Checkpoints: one ``torch.save`` file of plain tensors, strings, numbers, lists and dicts.

Loading uses ``torch.load(weights_only=True)``, which refuses to unpickle anything else, so a
checkpoint cannot run code, and the CRC-32 of every entry of the zip archive is checked first, so
a damaged file is refused instead of loading wrong weights. Layout::

    {"format": "v22sdk.checkpoint", "version": 1, "engine": str, "config": {...}, "storage": str,
     "vocab": {"chars": [...], "source": str}, "state": {name: tensor}, "memory": {...} | None,
     "split": {"train": [...], "val": [...], "test": [...]}, "data": {...}, "metrics": {...},
     "history": [...], "calibration": {...} | None, "open_set": {...} | None}

``data`` says what the checkpoint knows: its source, modalities, ``labels`` (per modality, the
training targets) and ``sources`` (where the data came from: name, version, licence), as far as
the trainer was told. ``calibration`` holds the temperature fitted on the validation split
(:mod:`.calibration`), ``open_set`` the statistics and thresholds of the familiarity score
(:mod:`.openset`); both are absent from checkpoints trained without a validation split (and
from those written before they existed), which then report raw confidences and no familiarity.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

from .._io import atomic_output
from ..errors import CheckpointError
from .config import EngineConfig
from .vocab import OutputVocab

FORMAT = "v22sdk.checkpoint"
VERSION = 1
DEFAULT_CHECKPOINT = Path(__file__).parent / "data" / "default.pt"


#: state entries always stored in float32: the tied vocabulary must stay bit-equal to the tokenizer's vectors
_EXACT = ("vocab_emb", "loss_state")


def save_checkpoint(
    path,
    model,
    cfg: EngineConfig,
    vocab: OutputVocab,
    *,
    split=None,
    data=None,
    metrics=None,
    history=None,
    storage: str = "float32",
    calibration=None,
    open_set=None,
) -> Path:
    """Write a checkpoint. ``storage="float16"`` halves the file (weights and memory are stored in
    half precision and widened to float32 on load; the bundled demo checkpoint uses it)."""
    import torch

    if storage not in ("float32", "float16"):
        raise ValueError("storage must be 'float32' or 'float16'")
    dtype = torch.float16 if storage == "float16" else torch.float32

    def narrow(name, t):
        t = t.detach().cpu().clone()
        return t.to(dtype) if t.is_floating_point() and name not in _EXACT else t

    mem = getattr(model, "memory", None)
    state_dict = getattr(mem, "state_dict", None)
    mem_state = state_dict() if state_dict is not None else None
    if mem_state is not None:
        mem_state = {k: narrow(k, v) if isinstance(v, torch.Tensor) else v for k, v in mem_state.items()}
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "engine": cfg.engine,
        "config": cfg.to_dict(),
        "vocab": vocab.to_dict(),
        "storage": storage,
        "state": {k: narrow(k, v) for k, v in model.state_dict().items()},
        "memory": mem_state,
        "split": split or {},
        "data": data or {},
        "metrics": metrics or {},
        "history": history or [],
        "calibration": calibration,
        "open_set": open_set,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Serialised in memory first, so a failing write is an OSError (→ OutputError naming the
    # path) rather than torch's RuntimeError; atomic_output replaces a regular file atomically,
    # writes through a device or FIFO (never renaming over it) and refuses a folder.
    buf = io.BytesIO()
    torch.save(doc, buf)
    with atomic_output(path, "wb") as fh:
        fh.write(buf.getbuffer())
    return path


def read_checkpoint(path) -> dict[str, Any]:
    """The checkpoint document, loaded without unpickling arbitrary objects."""
    import pickle
    import zipfile

    import torch

    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    if not zipfile.is_zipfile(path):  # torch.save writes a zip archive; anything else is not ours
        raise CheckpointError(
            f"{path} is not a v22sdk checkpoint: not a complete torch.save zip archive "
            "(truncated, or another kind of file)"
        )
    try:  # every entry carries a CRC-32: a flipped bit in the weights would otherwise load silently
        with zipfile.ZipFile(path) as archive:
            damaged = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise CheckpointError(f"checkpoint {path} is damaged: {exc}") from None
    if damaged is not None:
        raise CheckpointError(f"checkpoint {path} is damaged: entry {damaged!r} fails its CRC-32 check")
    try:
        doc = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise CheckpointError(f"checkpoint {path} cannot be read safely: {str(exc).splitlines()[0]}") from None
    except Exception as exc:  # noqa: BLE001 - parsing untrusted bytes: any failure means a damaged file
        first = (str(exc).splitlines() or [""])[0]
        raise CheckpointError(f"checkpoint {path} is damaged: {type(exc).__name__}: {first}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a v22sdk checkpoint")
    if doc.get("version") != VERSION:
        raise CheckpointError(f"checkpoint {path} has version {doc.get('version')!r}; this v22sdk reads {VERSION}")
    return doc


def load_checkpoint(path, expect: EngineConfig | None = None):
    """(model, config, vocab, document). With ``expect``, a checkpoint written for another
    configuration is refused with the differing fields named."""
    import numpy as np

    from .v22 import build_model

    doc = read_checkpoint(path)
    try:
        cfg = EngineConfig.from_dict(doc["config"])
    except CheckpointError as exc:
        raise CheckpointError(f"checkpoint {path}: {exc}") from None
    if expect is not None:
        skip = {"epochs", "seed", "lr", "batch_size", "stop_loss"}
        diff = [
            f.name
            for f in dataclasses.fields(EngineConfig)
            if f.name not in skip and getattr(cfg, f.name) != getattr(expect, f.name)
        ]
        if diff:
            shown = ", ".join(f"{n}: checkpoint {getattr(cfg, n)!r} vs {getattr(expect, n)!r}" for n in diff[:4])
            raise CheckpointError(f"checkpoint {path} was written for another configuration ({shown})")
    state = {k: v.float() if v.is_floating_point() else v for k, v in doc["state"].items()}
    if "vocab_emb" not in state:
        raise CheckpointError(f"checkpoint {path} has no vocabulary embeddings")
    vocab = OutputVocab(doc["vocab"]["chars"], state["vocab_emb"].numpy().astype(np.float32), doc["vocab"]["source"])
    # (building on the meta device would skip the throw-away initialisation, but its first use
    # imports torch's reference ops and sympy: slower than initialising a small model)
    model = build_model(cfg, state["vocab_emb"])
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        first = str(exc).splitlines()[0]
        raise CheckpointError(
            f"checkpoint {path} does not fit the {cfg.engine} engine of its config: {first}"
        ) from None
    if doc.get("memory") and hasattr(model.memory, "load_state_dict"):
        model.memory.load_state_dict(doc["memory"])  # FifoMemory widens its tensors to float32
    model.eval()
    return model, cfg, vocab, doc
