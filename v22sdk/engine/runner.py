"""Running a trained engine on one input: what ``v22sdk run`` does, reusable from Python.

    runner = Runner()                       # the bundled default checkpoint
    result = runner.run("apple.png")        # {"output": "苹果", "confidence": 0.97, "attributes": [...], ...}
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any


from .._paths import display, is_dir, is_file
from ..errors import CheckpointError, InputError
from .checkpoint import DEFAULT_CHECKPOINT


class Runner:
    """A loaded checkpoint plus the registry's tokenizers; ``run`` is one input end to end.

    ``memory``: ``False`` (the default: no persistent memory, so results depend on the input
    only), a :class:`~v22sdk.engine.memory_head.MemoryHead`, a path for the built-in ``tiered``
    memory, or ``True`` for the tiered memory at its default place (``$V22SDK_MEMORY`` or the
    user's data directory). Stage E reads it for every input, and each run is written back as a
    turn once its output is decoded, so memory persists across runs and restarts. Engines
    without a stage E (``baseline``) neither read nor write it.
    """

    def __init__(self, checkpoint: str | Path | None = None, registry=None, *, memory=False,
                 conversation: str = "default"):
        from ..plugins import get_registry
        from .checkpoint import load_checkpoint

        path = Path(checkpoint) if checkpoint else DEFAULT_CHECKPOINT
        if checkpoint is None and not path.is_file():
            raise CheckpointError(f"no default checkpoint at {path}; train one with "
                                  "'python scripts/make_demo_data.py --train' or pass --checkpoint")
        self.path = path
        self.registry = registry or get_registry()
        self.model, self.cfg, self.vocab, self.doc = load_checkpoint(path)
        self.conversation = conversation
        #: one-line notices of automatic choices between modalities that read one extension
        self.notices: list[str] = []
        self.stage_e = getattr(self.model, "stage_e", None)
        self.memory = None
        if memory is not False and self.stage_e is not None:
            if memory is True or isinstance(memory, (str, Path)):
                from ..memory import TieredMemory

                memory = TieredMemory(None if memory is True else memory)
            self.memory = memory
            self.stage_e.memory = memory

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def tokenize(self, source: str, modality: str | None = None):
        """Tokens of ``source``: a file (modality from its extension unless given) or a text."""
        if not source:  # Path("") is "." (a folder): say what is really wrong
            raise InputError("''", "an empty input: give a file or a non-empty text")
        p = Path(source)
        if is_file(p):
            name = modality or self.modality_for(p)
            self.check_modality(source, name)
            return self.registry.modality(name).tokenize_file(p)
        if modality is None and is_dir(p):
            raise InputError(source, "is a folder; give one file or a text (to run a whole folder or "
                                     "manifest use --backend ray --out DIR; for this text, --modality text)")
        suffix = p.suffix.lower()
        if modality is None and suffix and any(
                suffix in getattr(self.registry.get_class("modalities", n), "extensions", ())
                for n in self.registry.names("modalities")):
            raise InputError(source, "no such file")  # looks like a file name: do not read it as text
        if modality is None or modality == "text" or _takes_text(self.registry, modality):
            self.check_modality(source, modality or "text")
            return self.registry.modality(modality or "text").tokenize(source)
        raise InputError(source, f"no such file (the {modality} modality reads files)")

    @property
    def trained_modalities(self) -> list[str]:
        """The modalities of the checkpoint's training data (empty when it does not record them)."""
        return list(self.doc.get("data", {}).get("modalities") or [])

    def check_modality(self, source: str, name: str) -> None:
        """InputError when the checkpoint was never trained on ``name`` input: it would answer
        with confident garbage rather than say it cannot read it."""
        trained = self.trained_modalities
        if trained and name not in trained:
            shown = source if len(source) <= 60 else _clip(source, 60)
            raise InputError(shown, f"is {name} input, but checkpoint {self.path} was trained on "
                                    f"{', '.join(trained)} only")

    def modality_for(self, path: Path) -> str:
        """The modality reading ``path``'s extension; when several do (``.png``: vision and depth),
        the one this checkpoint was trained on, if exactly one was, else the registry's choice
        (:meth:`~v22sdk.plugins.Registry.resolve_path`; its notice, if any, is kept in
        :attr:`notices` for the CLI to print)."""
        readers = self.registry.readers(path.suffix)
        trained = [m for m in self.trained_modalities if m in readers]
        if len(readers) > 1 and len(trained) == 1:
            return trained[0]
        choice = self.registry.resolve_path(path)
        if choice.notice:
            self.notices.append(choice.notice)
        return choice.modality

    def run(self, source: str, modality: str | None = None, *, top: int = 5) -> dict[str, Any]:
        from .data import to_tensors
        from .train import predict

        start = time.perf_counter()
        batch = self.tokenize(source, modality)
        tokens, mask = to_tensors([batch], self.cfg.max_len)
        schema = self.registry.get_class("modalities", batch.modality).schema
        attr_set = schema.active_names(batch)
        if self.stage_e is not None:
            self.stage_e.last = None
        # Memory is read during the forward pass; the turn is written below, once its output is known.
        texts, confs = predict(self.model, tokens, mask, self.vocab, [attr_set], write_memory=False)
        mean = batch.attr.mean(0, keepdims=True)  # the input's attributes, averaged over its tokens
        attrs = schema.explain(mean, top=top)[0]
        result = {"input": display(source), "modality": batch.modality, "output": texts[0], "confidence": confs[0],
                  "tokens": len(batch), "truncated_to": min(len(batch), self.cfg.max_len),
                  "attributes": [{"name": n, "value": round(v, 4)} for n, v in attrs],
                  "engine": self.cfg.engine, "checkpoint": str(self.path)}
        result["memory"] = self._remember(source, batch, texts[0], attr_set)
        result["seconds"] = round(time.perf_counter() - start, 4)
        return result

    def encode(self, source: str, modality: str | None = None):
        """(sent_vec (256,) float32, attribute set) of ``source``: a memory query, nothing written."""
        import torch

        from .data import to_tensors

        batch = self.tokenize(source, modality)
        tokens, mask = to_tensors([batch], self.cfg.max_len)
        attr_set = self.registry.get_class("modalities", batch.modality).schema.active_names(batch)
        self.model.eval()
        old = self.stage_e.write_enabled if self.stage_e is not None else None
        if self.stage_e is not None:
            self.stage_e.write_enabled = False
        try:
            with torch.no_grad():
                sent_vec = self.model(tokens, mask, [attr_set])["sent_vec"]
        finally:
            if self.stage_e is not None:
                self.stage_e.write_enabled = old
        return sent_vec[0].float().cpu().numpy(), attr_set

    def _remember(self, source: str, batch, output: str, attr_set: frozenset[str]) -> dict[str, Any] | None:
        """Write this run as a turn; return where it went and what the read recalled."""
        if self.memory is None or self.stage_e is None or self.stage_e.last is None:
            return None
        from .data import input_digest
        from .memory_head import TurnInfo

        sent_vec, me, recall = self.stage_e.last
        from_file = batch.source not in (None, "", "<text>")  # tokenize() read a file
        name = Path(source).name if from_file else _clip(source, 40)
        info = TurnInfo(conversation=self.conversation, modality=batch.modality,
                        digest=input_digest(source, from_file), summary=f"{output or '(empty)'} <- {name}")
        [turn_id] = self.memory.write(sent_vec, me, [attr_set], [info])
        recalled = None
        if bool(recall.found[0]):
            then = recall.times[0] if recall.times else None
            past = recall.info[0] if recall.info else None
            recalled = {"turn": recall.ids[0], "score": round(float(recall.scores[0]), 4),
                        "summary": past.summary if past else "", "modality": past.modality if past else "",
                        "seconds_ago": round(time.time() - then, 1) if then is not None else None}
        return {"path": getattr(self.memory, "path", None), "turn": turn_id, "recall": recalled}


def _takes_text(registry, modality: str) -> bool:
    return getattr(registry.get_class("modalities", modality).input_spec, "kind", "") == "text"


def format_result(r: dict[str, Any]) -> str:
    tokens = f"{r['tokens']} token(s)"
    if r.get("truncated_to") is not None and r["truncated_to"] < r["tokens"]:
        tokens = f"{r['tokens']} tokens, the engine read the first {r['truncated_to']}"
    lines = [f"{r['output'] or '(empty)'}    confidence {r['confidence']:.3f}",
             f"  {r['modality']} input, {tokens}, engine {r['engine']}"]
    if r["attributes"]:
        lines.append("  top attributes: " + ", ".join(f"{a['name']}={a['value']:+.3f}" for a in r["attributes"]))
    mem = r.get("memory")
    if mem:
        rec = mem["recall"]
        recalled = (f"turn {rec['turn']} '{rec['summary']}', score {rec['score']:.3f}, {_ago(rec['seconds_ago'])}"
                    if rec else "nothing yet")
        lines.append(f"  memory: recalled {recalled}; stored as turn {mem['turn']}")
    return "\n".join(lines)


def _ago(seconds: float | None) -> str:
    if seconds is None:
        return "at an unknown time"
    for unit, n in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= n:
            return f"{seconds / n:.1f} {unit} ago"
    return f"{seconds:.0f} s ago"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"

