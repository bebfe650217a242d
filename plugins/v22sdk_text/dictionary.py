"""jieba's dictionary segmentation (``jieba.lcut(run, HMM=False)``) without jieba's start-up cost.

jieba builds a Python dict of its 349k words and their 149k prefixes in every process
(``jieba.initialize``: a 9 MB marshal cache, 0.5-0.8 s of CPU), and the part-of-speech map was
read from ``dict.txt`` line by line (another 0.3-0.8 s) — for a command that cuts a sentence.
This module reads the same dictionary as three arrays — the sorted keys (words and prefixes,
exactly jieba's ``FREQ`` keys), their frequencies and part-of-speech codes — from an index file
derived once from jieba's ``dict.txt``:

* a process that cuts little text looks keys up by bisection in the sorted list (no dict built);
* once it has cut :data:`DICT_AFTER` characters, it builds the dict (0.2 s), as jieba would have,
  and looks up there: never more than about twice the better of the two choices.

The segmentation is jieba's own algorithm — the blocks of ``re_han_default``, the DAG of
dictionary words, the maximum of ``log(freq or 1) - log(total)`` summed right to left with ties
to the longer word, single ASCII letters/digits joined — on the same numbers, so the words are
the same (``tests/text/test_dictionary.py`` compares with jieba on random and real text). It is
independent of changes a program makes to jieba's global tokenizer (``jieba.add_word``).

The index is written next to jieba's own cache, in the system's temporary folder, named by the
SHA-256 of ``dict.txt`` (``v22sdk-jieba-<hash>.npz``), atomically, and read without pickles; a
damaged file is rebuilt, and one owned by another user (the temporary folder is shared) is not
read. ``V22SDK_JIEBA_INDEX_DIR`` chooses another folder.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import tempfile
import threading
from bisect import bisect_left
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["JiebaDictionary", "default_dictionary", "DICT_AFTER"]

#: characters cut by bisection after which the process builds the dict (about 0.2 s of CPU,
#: what bisection costs over a dict on this many characters)
DICT_AFTER = 60_000
_FORMAT = 1

# jieba 0.42.1's block patterns (jieba/__init__.py)
re_eng = re.compile("[a-zA-Z0-9]", re.U)
re_han_default = re.compile("([\u4e00-\u9fd5a-zA-Z0-9+#&\\._%\\-]+)", re.U)
re_skip_default = re.compile("(\r\n|\\s)", re.U)


def jieba_dict_path() -> Path:
    """jieba's default dictionary file (found without importing jieba)."""
    import importlib.util

    spec = importlib.util.find_spec("jieba")
    if spec is None or spec.origin is None:
        raise ImportError("jieba is not installed")
    return Path(spec.origin).with_name("dict.txt")


def _index_dir() -> Path:
    return Path(os.environ.get("V22SDK_JIEBA_INDEX_DIR") or tempfile.gettempdir())


def build_index(raw: bytes) -> dict[str, np.ndarray]:
    """The index arrays of a jieba dictionary file's bytes: jieba's ``gen_pfdict`` (every word and
    every prefix of it, a word's frequency from its last line, prefixes 0; the total of every
    line) and ``lexicon.jieba_pos``'s tags (a line's third field, the last line winning)."""
    lfreq: dict[str, int] = {}
    tags: dict[str, str] = {}
    total = 0
    lines = raw.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the file's last line ends with a newline
    for lineno, line in enumerate(lines, 1):
        text = line.strip().decode("utf-8")
        try:
            word, freq = text.split(" ")[:2]
            freq_i = int(freq)
        except ValueError:
            raise ValueError(f"invalid dictionary entry at line {lineno}: {text!r}") from None
        lfreq[word] = freq_i
        total += freq_i
        for ch in range(len(word)):
            if word[: ch + 1] not in lfreq:
                lfreq[word[: ch + 1]] = 0
        parts = line.decode("utf-8").split()
        if len(parts) == 3:
            tags[parts[0]] = parts[2]
    if not set(tags) <= set(lfreq):
        raise ValueError("part-of-speech keys that are not dictionary keys")
    keys = sorted(lfreq)
    tag_names = sorted(set(tags.values()))
    code = {t: i + 1 for i, t in enumerate(tag_names)}
    return {
        "format": np.array([_FORMAT]),
        "keys": np.frombuffer("\n".join(keys).encode("utf-8"), dtype=np.uint8),
        "freq": np.array([lfreq[k] for k in keys], dtype=np.int64),
        "pos": np.array([code.get(tags.get(k, ""), 0) for k in keys], dtype=np.uint16),
        "tags": np.frombuffer("\n".join(tag_names).encode("utf-8"), dtype=np.uint8),
        "total": np.array([total], dtype=np.int64),
    }


