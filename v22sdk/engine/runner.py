"""Running a trained engine on one input: what ``v22sdk run`` does, reusable from Python.

    runner = Runner()                       # the bundled default checkpoint
    result = runner.run("apple.png")        # {"output": "苹果", "confidence": 0.97, "attributes": [...], ...}
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any


from ..errors import CheckpointError, InputError
from .checkpoint import DEFAULT_CHECKPOINT


class Runner:
    """A loaded checkpoint plus the registry's tokenizers; ``run`` is one input end to end."""

    def __init__(self, checkpoint: str | Path | None = None, registry=None):
        from ..plugins import get_registry
        from .checkpoint import load_checkpoint

        path = Path(checkpoint) if checkpoint else DEFAULT_CHECKPOINT
        if checkpoint is None and not path.is_file():
            raise CheckpointError(f"no default checkpoint at {path}; train one with "
                                  "'python scripts/make_demo_data.py --train' or pass --checkpoint")
        self.path = path
        self.registry = registry or get_registry()
        self.model, self.cfg, self.vocab, self.doc = load_checkpoint(path)

    def tokenize(self, source: str, modality: str | None = None):
        """Tokens of ``source``: a file (modality from its extension unless given) or a text."""
        p = Path(source)
        if p.is_file():
            name = modality or self.modality_for(p)
            return self.registry.modality(name).tokenize_file(p)
        suffix = p.suffix.lower()
        if modality is None and suffix and any(
                suffix in getattr(self.registry.get_class("modalities", n), "extensions", ())
                for n in self.registry.names("modalities")):
            raise InputError(source, "no such file")  # looks like a file name: do not read it as text
        if modality is None or modality == "text" or _takes_text(self.registry, modality):
            return self.registry.modality(modality or "text").tokenize(source)
        raise InputError(source, f"no such file (the {modality} modality reads files)")

    def modality_for(self, path: Path) -> str:
        """The modality reading ``path``'s extension; when several do (``.png``: vision and depth),
        the one this checkpoint was trained on, if exactly one was."""
        from ..errors import UnknownNameError

        try:
            return self.registry.modality_for_path(path)
        except UnknownNameError:
            suffix = path.suffix.lower()
            trained = [m for m in self.doc.get("data", {}).get("modalities", [])
                       if m in self.registry.names("modalities")
                       and suffix in getattr(self.registry.get_class("modalities", m), "extensions", ())]
            if len(trained) == 1:
                return trained[0]
            raise

    def run(self, source: str, modality: str | None = None, *, top: int = 5) -> dict[str, Any]:
        from .data import to_tensors
        from .train import predict

        start = time.perf_counter()
        batch = self.tokenize(source, modality)
        tokens, mask = to_tensors([batch], self.cfg.max_len)
        schema = self.registry.get_class("modalities", batch.modality).schema
        texts, confs = predict(self.model, tokens, mask, self.vocab, [schema.active_names(batch)])
        mean = batch.attr.mean(0, keepdims=True)  # the input's attributes, averaged over its tokens
        attrs = schema.explain(mean, top=top)[0]
        return {"input": source, "modality": batch.modality, "output": texts[0], "confidence": confs[0],
                "tokens": len(batch), "truncated_to": min(len(batch), self.cfg.max_len),
                "attributes": [{"name": n, "value": round(v, 4)} for n, v in attrs],
                "engine": self.cfg.engine, "checkpoint": str(self.path),
                "seconds": round(time.perf_counter() - start, 4)}


def _takes_text(registry, modality: str) -> bool:
    return getattr(registry.get_class("modalities", modality).input_spec, "kind", "") == "text"


def format_result(r: dict[str, Any]) -> str:
    lines = [f"{r['output'] or '(empty)'}    confidence {r['confidence']:.3f}",
             f"  {r['modality']} input, {r['tokens']} token(s), engine {r['engine']}"]
    if r["attributes"]:
        lines.append("  top attributes: " + ", ".join(f"{a['name']}={a['value']:+.3f}" for a in r["attributes"]))
    return "\n".join(lines)

