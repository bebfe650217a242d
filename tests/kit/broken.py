"""Deliberately broken modalities: each breaks one contract rule the way real plugins do.

``EXPECTED`` maps each class to the exact set of checks that must fail on it (and a phrase its
failure reason must contain); every other check must pass. The words-based ones derive from the
correct :class:`~reference.WordsModality` by changing one method.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import attrs
import numpy as np

from v22sdk import AttributeSchema, Encoding, Sample, Slot
from v22sdk.testing import list_checks

from .reference import SCHEMA, WordsModality, split_words


class LaxSchema(AttributeSchema):
    """A careless subclass that switches the schema's own validation off."""

    def problems(self) -> list[str]:
        return []


def unchecked_schema(zone: str, slots: tuple[Slot, ...]) -> AttributeSchema:
    """An AttributeSchema that skipped validation, as a careless plugin could end up with."""
    return LaxSchema(zone, slots)


class NonUnitEmb(WordsModality):
    """Forgets to normalise: emb is the raw projected letter counts."""

    name = "non_unit_emb"

    def embed(self, counts: np.ndarray) -> np.ndarray:
        q = np.linalg.qr(np.random.default_rng(7).standard_normal((256, 27)))[0]
        return (counts @ q[:, :26].T + q[:, 26]).astype(np.float32)


class NaNOnNoLetters(WordsModality):
    """Normalises by the letter count's norm with no guard: a word like "19" gives 0/0 = NaN."""

    name = "nan_on_silence"

    def embed(self, counts: np.ndarray) -> np.ndarray:
        from .reference import projection

        with np.errstate(invalid="ignore", divide="ignore"):
            direction = counts / np.linalg.norm(counts, axis=1, keepdims=True)
        return (direction @ projection()[:, :26].T).astype(np.float32)


class Nondeterministic(WordsModality):
    """Adds unseeded "dither" noise to the embedding."""

    name = "nondeterministic"

    def embed(self, counts: np.ndarray) -> np.ndarray:
        emb = super().embed(counts).astype(np.float64) + np.random.default_rng().normal(0, 1e-3, (len(counts), 256))
        return (emb / np.linalg.norm(emb, axis=1, keepdims=True)).astype(np.float32)


class UndeclaredSlot(WordsModality):
    """Writes a "sentence length" feature into slot 127, which its schema never declares."""

    name = "undeclared_slot"

    def attributes(self, text: str, word: np.ndarray, n: int) -> np.ndarray:
        attr = super().attributes(text, word, n)
        attr[:, 127] = n / (n + 4)
        return attr


class WrongDtype(WordsModality):
    """Returns float64 embeddings (the arithmetic's natural dtype) instead of float32."""

    name = "wrong_dtype"

    def embed(self, counts: np.ndarray) -> np.ndarray:
        return super().embed(counts).astype(np.float64)


class CrashOnEmpty(WordsModality):
    """Skips the empty-text check; an empty string dies inside numpy with a ValueError."""

    name = "crash_on_empty"

    def check_text(self, data: Any) -> str:
        if not isinstance(data, str):
            raise TypeError("need a str")  # and the wrong exception type on top
        return data

    def encode(self, data: Any) -> Encoding:
        text = self.check_text(data)
        return super().encode(text) if text else Encoding(np.stack([]), np.stack([]))


class BatchDiffers(WordsModality):
    """A "fast" tokenize_batch that joins the texts and tokenizes once: word positions and
    character offsets then refer to the joined text, not to each input."""

    name = "batch_differs"

    def tokenize_batch(self, items: list[Any]) -> Any:
        from v22sdk import TokenBatch

        texts = [item.data if isinstance(item, Sample) else item for item in items]
        joined = self.tokenize(" ".join(texts))
        counts = [len(split_words(t)[2]) for t in texts]
        item = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
        return TokenBatch(joined.emb, joined.attr, self.name, {**joined.offsets, "item": item})


@attrs.frozen
class ConfigNotJSON(WordsModality):
    """Keeps a frozenset in its config, which JSON cannot hold."""

    name = "config_not_json"
    stopwords: frozenset = frozenset({"the", "a"})


class BadSlotName(WordsModality):
    """A schema slot named with capitals and a dash (built around AttributeSchema's validation)."""

    name = "bad_slot_name"
    schema = unchecked_schema(
        "language",
        tuple(
            Slot("Words-Length" if s.name == "words.length" else s.name, s.index, s.meaning, s.scaling) for s in SCHEMA
        ),
    )


