"""The experiment's two corpora, read at run time from the installed Python distribution.

- ``pydoc-topics``: the English prose of the Python reference manual that CPython ships as
  ``pydoc_data.topics`` (the text ``help()`` shows); ~465k characters on CPython 3.11. PSF licence.
- ``stdlib-source``: the source code of a fixed list of standard-library modules, concatenated in
  that order and cut at 600k characters. PSF licence.

Nothing is copied into the repository; the text, its length and its SHA-256 are recorded with
the results, so a run on another Python version is recognisably a different corpus.

Tokenizer: one token per character; ``\\n`` is id 0, printable ASCII 32..126 are ids 1..95 and
every other character maps to ``UNK`` (id 96). Splits are contiguous 90/5/5 (train/val/test).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass

import numpy as np

from v22sdk.errors import InputError

VOCAB_SIZE = 97
UNK = 96
CORPORA = ("pydoc-topics", "stdlib-source")
_STDLIB_MODULES = (
    "argparse", "difflib", "inspect", "pathlib", "typing", "textwrap", "collections",
    "enum", "dataclasses", "functools", "subprocess", "tarfile",
)
_STDLIB_LIMIT = 600_000

_LOOKUP = np.full(0x110000, UNK, dtype=np.int64)
_LOOKUP[ord("\n")] = 0
_LOOKUP[32:127] = np.arange(1, 96)


def encode(text: str) -> np.ndarray:
    """Characters -> ids ``(len(text),)`` int64 (vectorised, no per-character Python loop)."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    return _LOOKUP[codes]


def decode(ids) -> str:
    """Ids -> text (``UNK`` shows as U+FFFD)."""
    table = ["\n"] + [chr(c) for c in range(32, 127)] + ["\ufffd"]
    return "".join(table[int(i)] for i in ids)


@dataclass(frozen=True)
class Corpus:
    """An encoded corpus with contiguous splits (int64 id arrays) and its provenance."""

    name: str
    source: str
    licence: str
    sha256: str
    n_chars: int
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray

    def info(self) -> dict:
        return {"name": self.name, "source": self.source, "licence": self.licence,
                "sha256": self.sha256, "n_chars": self.n_chars, "python": sys.version.split()[0],
                "unk_share": float(np.mean(np.concatenate([self.train, self.val, self.test]) == UNK))}


def _read_text(name: str) -> tuple[str, str]:
    if name == "pydoc-topics":
        topics = importlib.import_module("pydoc_data.topics").topics
        return "\n".join(topics[k] for k in sorted(topics)), "CPython stdlib pydoc_data/topics.py"
    if name == "stdlib-source":
        parts = []
        for mod in _STDLIB_MODULES:
            spec = importlib.util.find_spec(mod)
            with open(spec.origin, encoding="utf-8") as fh:
                parts.append(fh.read())
        return "\n".join(parts)[:_STDLIB_LIMIT], "CPython stdlib sources: " + ", ".join(_STDLIB_MODULES)
    raise InputError(f"corpus {name!r}", f"unknown corpus; choose one of {', '.join(CORPORA)}")


def load_corpus(name: str) -> Corpus:
    """Load, encode and split corpus ``name`` (one of :data:`CORPORA`)."""
    text, source = _read_text(name)
    if len(text) < 100_000:
        raise InputError(f"corpus {name!r}", f"only {len(text)} characters found in {source}; need >= 100000")
    ids = encode(text)
    n = len(ids)
    a, b = int(n * 0.9), int(n * 0.95)
    return Corpus(name=name, source=source, licence="PSF-2.0 (Python Software Foundation License)",
                  sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(), n_chars=n,
                  train=ids[:a], val=ids[a:b], test=ids[b:])
