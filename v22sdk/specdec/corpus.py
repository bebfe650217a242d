"""The lab's corpora, read at run time from what is installed, each with its character vocabulary.

- ``pydoc-topics``: the English prose of the Python reference manual that CPython ships as
  ``pydoc_data.topics`` (the text ``help()`` shows); ~465k characters on CPython 3.11. PSF licence.
- ``stdlib-source``: the source code of a fixed list of standard-library modules, concatenated in
  that order and cut at 600k characters. PSF licence.
- ``tang-song-poems``: the 300 Tang poems and 100 Song poems of Debian's ``fortunes-zh`` package
  (``/usr/share/games/fortunes/tang300`` and ``song100``; ``apt-get install fortunes-zh``), about
  40k characters of classical Chinese. The package is GPL-3.0+ (its ``copyright`` file); the poems
  themselves are centuries old. Terminal colour codes and the ``%`` separators are removed; each
  poem keeps its title and author lines.

Nothing is copied into the repository; the text, its length and its SHA-256 (and for the Debian
corpus the package version) are recorded with the results, so a run on another Python or package
version is recognisably a different corpus.

Vocabularies (:class:`CharVocab`, one token per character). The two Python corpora share the
fixed :data:`ASCII_VOCAB` of 97 ids: ``\\n`` is id 0, printable ASCII 32..126 are ids 1..95 and
every other character is ``UNK`` (id 96). The Chinese corpus keeps those 96 ids and adds every
other character of its *train* split in code-point order (about 2,000), then ``UNK`` last, so a
character seen only in validation or test is ``UNK`` there, as any held-out unknown would be.

Splits: the Python corpora are cut contiguously 90/5/5 (train/val/test). The poems are assigned
whole, by their index in the files: index ``i % 20 == 18`` to validation, ``== 19`` to test, the
rest to train (a contiguous cut would put only Song lyrics, a different form, in test).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from v22sdk.errors import InputError

CORPORA = ("pydoc-topics", "stdlib-source", "tang-song-poems")
_STDLIB_MODULES = (
    "argparse",
    "difflib",
    "inspect",
    "pathlib",
    "typing",
    "textwrap",
    "collections",
    "enum",
    "dataclasses",
    "functools",
    "subprocess",
    "tarfile",
)
_STDLIB_LIMIT = 600_000
FORTUNES_DIR = Path("/usr/share/games/fortunes")
_POEM_FILES = ("tang300", "song100")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_MIN_CHARS = {"pydoc-topics": 100_000, "stdlib-source": 100_000, "tang-song-poems": 30_000}

_ASCII_CHARS = ("\n",) + tuple(chr(c) for c in range(32, 127))


@dataclass(frozen=True, eq=False)
class CharVocab:
    """Characters <-> ids: ``chars[i]`` is id ``i``; every other character is ``unk`` (the last id).

    ``encode`` is vectorised (a code-point lookup table, no per-character Python loop).
    """

    chars: tuple[str, ...]
    _lookup: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(set(self.chars)) != len(self.chars) or any(len(c) != 1 for c in self.chars):
            raise ValueError("vocabulary characters must be distinct single characters")
        lookup = np.full(0x110000, len(self.chars), dtype=np.int32)
        lookup[[ord(c) for c in self.chars]] = np.arange(len(self.chars), dtype=np.int32)
        object.__setattr__(self, "_lookup", lookup)

    @property
    def size(self) -> int:
        """Number of ids, ``UNK`` included."""
        return len(self.chars) + 1

    @property
    def unk(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        """Characters -> ids ``(len(text),)`` int64."""
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        return self._lookup[codes].astype(np.int64)

    def decode(self, ids) -> str:
        """Ids -> text (``UNK`` shows as U+FFFD)."""
        n = len(self.chars)
        return "".join(self.chars[i] if i < n else "\ufffd" for i in map(int, ids))

    def digest(self) -> str:
        """SHA-256 (first 16 hex digits) of the character list: identifies the vocabulary."""
        return hashlib.sha256("".join(self.chars).encode("utf-8", "surrogatepass")).hexdigest()[:16]


ASCII_VOCAB = CharVocab(_ASCII_CHARS)
VOCAB_SIZE = ASCII_VOCAB.size  # 97: the Python corpora's vocabulary
UNK = ASCII_VOCAB.unk  # 96


def encode(text: str) -> np.ndarray:
    """Characters -> ids of :data:`ASCII_VOCAB` (the Python corpora's vocabulary)."""
    return ASCII_VOCAB.encode(text)


def decode(ids) -> str:
    """Ids of :data:`ASCII_VOCAB` -> text."""
    return ASCII_VOCAB.decode(ids)


@dataclass(frozen=True)
class Corpus:
    """An encoded corpus with its splits (int64 id arrays), vocabulary and provenance."""

    name: str
    source: str
    licence: str
    sha256: str
    n_chars: int
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray
    vocab: CharVocab = ASCII_VOCAB
    package: str | None = None

    def info(self) -> dict:
        ids = np.concatenate([self.train, self.val, self.test])
        out = {
            "name": self.name,
            "source": self.source,
            "licence": self.licence,
            "sha256": self.sha256,
            "n_chars": self.n_chars,
            "python": sys.version.split()[0],
            "unk_share": float(np.mean(ids == self.vocab.unk)),
            "vocab_size": self.vocab.size,
            "split_chars": [len(self.train), len(self.val), len(self.test)],
        }
        if self.vocab is not ASCII_VOCAB:
            out["vocab_sha256_16"] = self.vocab.digest()
            out["unk_share_test"] = float(np.mean(self.test == self.vocab.unk))
        if self.package:
            out["package"] = self.package
        return out


def _read_python(name: str) -> tuple[str, str]:
    if name == "pydoc-topics":
        topics = importlib.import_module("pydoc_data.topics").topics
        return "\n".join(topics[k] for k in sorted(topics)), "CPython stdlib pydoc_data/topics.py"
    parts = []
    for mod in _STDLIB_MODULES:
        spec = importlib.util.find_spec(mod)
        if spec is None or spec.origin is None:
            raise InputError(f"corpus {name!r}", f"the standard library module {mod} is missing from this Python")
        with open(spec.origin, encoding="utf-8") as fh:
            parts.append(fh.read())
    return "\n".join(parts)[:_STDLIB_LIMIT], "CPython stdlib sources: " + ", ".join(_STDLIB_MODULES)


def _debian_version(package: str) -> str | None:
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def read_poems(directory: Path = FORTUNES_DIR) -> list[str]:
    """The poems of ``tang300`` then ``song100``, in file order, colour codes and separators removed."""
    poems: list[str] = []
    for fname in _POEM_FILES:
        path = directory / fname
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(
                str(path), "not found: install Debian's fortunes-zh package (apt-get install fortunes-zh)"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(str(path), f"unreadable as UTF-8 text: {exc}") from None
        for entry in re.split(r"^%\n", _ANSI.sub("", raw), flags=re.MULTILINE):
            entry = entry.strip("\n")
            if entry.strip():
                poems.append(entry)
    return poems


def _poem_corpus(directory: Path = FORTUNES_DIR) -> Corpus:
    poems = read_poems(directory)
    splits: dict[str, list[str]] = {"train": [], "val": [], "test": []}
    for i, poem in enumerate(poems):
        splits["val" if i % 20 == 18 else "test" if i % 20 == 19 else "train"].append(poem)
    texts = {k: "\n\n".join(v) + "\n\n" for k, v in splits.items()}
    extra = sorted(set(texts["train"]) - set(_ASCII_CHARS))
    vocab = CharVocab(_ASCII_CHARS + tuple(extra))
    whole = texts["train"] + texts["val"] + texts["test"]
    version = _debian_version("fortunes-zh")
    return Corpus(
        name="tang-song-poems",
        source=f"Debian fortunes-zh {version or '(version unknown)'}: {directory}/tang300 + song100, "
        f"{len(poems)} poems",
        licence="GPL-3.0+ (Debian fortunes-zh, /usr/share/doc/fortunes-zh/copyright)",
        sha256=hashlib.sha256(whole.encode("utf-8")).hexdigest(),
        n_chars=len(whole),
        train=vocab.encode(texts["train"]),
        val=vocab.encode(texts["val"]),
        test=vocab.encode(texts["test"]),
        vocab=vocab,
        package=f"fortunes-zh {version}" if version else "fortunes-zh",
    )


def load_corpus(name: str) -> Corpus:
    """Load, encode and split corpus ``name`` (one of :data:`CORPORA`)."""
    if name not in CORPORA:
        raise InputError(f"corpus {name!r}", f"unknown corpus; choose one of {', '.join(CORPORA)}")
    if name == "tang-song-poems":
        corpus = _poem_corpus()
    else:
        text, source = _read_python(name)
        ids = encode(text)
        a, b = int(len(ids) * 0.9), int(len(ids) * 0.95)
        corpus = Corpus(
            name=name,
            source=source,
            licence="PSF-2.0 (Python Software Foundation License)",
            sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
            n_chars=len(ids),
            train=ids[:a],
            val=ids[a:b],
            test=ids[b:],
        )
    if corpus.n_chars < _MIN_CHARS[name]:
        raise InputError(
            f"corpus {name!r}", f"only {corpus.n_chars} characters found in {corpus.source}; need >= {_MIN_CHARS[name]}"
        )
    return corpus
