"""Word-level rules: one attribute row (128 values) plus context flags per distinct word, cached.

A word's row depends on the word alone (its part of speech from jieba's dictionary or the English
rules, and every lexicon tag), so it is computed once and reused for every occurrence; the
clause and sentence rules in ``context.py`` then adjust the rows of a whole text with array ops.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata

import numpy as np

from . import lexicon
from .segment import HAN, LATIN, LETTERS, NUM, OTHER, SPACE
from .slots import COL

N_COLS = 128

# Context flag bits (uint64).
F = {
    name: 1 << i
    for i, name in enumerate(
        (
            "content",
            "space",
            "linebreak",
            "para",
            "neg",
            "prohib",
            "qmark",
            "excl",
            "period",
            "dot",
            "sent_end",
            "clause_end",
            "wh",
            "cap",
            "ed",
            "ing",
            "le",
            "tai",
            "numeral",
            "phrase_start",
            *lexicon.FLAG_NAMES,
        )
    )
}

POS_COLS = [
    COL[f"lang.pos.{p}"]
    for p in (
        "noun",
        "verb",
        "adj",
        "adv",
        "pronoun",
        "quantifier",
        "preposition",
        "conjunction",
        "auxiliary",
        "interjection",
    )
]
_POS_SET = frozenset(POS_COLS)
WH_COLS = [COL[f"lang.question.{q}"] for q in ("who", "what", "where", "when", "why", "how", "quantity", "which")]

# jieba tag -> {slot: value}. First letters decide unless a longer tag is listed.
_JIEBA_TAGS: dict[str, dict[str, float]] = {
    "n": {"pos.noun": 0.9, "sem.object": 0.5},
    "ng": {"pos.noun": 0.8, "sem.object": 0.5},
    "nr": {"pos.noun": 0.9, "sem.person": 0.8, "entity.proper": 0.8},
    "ns": {"pos.noun": 0.9, "sem.place": 0.9, "entity.proper": 0.8},
    "nt": {"pos.noun": 0.9, "entity.proper": 0.8},
    "nz": {"pos.noun": 0.9, "entity.proper": 0.6},
    "s": {"pos.noun": 0.8, "sem.place": 0.8},
    "t": {"pos.noun": 0.8, "sem.time": 0.9},
    "f": {"pos.noun": 0.7, "sem.position": 0.9},
    "v": {"pos.verb": 0.9, "sem.action": 0.7},
    "vn": {"pos.verb": 0.6, "pos.noun": 0.5, "sem.action": 0.6},
    "a": {"pos.adj": 0.9, "sem.state": 0.7, "mod.adjective": 0.8},
    "ad": {"pos.adv": 0.8, "mod.manner": 0.7, "sem.manner": 0.7},
    "an": {"pos.noun": 0.7, "sem.state": 0.6},
    "b": {"pos.adj": 0.8, "sem.state": 0.6, "mod.adjective": 0.7},
    "z": {"pos.adj": 0.8, "sem.state": 0.8, "mod.adjective": 0.7},
    "d": {"pos.adv": 0.9},
    "r": {"pos.pronoun": 0.9},
    "m": {"pos.quantifier": 0.8, "sem.quantity": 0.8},
    "q": {"pos.quantifier": 0.9, "num.measure": 0.9, "sem.quantity": 0.6},
    "mq": {"pos.quantifier": 0.9, "num.measure": 0.7, "sem.quantity": 0.8},
    "p": {"pos.preposition": 0.9},
    "c": {"pos.conjunction": 0.9},
    "u": {"pos.auxiliary": 0.9},
    "y": {"pos.auxiliary": 0.9},
    "e": {"pos.interjection": 0.9},
    "o": {"pos.interjection": 0.7},
    "i": {"register.formal": 0.5},
    "zg": {"pos.adv": 0.6},
}
_CN_PERSON_SUFFIX = tuple("人者员师家生长士手匠工")
_CN_PLACE_SUFFIX = tuple("国省市县区村镇园场馆院店室厅山河江湖海路街站港岛州")
_CN_TIME_SUFFIX = tuple("年月日天时秒季周") + ("点钟", "分钟", "世纪")

_EN_SUFFIX: tuple[tuple[tuple[str, ...], dict[str, float]], ...] = (
    (("ly",), {"pos.adv": 0.7, "mod.manner": 0.6, "sem.manner": 0.6}),
    (("ing",), {"pos.verb": 0.6, "sem.action": 0.6}),
    (("ed",), {"pos.verb": 0.7, "sem.action": 0.6, "tense.past": 0.8}),
    (
        ("tion", "sion", "ment", "ness", "ity", "ship", "ism", "ance", "ence", "dom", "hood", "ure"),
        {"pos.noun": 0.7, "sem.object": 0.5},
    ),
    (
        ("ous", "ful", "less", "able", "ible", "ive", "al", "ic", "ish", "ary"),
        {"pos.adj": 0.6, "sem.state": 0.6, "mod.adjective": 0.6},
    ),
    (("ize", "ise", "ify"), {"pos.verb": 0.6, "sem.action": 0.6}),
    (("er", "or", "ist", "ian"), {"pos.noun": 0.6, "sem.person": 0.5}),
)
# (suffixes, a word must be longer than this for them to count, slots)
_EN_SUFFIX_MIN_LEN = tuple((sfx, max(map(len, sfx)) + 1, spec) for sfx, spec in _EN_SUFFIX)
_CONST_SPECS = (
    *_JIEBA_TAGS.values(),
    *(spec for _, spec in _EN_SUFFIX),
    _NOUN_GUESS := {"pos.noun": 0.4, "sem.object": 0.4},
)
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Za-z][0-9]|_")

_PUNCT: dict[str, tuple[str, tuple[str, ...]]] = {}
for _chars, _slot, _names in (
    ("。．｡", "period", ("period", "sent_end", "clause_end")),
    (".", "period", ("dot",)),
    ("，,﹐", "comma", ("clause_end",)),
    ("、", "enumeration", ()),
    ("；;", "semicolon", ("clause_end",)),
    ("：:", "colon", ("clause_end",)),
    ("？?", "question", ("qmark", "sent_end", "clause_end")),
    ("！!", "exclamation", ("excl", "sent_end", "clause_end")),
    ("“”‘’\"'()（）《》〈〉【】[]{}「」『』〔〕", "paired", ()),
    ("…", "other", ("sent_end", "clause_end")),
):
    for _c in _chars:
        _PUNCT[_c] = (_slot, _names)


def _build_row(values: dict[str, float] | None = None) -> np.ndarray:
    row = np.zeros(N_COLS, dtype=np.float32)
    for name, v in (values or {}).items():
        row[COL[f"lang.{name}"]] = max(row[COL[f"lang.{name}"]], v)
    return row


_TEMPLATES: dict[int, tuple[dict[str, float] | None, np.ndarray]] = {}


def _row(values: dict[str, float] | None = None) -> np.ndarray:
    """A fresh (128,) float32 row with ``values`` ({slot without "lang.": value}) set.

    Rows for the module's constant tag tables are built once and copied (the cold path analyses
    every new word, so it must not re-parse slot names each time).
    """
    hit = _TEMPLATES.get(id(values))
    if hit is not None and hit[0] is values:
        return hit[1].copy()
    row = _build_row(values)
    if values is None or any(values is spec for spec in _CONST_SPECS):
        _TEMPLATES[id(values)] = (values, row.copy())
    return row


def _flags(*names: str) -> int:
    out = 0
    for n in names:
        out |= F[n]
    return out


def _apply_lexicon(row: np.ndarray, entry) -> int:
    """Merge a lexicon entry into ``row`` (its pos tags replace the row's); return its flags."""
    cols, flag_names = entry
    if not _POS_SET.isdisjoint(cols):
        row[POS_COLS] = 0.0
    for c, v in cols.items():
        row[c] = v if c in POS_COLS else max(row[c], v)
    return _flags(*flag_names)


def _polarity(row: np.ndarray) -> None:
    """Score column from the lexicon's positive/negative tags (the tags are unit votes)."""
    pos, neg = row[COL["lang.polarity.positive"]], row[COL["lang.polarity.negative"]]
    row[COL["lang.polarity.score"]] = pos - neg


def _number(row: np.ndarray, value: float | None) -> int:
    if value is None or not math.isfinite(value):
        return 0
    row[COL["lang.num.numeral"]] = 1.0
    row[COL["lang.num.magnitude"]] = min(1.0, math.log10(1.0 + abs(value)) / 12.0)
    row[COL["lang.sem.quantity"]] = max(row[COL["lang.sem.quantity"]], 0.8)
    if not row[POS_COLS].any():
        row[COL["lang.pos.quantifier"]] = 0.8
    return F["numeral"]


def _affix_rules(word: str, row: np.ndarray) -> None:
    """Dictionary words that embed a function character (吃了饭, 去过, 第一名, 所有人, 三百个)."""
    tags = lexicon.jieba_pos()
    for k in (1, 2):  # verb + 了/过/着 (+ one-character object)
        if len(word) > k and word[-k] in "了过着" and tags.get(word[:-k], "")[:1] == "v":
            if word[-k] == "着":
                row[COL["lang.aspect.progressive"]] = 0.9
            else:
                row[COL["lang.tense.past"]] = 1.0
                row[COL["lang.aspect.perfective"]] = 0.9
            break
    if word[0] == "第" and lexicon.parse_cn_number(word[1:-1]) is not None:
        row[COL["lang.num.ordinal"]] = 1.0
    lex = lexicon.load_lexicon("zh")
    for n in (2, 1):
        head = lex.get(word[:n])
        if head is not None and COL["lang.num.quantifier"] in head[0]:
            row[COL["lang.num.quantifier"]] = 0.8
            break
    if lexicon.parse_cn_number(word[:-1]) is not None and tags.get(word[-1], "") == "q":
        _number(row, lexicon.parse_cn_number(word[:-1]))
        row[COL["lang.num.measure"]] = 0.8


def analyse_han(word: str) -> tuple[np.ndarray, int]:
    tag = lexicon.jieba_pos().get(word)
    row = _row()
    flags = F["content"]
    if tag is not None:
        spec = _JIEBA_TAGS.get(tag) or _JIEBA_TAGS.get(tag[:2]) or _JIEBA_TAGS.get(tag[0]) or {}
        row = _row(spec)
        if row[COL["lang.pos.noun"]] > 0 and len(word) > 1 and not row[COL["lang.sem.person"]]:
            if word.endswith(_CN_PERSON_SUFFIX):
                row[COL["lang.sem.person"]] = 0.6
            elif word.endswith(_CN_PLACE_SUFFIX):
                row[COL["lang.sem.place"]] = max(row[COL["lang.sem.place"]], 0.6)
            elif word.endswith(_CN_TIME_SUFFIX):
                row[COL["lang.sem.time"]] = max(row[COL["lang.sem.time"]], 0.6)
    if len(word) >= 2 and word[0] == word[1] and (len(word) == 2 or len(word) == 4 and word[2] == word[3]):
        row[COL["lang.mod.manner"]] = 0.7  # 慢慢, 高高兴兴: reduplication
        row[COL["lang.sem.manner"]] = max(row[COL["lang.sem.manner"]], 0.6)
    entry = lexicon.load_lexicon("zh").get(word)
    if entry is not None:
        flags |= _apply_lexicon(row, entry)
    if entry is None and len(word) >= 2:
        _affix_rules(word, row)
    if word[0] == "第" and len(word) > 1 and lexicon.parse_cn_number(word[1:]) is not None:
        row[COL["lang.num.ordinal"]] = 1.0
        flags |= _number(row, lexicon.parse_cn_number(word[1:]))
    else:
        flags |= _number(row, lexicon.parse_cn_number(word))
    if word == "了":
        flags |= F["le"]
    elif word == "太":
        flags |= F["tai"]
    _polarity(row)
    return row, flags


def analyse_latin(word: str) -> tuple[np.ndarray, int]:
    low = word.lower().replace("’", "'")
    lex = lexicon.load_lexicon("en")
    entry = lex.get(low)
    row = _row()
    flags = F["content"]
    if entry is None or _POS_SET.isdisjoint(entry[0]):
        if low in lexicon.EN_NUMBERS:
            flags |= _number(row, lexicon.EN_NUMBERS[low])
        elif low.endswith("n't"):
            row[COL["lang.neg.negator"]] = 1.0
            row[COL["lang.pos.auxiliary"]] = 0.8
        else:
            for suffixes, min_len, spec in _EN_SUFFIX_MIN_LEN:
                if len(low) > min_len and low.endswith(suffixes):
                    row = _row(spec)
                    break
            else:
                row = _row(_NOUN_GUESS)
    if entry is not None:
        flags |= _apply_lexicon(row, entry)
    if (
        low.endswith("ed")
        and row[COL["lang.pos.verb"]] > 0
        or (row[COL["lang.tense.past"]] > 0 and row[COL["lang.pos.verb"]] > 0)
    ):
        flags |= F["ed"]
    if low.endswith("ing") and len(low) > 4:
        flags |= F["ing"]
    if row[COL["lang.pos.adj"]] > 0:
        row[COL["lang.mod.adjective"]] = max(row[COL["lang.mod.adjective"]], 0.8)
    if _CAMEL.search(word):
        row[COL["lang.code.identifier"]] = 0.8
    if entry is None and word[0].isupper():
        flags |= F["cap"]
    if low in lexicon.phrases_en():
        flags |= F["phrase_start"]
    _polarity(row)
    return row, flags


def analyse_num(word: str) -> tuple[np.ndarray, int]:
    row = _row()
    flags = F["content"] | _number(row, lexicon.parse_digits(word))
    if word[-2:] in ("st", "nd", "rd", "th"):
        row[COL["lang.num.ordinal"]] = 1.0
    return row, flags


def analyse_other(word: str) -> tuple[np.ndarray, int]:
    """A single character that is not a letter, digit or space: punctuation, symbols, marks."""
    row = _row()
    spec = _PUNCT.get(word)
    if spec is not None:
        row[COL[f"lang.punct.{spec[0]}"]] = 1.0
        if spec[0] == "question":
            row[COL["lang.question.particle"]] = 1.0
        return row, _flags(*spec[1])
    if unicodedata.category(word)[0] in "PS":
        row[COL["lang.punct.other"]] = 1.0
        return row, 0
    return row, F["content"]  # combining marks, format characters...: no rule fires


def analyse_space(word: str) -> tuple[np.ndarray, int]:
    breaks = sum(word.count(c) for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029") - word.count("\r\n")
    flags = F["space"]
    if breaks:
        flags |= F["linebreak"]
    if breaks >= 2:
        flags |= F["para"]
    return _row(), flags


ANALYSERS = {
    HAN: analyse_han,
    LATIN: analyse_latin,
    NUM: analyse_num,
    SPACE: analyse_space,
    LETTERS: lambda w: (_row(), F["content"]),
    OTHER: analyse_other,
}


class WordTable:
    """Distinct words seen so far -> row id; rows (n, 128) float32 and flags (n,) uint64.

    Rows are pure functions of the word, so the table is a cache: once it holds more than
    ``limit`` words it is emptied before the next text (results never depend on what was seen
    before). The rows are stored column-major (``cols`` is (128, capacity)) because the context
    rules work column by column on the gathered (W, 128) array.
    """

    def __init__(self, limit: int = 200_000):
        self.limit = limit
        self.clear()

    def clear(self) -> None:
        self.ids: dict[str, int] = {}
        self.cols = np.zeros((N_COLS, 1024), dtype=np.float32)
        self.flags = np.zeros(1024, dtype=np.uint64)

    @property
    def rows(self) -> np.ndarray:
        """(capacity, 128) view of the rows."""
        return self.cols.T

    def gather(self, ids: np.ndarray, scratch: np.ndarray | None = None) -> np.ndarray:
        """(W,) row ids -> (W, 128) float32 copy of their rows, column-major (Fortran order),
        in the flat float32 array ``scratch`` when it holds at least W * 128 values."""
        if scratch is None or scratch.size < N_COLS * ids.size:
            return np.take(self.cols, ids, axis=1).T
        out = scratch[: N_COLS * ids.size].reshape(N_COLS, ids.size)
        return np.take(self.cols, ids, axis=1, out=out, mode="clip").T  # "raise" would buffer

    def lookup(self, words: list[str], kinds) -> np.ndarray:
        """(W,) int64 row ids of ``words`` (analysing the ones not seen yet)."""
        if len(self.ids) > self.limit:
            self.clear()
        ids = self.ids
        get = ids.get
        out = np.fromiter(map(get, words, itertools.repeat(-1)), dtype=np.int64, count=len(words))
        new = np.flatnonzero(out < 0)
        if new.size == 0:
            return out
        # new distinct word -> an index where it occurs (its kind is a function of the word)
        new_list = new.tolist()
        first: dict[str, int] = dict(zip(map(words.__getitem__, new_list), new_list))
        base = len(ids)
        need = base + len(first)
        if need > self.cols.shape[1]:
            cap = max(need, 2 * self.cols.shape[1])
            cols = np.zeros((N_COLS, cap), dtype=np.float32)
            cols[:, :base] = self.cols[:, :base]
            flags = np.zeros(cap, dtype=np.uint64)
            flags[:base] = self.flags[:base]
            self.cols, self.flags = cols, flags
        rows = np.empty((len(first), N_COLS), dtype=np.float32)
        flag = np.empty(len(first), dtype=np.uint64)
        for j, (w, i) in enumerate(first.items()):
            rows[j], flag[j] = ANALYSERS[int(kinds[i])](w)
            ids[w] = base + j
        # context flags that follow from the row itself
        flag |= np.where(rows[:, COL["lang.neg.negator"]] > 0, np.uint64(F["neg"]), np.uint64(0))
        flag |= np.where(rows[:, COL["lang.neg.prohibitive"]] > 0, np.uint64(F["prohib"]), np.uint64(0))
        flag |= np.where(rows[:, WH_COLS].any(axis=1), np.uint64(F["wh"]), np.uint64(0))
        self.cols[:, base:need] = rows.T
        self.flags[base:need] = flag
        out[new] = np.fromiter(
            map(ids.__getitem__, map(words.__getitem__, new_list)), dtype=np.int64, count=len(new_list)
        )
        return out