class JiebaDictionary:
    """jieba's prefix dictionary as sorted arrays (see the module's docstring)."""

    def __init__(self, arrays: dict[str, np.ndarray]):
        self.keys: list[str] = bytes(arrays["keys"]).decode("utf-8").split("\n")
        self.freq: list[int] = arrays["freq"].tolist()
        self._pos = arrays["pos"]
        self._tag_names = [""] + bytes(arrays["tags"]).decode("utf-8").split("\n")
        self.total = int(arrays["total"][0])
        if not (len(self.keys) == len(self.freq) == self._pos.size):
            raise ValueError("index arrays of different lengths")
        self.logtotal = math.log(self.total)
        self._dict: dict[str, int] | None = None
        self._cut_chars = 0
        self._lock = threading.Lock()

    # -- lookups ---------------------------------------------------------------------------------
    def _find(self, word: str) -> int:
        i = bisect_left(self.keys, word)
        return i if i < len(self.keys) and self.keys[i] == word else -1

    def freq_map(self) -> dict[str, int]:
        """jieba's ``FREQ`` dict (built on first use)."""
        if self._dict is None:
            with self._lock:
                if self._dict is None:
                    self._dict = dict(zip(self.keys, self.freq))
        return self._dict

    def get(self, word: str, default: str | None = None) -> str | None:
        """:meth:`pos`, as a mapping's ``get`` (``lexicon.jieba_pos().get(word, "")``)."""
        tag = self.pos(word)
        return default if tag is None else tag

    def pos(self, word: str) -> str | None:
        """The part-of-speech tag of a dictionary word (jieba's dict.txt), None if it has none."""
        i = self._find(word)
        if i < 0 or not self._pos[i]:
            return None
        return self._tag_names[self._pos[i]]

    # -- jieba's algorithm ----------------------------------------------------------------------
    def _dag_route(self, sentence: str, freq_get) -> list[int]:
        """route[x]: the last index of the word that starts at x on the most probable path.

        jieba's ``get_DAG`` and ``calc`` in one backward pass: the words starting at k are looked
        up once each (jieba looks every edge up twice and stores the DAG), their scores
        ``log(freq) - log(total) + best[end]`` summed in jieba's order, and the best kept with
        jieba's tie rule (``max`` over ``(score, end)``: the longer word), so the floats and
        the route are jieba's."""
        n = len(sentence)
        log, logtotal = math.log, self.logtotal
        single = -logtotal  # log(1) - log(total): a character with no entry
        best = [0.0] * (n + 1)
        route = [0] * n
        for k in range(n - 1, -1, -1):
            top, end = -math.inf, -1
            for i in range(k + 1, n + 1):  # the word sentence[k:i]
                f = freq_get(sentence[k:i])
                if f is None:
                    break
                if f:
                    p = log(f) - logtotal + best[i]
                    if p >= top:  # ends grow: a tie goes to the longer word
                        top, end = p, i - 1
            if end < 0:
                top, end = single + best[k + 1], k
            best[k] = top
            route[k] = end
        return route

    def _freq_get_bisect(self, frag: str) -> int | None:
        i = self._find(frag)
        return None if i < 0 else self.freq[i]

    def _cut_block(self, sentence: str) -> list[str]:
        freq_get: Callable[[str], int | None]
        if self._dict is None and self._cut_chars < DICT_AFTER:
            self._cut_chars += len(sentence)
            freq_get = self._freq_get_bisect
        else:
            freq_get = self.freq_map().get
        route = self._dag_route(sentence, freq_get)
        out: list[str] = []
        x, n, buf = 0, len(sentence), ""
        while x < n:
            y = route[x] + 1
            word = sentence[x:y]
            if len(word) == 1 and re_eng.match(word):
                buf += word
            else:
                if buf:
                    out.append(buf)
                    buf = ""
                out.append(word)
            x = y
        if buf:
            out.append(buf)
        return out

    def lcut(self, sentence: str) -> list[str]:
        """``jieba.lcut(sentence, HMM=False)`` with jieba's default dictionary."""
        out: list[str] = []
        for blk in re_han_default.split(sentence):
            if not blk:
                continue
            if re_han_default.match(blk):
                out += self._cut_block(blk)
            else:
                for x in re_skip_default.split(blk):
                    if re_skip_default.match(x):
                        out.append(x)
                    else:
                        out += list(x)
        return out


def _load_or_build(path_dict: Path) -> dict[str, np.ndarray]:
    raw = path_dict.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()[:24]
    index = _index_dir() / f"v22sdk-jieba-{digest}.npz"
    try:
        if hasattr(os, "getuid") and index.stat().st_uid != os.getuid():
            raise OSError("another user's index file in a shared folder: not trusted")
        with np.load(index, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        if int(arrays["format"][0]) == _FORMAT and "sha256" in arrays and bytes(arrays["sha256"]).decode() == digest:
            return arrays
    except (OSError, ValueError, KeyError, EOFError):
        pass
    arrays = build_index(raw)
    arrays["sha256"] = np.frombuffer(digest.encode(), dtype=np.uint8)
    try:
        index.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=index.name + ".", suffix=".tmp", dir=index.parent)
        with os.fdopen(fd, "wb") as fh:
            # numpy's stub: a str-keyed ** may hold "allow_pickle" (bool); passing it explicitly is
            # no fix, numpy < 2.1 (allowed by our numpy>=1.24) would save it as an array
            np.savez(fh, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, index)
    except OSError:
        pass  # a read-only temporary folder: rebuild next time
    return arrays


@functools.cache
def default_dictionary() -> JiebaDictionary:
    """jieba's default dictionary (its index built on first use, then read from the index file)."""
    return JiebaDictionary(_load_or_build(jieba_dict_path()))
