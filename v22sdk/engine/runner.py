"""Running a trained engine on one input: what ``v22sdk run`` does, reusable from Python.

    runner = Runner()                       # the bundled default checkpoint
    result = runner.run("seven.wav")        # {"output": "七", "confidence": 0.97, "familiar": True, ...}
    runner.knows()                          # its labels, data sources, calibration, open-set method

``Runner.run`` returns one dict (``v22sdk run --json`` prints it):

* ``output``: the answer, or ``None`` when the input is unfamiliar (see ``familiar``);
* ``decoded``: what the decoder produced, familiar or not;
* ``confidence``: the probability of ``decoded``, calibrated by the checkpoint's temperature
  (``calibrated`` says whether it had one; see :mod:`v22sdk.engine.calibration`);
* ``familiar``: ``True``/``False`` from the checkpoint's open-set score and threshold, ``None``
  when the checkpoint has none; ``open_set``: ``{"score", "threshold", "nearest_label", "method"}``
  or ``None`` (see :mod:`v22sdk.engine.openset`);
* ``below_floors``: the fidelity slots of the input below the lowest value the checkpoint's
  training inputs had (``[{"slot", "meaning", "scaling", "value", "floor"}]``, see
  :mod:`v22sdk.engine.fidelity`); when it is not empty ``familiar`` is ``False`` whatever the score;
* ``input``, ``modality``, ``tokens``, ``truncated_to``, ``attributes`` (the top named slots of
  the input), ``engine``, ``checkpoint``, ``memory`` (where the turn was stored and what was
  recalled) and ``seconds``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .._paths import display
from ..errors import AnswerNotStored, CheckpointError, InputError, MemoryStoreError
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

    def __init__(
        self, checkpoint: str | Path | None = None, registry=None, *, memory=False, conversation: str = "default"
    ):
        from ..plugins import get_registry
        from .checkpoint import load_checkpoint

        path = Path(checkpoint) if checkpoint else DEFAULT_CHECKPOINT
        if checkpoint is None and not path.is_file():
            raise CheckpointError(
                f"no default checkpoint at {path}; train one with "
                "'python scripts/make_demo_data.py --train' or pass --checkpoint"
            )
        self.path = path
        self.registry = registry or get_registry()
        self.model, self.cfg, self.vocab, self.doc = load_checkpoint(path)
        calibration = self.doc.get("calibration") or {}
        #: divides the logits before the confidence is computed (1.0: the checkpoint is not calibrated);
        #: a modality in ``temperatures`` has its own
        self.temperature = float(calibration.get("temperature", 1.0))
        self.temperatures = {m: float(t) for m, t in (calibration.get("per_modality") or {}).items()}
        self.calibrated = "temperature" in calibration
        self.open_set = None
        if self.doc.get("open_set"):
            from .openset import scorer_from_state

            self.open_set = scorer_from_state(self.doc["open_set"])
        #: per modality, the lowest value of each fidelity slot over the training inputs (.fidelity)
        self.fidelity_floors: dict[str, dict[str, float]] = (self.doc.get("data") or {}).get("fidelity_floors") or {}
        self.conversation = conversation
        #: one-line notices of automatic choices between modalities that read one extension
        self.notices: list[str] = []
        self.stage_e = getattr(self.model, "stage_e", None)
        self.memory = None
        if memory is not False and self.stage_e is not None:
            if memory is True or isinstance(memory, (str, Path)):
                # the built-in backend, found through the registry: the engine does not import the memory package
                tiered = self.registry.get_class("memory_backends", "tiered")
                memory = tiered(None if memory is True else memory)
            self.memory = memory
            self.stage_e.memory = memory

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def tokenize(self, source: str, modality: str | None = None, *, text: bool = False):
        """Tokens of ``source``: a file (modality from its extension unless given) or a text, by
        the rule of :mod:`v22sdk.inputs` (``text=True``: ``source`` is the text itself)."""
        from ..inputs import resolve

        got = resolve(source, text=text, extensions=self.registry.extensions())
        if got.path is not None:
            name = modality or self.modality_for(got.path)
            self.check_modality(source, name)
            return self.registry.modality(name).tokenize_file(got.path)
        if modality is None or modality == "text" or _takes_text(self.registry, modality):
            self.check_modality(got.literal, modality or "text")
            return self.registry.modality(modality or "text").tokenize(got.literal)
        if text:
            raise InputError(_clip(source, 60), f"the {modality} modality reads files, not text")
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
            raise InputError(
                shown, f"is {name} input, but checkpoint {self.path} was trained on {', '.join(trained)} only"
            )

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

    def knows(self) -> dict[str, Any]:
        """What the checkpoint was trained on and how it judges its answers: its modalities, labels
        (per modality), data sources, held-out accuracy, calibration and open-set method."""
        data = self.doc.get("data", {})
        metrics = self.doc.get("metrics") or {}
        # the weights as shipped (float16) when the trainer recorded them; else the training run's
        test = metrics.get("test_shipped") or metrics.get("test") or {}
        calibration = self.doc.get("calibration") or None
        return {
            "checkpoint": str(self.path),
            "engine": self.cfg.engine,
            "preset": self.cfg.preset,
            "modalities": self.trained_modalities,
            "labels": data.get("labels") or {},
            "sources": data.get("sources") or [],
            "data": data.get("source"),
            "examples": data.get("n"),
            "test_exact": {m: round(v["exact"], 4) for m, v in test.items() if isinstance(v, dict)},
            "test_exact_of": "shipped weights" if metrics.get("test_shipped") else "training run",
            "calibration": (
                {
                    "method": calibration["method"],
                    "temperature": calibration["temperature"],
                    **({"per_modality": calibration["per_modality"]} if calibration.get("per_modality") else {}),
                }
                if calibration
                else None
            ),
            "open_set": (
                {"method": self.open_set.method, "thresholds": self.open_set.thresholds}
                if self.open_set is not None
                else None
            ),
            "fidelity_floors": self.fidelity_floors or None,
        }

    def run(self, source: str, modality: str | None = None, *, top: int = 5, text: bool = False) -> dict[str, Any]:
        """Tokenize ``source``, run the engine once, decode; judge the answer (calibrated confidence,
        familiarity) and remember the turn. ``source`` is a file or a text (see :meth:`tokenize`); the
        fields are described in the module's docstring."""
        from .canonical import engine_attr_set
        from .data import to_tensors
        from .train import decode, forward_eval

        start = time.perf_counter()
        batch = self.tokenize(source, modality, text=text)
        tokens, mask = to_tensors([batch], self.cfg.max_len, self.registry)
        schema = self.registry.get_class("modalities", batch.modality).schema
        attr_set = engine_attr_set(batch, self.registry)
        if self.stage_e is not None:
            self.stage_e.last = None
        # Memory is read during the forward pass; the turn is written below, once its output is known.
        out = forward_eval(self.model, tokens, mask, [attr_set], write_memory=False)
        texts, confs = decode(out["logits"], self.vocab, self.temperature_of(batch.modality))
        open_set = None
        if self.open_set is not None:
            from .openset import features_of

            feats = {**features_of(out, tokens, mask, confs, texts), "modalities": [batch.modality]}
            open_set = self._verdicts(feats)[0]
        familiar = open_set.pop("familiar") if open_set else None
        below = self.below_floors(batch, schema)
        if below:
            familiar = False
        mean = batch.attr.mean(0, keepdims=True)  # the input's attributes, averaged over its tokens
        attrs = schema.explain(mean, top=top)[0]
        result = {
            "input": display(source),
            "modality": batch.modality,
            "output": None if familiar is False else texts[0],
            "decoded": texts[0],
            "confidence": confs[0],
            "calibrated": self.calibrated,
            "familiar": familiar,
            "open_set": open_set,
            "below_floors": below,
            "tokens": len(batch),
            "truncated_to": min(len(batch), self.cfg.max_len),
            "attributes": [{"name": n, "value": round(v, 4)} for n, v in attrs],
            "engine": self.cfg.engine,
            "checkpoint": str(self.path),
        }
        try:
            result["memory"] = self._remember(
                source, batch, texts[0] if familiar is not False else "(unfamiliar)", attr_set
            )
        except MemoryStoreError as exc:  # a full disk must not take the computed answer with it
            result["memory"] = {"path": getattr(self.memory, "path", None), "turn": None, "stored": False}
            result["seconds"] = round(time.perf_counter() - start, 4)
            raise AnswerNotStored(result, exc) from exc
        result["seconds"] = round(time.perf_counter() - start, 4)
        return result

    def temperature_of(self, modality: str) -> float:
        """The calibration temperature of ``modality``'s answers."""
        return self.temperatures.get(modality, self.temperature)

    def features(self, batches: list) -> dict[str, Any]:
        """One forward pass (64 inputs at a time, no memory) over token batches: the open-set features
        of :func:`~v22sdk.engine.openset.features_of` — ``sent_vec``, ``tokens``, ``logits``, the
        calibrated ``confidence`` and the ``decoded`` answers — and ``modalities``."""
        import numpy as np

        from .canonical import engine_attr_set
        from .data import to_tensors
        from .openset import features_of
        from .train import decode, forward_eval

        parts = []
        for start in range(0, len(batches), 64):
            chunk = batches[start : start + 64]
            tokens, mask = to_tensors(chunk, self.cfg.max_len, self.registry)
            sets = [engine_attr_set(b, self.registry) for b in chunk]
            out = forward_eval(self.model, tokens, mask, sets, write_memory=False)
            texts, confs = [], []
            for i, b in enumerate(chunk):
                t, c = decode(out["logits"][i : i + 1], self.vocab, self.temperature_of(b.modality))
                texts += t
                confs += c
            parts.append(features_of(out, tokens, mask, confs, texts))
        feats: dict[str, Any] = {
            k: np.concatenate([p[k] for p in parts]) for k in ("sent_vec", "tokens", "logits", "confidence")
        }
        feats["decoded"] = [t for p in parts for t in p["decoded"]]
        feats["modalities"] = [b.modality for b in batches]
        return feats

    def judge(self, batches: list) -> list[dict[str, Any]]:
        """Answers for many token batches at once, without memory: per input ``decoded``,
        ``confidence``, ``familiar`` and ``open_set`` (as :meth:`run` reports them). For
        measurements over a data set; :meth:`run` is one input end to end."""
        feats = self.features(batches)
        verdicts = self._verdicts(feats)
        rows = []
        for b, text, conf, v in zip(batches, feats["decoded"], feats["confidence"].tolist(), verdicts):
            familiar = v.pop("familiar") if v else None
            below = self.below_floors(b)
            if below:
                familiar = False
            rows.append(
                {"decoded": text, "confidence": conf, "familiar": familiar, "open_set": v, "below_floors": below}
            )
        return rows

    def below_floors(self, batch, schema=None) -> list[dict[str, Any]]:
        """The fidelity slots of ``batch`` below this checkpoint's training floors
        (:func:`~v22sdk.engine.fidelity.below_floors`): a non-empty list makes the input unfamiliar."""
        if not self.fidelity_floors:
            return []
        from .fidelity import below_floors

        schema = schema or self.registry.get_class("modalities", batch.modality).schema
        return below_floors(self.fidelity_floors, batch, schema)

    def _verdicts(self, feats: dict[str, Any]) -> list[dict[str, Any] | None]:
        """The open-set verdict of each input of ``feats`` (:meth:`features`): score, threshold,
        nearest label, method, familiar."""
        modalities = feats["modalities"]
        if self.open_set is None:
            return [None] * len(modalities)
        scores, nearest = self.open_set.score(feats, modalities)
        verdicts: list[dict[str, Any] | None] = []
        for score, near, mod in zip(scores.tolist(), nearest, modalities):
            threshold = self.open_set.thresholds.get(mod)
            verdicts.append(
                {
                    "score": round(score, 4) if score != float("inf") else None,
                    "threshold": None if threshold is None else round(threshold, 4),
                    "nearest_label": near,
                    "method": self.open_set.method,
                    "familiar": self.open_set.familiar(score, mod),
                }
            )
        return verdicts

    def explain_answer(
        self,
        source: str,
        modality: str | None = None,
        *,
        method: str | None = None,
        regions: bool | None = None,
        text: bool = False,
        **options,
    ) -> dict[str, Any]:
        """Why the engine answers what it does for ``source``: the log-probability of the decoded
        answer attributed, signed, to each named slot of the input and to each token (character,
        sound segment, image patch; image regions and short sounds also by occlusion through the
        tokenizer). ``source`` is read as :meth:`run` reads it (``text=True``: the text itself). Memory
        is read as ``run`` reads it, never written. See :mod:`v22sdk.engine.explain` for the methods
        (``method``: ``"ig"`` or ``"occlusion"``)."""
        from .explain import explain_input

        return explain_input(self, source, modality, method=method, regions=regions, text=text, **options)

    def encode(self, source: str, modality: str | None = None, *, text: bool = False):
        """(sent_vec (256,) float32, attribute set) of ``source``: a memory query, nothing written."""
        import torch

        from .canonical import engine_attr_set
        from .data import to_tensors

        batch = self.tokenize(source, modality, text=text)
        tokens, mask = to_tensors([batch], self.cfg.max_len, self.registry)
        attr_set = engine_attr_set(batch, self.registry)
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
        info = TurnInfo(
            conversation=self.conversation,
            modality=batch.modality,
            digest=input_digest(source, from_file),
            summary=f"{output or '(empty)'} <- {name}",
        )
        [turn_id] = self.memory.write(sent_vec, me, [attr_set], [info])
        # Stage E fuses whatever it recalls; a recall is *shown* only when it is similar enough to
        # be the memory's hit (its score passes the memory's hit threshold), so an unrelated past
        # turn is never presented as if it were one.
        recalled, best = None, None
        threshold = getattr(self.memory, "hit_threshold", None)
        if bool(recall.found[0]):
            best = round(float(recall.scores[0]), 4)
            if threshold is None or best >= threshold:
                then = recall.times[0] if recall.times else None
                past = recall.info[0] if recall.info else None
                recalled = {
                    "turn": recall.ids[0],
                    "score": best,
                    "summary": past.summary if past else "",
                    "modality": past.modality if past else "",
                    "seconds_ago": round(time.time() - then, 1) if then is not None else None,
                }
        return {
            "path": getattr(self.memory, "path", None),
            "turn": turn_id,
            "recall": recalled,
            "best_score": best,
            "hit_threshold": threshold,
        }