class MisspeltStorageSlot(WordsModality):
    """Holds a storage slot at a ceiling under a name the schema does not have (``words.lenght``):
    the engine would read the real slot unheld, with no word said."""

    name = "misspelt_storage_slot"
    storage_slots = MappingProxyType({"words.lenght": 0.0})


class SlotOutsideZone(WordsModality):
    """Declares the language zone but puts the digit share in slot 200, in the vision zone."""

    name = "slot_outside_zone"
    schema = unchecked_schema(
        "language",
        tuple(Slot(s.name, 200 if s.name == "words.digit" else s.index, s.meaning, s.scaling) for s in SCHEMA),
    )

    def attributes(self, text: str, word: np.ndarray, n: int) -> np.ndarray:
        attr = super().attributes(text, word, n)
        attr[:, 200], attr[:, SCHEMA.index("words.digit")] = attr[:, SCHEMA.index("words.digit")], 0
        return attr


class OffsetsOneBased(WordsModality):
    """Reports 1-based character offsets, off by one from the input."""

    name = "offsets_one_based"

    def encode(self, data: Any) -> Encoding:
        enc = super().encode(data)
        return Encoding(enc.emb, enc.attr, {"char": enc.offsets["char"] + 1})


class AttrUnscaled(WordsModality):
    """Writes the raw word length into words.length instead of its documented squashing."""

    name = "attr_unscaled"

    def attributes(self, text: str, word: np.ndarray, n: int) -> np.ndarray:
        attr = super().attributes(text, word, n)
        attr[:, SCHEMA.index("words.length")] = np.bincount(word[word >= 0], minlength=n)
        return attr


class AcceptsBytes(WordsModality):
    """Decodes bytes instead of rejecting them, and str()s anything else: garbage in, tokens out."""

    name = "accepts_garbage"

    def check_text(self, data: Any) -> str:
        if isinstance(data, bytes):
            data = data.decode("utf-8", "replace")
        return super().check_text(data if isinstance(data, str) else str(data))


class NoSampleInputs(WordsModality):
    """Forgets sample_inputs(): no data check can run, so every data check fails."""

    name = "no_sample_inputs"

    @classmethod
    def sample_inputs(cls) -> Any:
        return super(WordsModality, cls).sample_inputs()


class Stateful(WordsModality):
    """Caches the last text's embedding and reuses it when the word count matches (a bad cache)."""

    name = "stateful"

    def encode(self, data: Any) -> Encoding:
        enc = super().encode(data)
        previous = _CACHE.get(len(enc.emb))
        _CACHE[len(enc.emb)] = enc.emb
        return Encoding(previous if previous is not None else enc.emb, enc.attr, enc.offsets)


_CACHE: dict[int, np.ndarray] = {}

#: Every check that needs sample inputs: all contract checks but check_schema (the quality checks
#: cannot run without them and are skipped; the sweep switches the fresh-process comparison off).
DATA_CHECKS = set(list_checks(level="error")) - {"check_schema", "check_fresh_process"}

#: class -> (the exact set of failing checks, a phrase the first failure reason must contain)
EXPECTED: dict[type, tuple[set[str], str]] = {
    NonUnitEmb: ({"check_unit_norm_emb"}, "must be 1 ± 0.0001"),
    NaNOnNoLetters: ({"check_finite"}, "nan"),
    Nondeterministic: ({"check_determinism"}, "tokenizing the same input twice differs"),
    Stateful: ({"check_determinism"}, "tokenizing the same input twice differs"),
    UndeclaredSlot: ({"check_declared_slots"}, "attr[0, 127]"),
    WrongDtype: ({"check_shape_dtype"}, "float64"),
    # the kit's own inputs find more of the same bug: whitespace-only text gives no tokens, and the
    # kit's wrong types crash too
    CrashOnEmpty: ({"check_invalid_inputs", "check_input_spec", "check_shape_dtype"}, "empty: crash (ValueError"),
    AcceptsBytes: ({"check_invalid_inputs", "check_input_spec"}, "wrong_dtype: garbage"),
    BatchDiffers: ({"check_batch_equals_singles"}, "batch"),
    ConfigNotJSON: ({"check_config_roundtrip"}, "not JSON-serialisable"),
    BadSlotName: ({"check_schema"}, "'Words-Length' is not a lower-case dotted name"),
    SlotOutsideZone: ({"check_schema"}, "outside the language zone"),
    MisspeltStorageSlot: ({"check_schema"}, "storage_slots names 'words.lenght', which the schema does not declare"),
    OffsetsOneBased: ({"check_offsets"}, "is outside the"),
    AttrUnscaled: ({"check_attr_bounds"}, "(words.length)"),
    NoSampleInputs: (DATA_CHECKS, "provides no sample_inputs()"),
}