def _takes_text(registry, modality: str) -> bool:
    return getattr(registry.get_class("modalities", modality).input_spec, "kind", "") == "text"


def format_result(r: dict[str, Any]) -> str:
    tokens = f"{r['tokens']} token(s)"
    if r.get("truncated_to") is not None and r["truncated_to"] < r["tokens"]:
        tokens = f"{r['tokens']} tokens, the engine read the first {r['truncated_to']}"
    o = r.get("open_set")
    below = r.get("below_floors")
    if r.get("familiar") is False:
        lines = ["unfamiliar input: unlike anything this checkpoint was trained on ('v22sdk run --knows' lists it)"]
        if below:
            from .fidelity import describe

            lines.append(f"  recorded with less than training ever had: {describe(below)}")
        tail = (
            f"nearest label {(o or {}).get('nearest_label') or '-'}; the decoder would say "
            f"{r['decoded'] or '(empty)'} (confidence {r['confidence']:.3f})"
        )
        if o is not None and o.get("threshold") is not None:
            score = o["score"]
            over = score is None or score > o["threshold"]
            lines.append(
                f"  open-set score {'inf' if score is None else score} {'>' if over else '≤'} threshold "
                f"{o['threshold']} ({o['method']}); {tail}"
            )
        else:
            lines.append(f"  {tail}")
    else:
        kind = "confidence" if r.get("calibrated", True) else "confidence (uncalibrated)"
        lines = [f"{r['output'] or '(empty)'}    {kind} {r['confidence']:.3f}"]
        if o is not None and o.get("threshold") is None:
            lines.append(
                f"  familiarity not judged: the checkpoint's validation split had too few {r['modality']} "
                "inputs to set an open-set threshold"
            )
        elif o is not None and o.get("score") is not None:
            lines.append(f"  familiar: open-set score {o['score']} ≤ threshold {o['threshold']} ({o['method']})")
    lines.append(f"  {r['modality']} input, {tokens}, engine {r['engine']}")
    if r["attributes"]:
        lines.append("  top attributes: " + ", ".join(f"{a['name']}={a['value']:+.3f}" for a in r["attributes"]))
    mem = r.get("memory")
    if mem and mem.get("stored") is False:
        lines.append("  memory: this turn was NOT stored (see the error below)")
    elif mem:
        rec = mem["recall"]
        if rec:
            recalled = (
                f"recalled turn {rec['turn']} '{rec['summary']}', score {rec['score']:.3f}, {_ago(rec['seconds_ago'])}"
            )
        elif mem.get("best_score") is None:
            recalled = "nothing stored yet"
        else:
            recalled = (
                f"no similar past turn (best score {mem['best_score']:.3f} < hit threshold {mem['hit_threshold']:.2f})"
            )
        lines.append(f"  memory: {recalled}; stored as turn {mem['turn']}")
    return "\n".join(lines)


def format_knows(k: dict[str, Any]) -> str:
    """``v22sdk run --knows``: what a checkpoint was trained on, in a few lines."""
    where = k.get("data")
    where = Path(where).name if where else None
    lines = [
        f"checkpoint {k['checkpoint']} ({k['engine']}, {k['preset']} preset)",
        f"  trained on: {', '.join(k['modalities']) or 'unrecorded modalities'}"
        + (f", {k['examples']} examples of {where}" if k.get("examples") and where else ""),
    ]
    for mod, labels in (k.get("labels") or {}).items():
        shown = " ".join(labels[:40]) + (f" … ({len(labels)} in all)" if len(labels) > 40 else "")
        lines.append(f"  {mod} labels: {shown}")
    for src in k.get("sources") or []:
        desc = ", ".join(f"{key} {val}" for key, val in src.items() if key not in ("name", "sha256") and val)
        lines.append(f"  source: {src.get('name', '?')}" + (f" ({desc})" if desc else ""))
    if k.get("test_exact"):
        lines.append(
            f"  held-out exact match ({k.get('test_exact_of', 'training run')}): "
            + ", ".join(f"{m} {v:.3f}" for m, v in k["test_exact"].items())
        )
    cal = k.get("calibration")
    if not cal:
        lines.append("  confidence: not calibrated (no validation split at training)")
    elif cal.get("per_modality"):  # what the answers use: one temperature per modality, the global one only as fallback
        temps = ", ".join(f"{m} {t:.3f}" for m, t in cal["per_modality"].items())
        lines.append(f"  confidence: calibrated, temperature per modality {temps} (fitted on the validation split)")
    else:
        lines.append(f"  confidence: calibrated, temperature {cal['temperature']:.3f} (fitted on the validation split)")
    for mod, floors in (k.get("fidelity_floors") or {}).items():
        shown = ", ".join(f"{slot} ≥ {low:+.3f}" for slot, low in floors.items())
        lines.append(f"  {mod} recordings: {shown} (lower is unfamiliar: training had nothing below)")
    o = k.get("open_set")
    if o and o["thresholds"]:
        unjudged = [m for m in k["modalities"] if m not in o["thresholds"]]
        lines.append(
            f"  unfamiliar inputs: {o['method']} above "
            + ", ".join(f"{m} {t:.4g}" for m, t in o["thresholds"].items())
            + (f"; not judged for {', '.join(unjudged)} (too few validation inputs)" if unjudged else "")
        )
    else:
        lines.append(
            "  unfamiliar inputs: not detected (the checkpoint has no open-set statistics, or too few "
            "validation inputs to set a threshold)"
        )
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
