"""The rule lexicons: our TSV word lists (data/) and the part-of-speech map of jieba's dictionary."""

from __future__ import annotations

import functools
from importlib import resources

from .slots import COL

#: Context flags a lexicon line may set with "@name" (bit positions, see rules.py).
FLAG_NAMES = (
    "alt",
    "so",
    "be",
    "have",
    "zai",
    "jiang",
    "hui",
    "causative",
    "imperative",
    "de_attr",
    "di",
    "de_comp",
    "than",
    "discourse",
)


@functools.cache
def load_lexicon(lang: str) -> dict[str, tuple[dict[int, float], frozenset[str]]]:
    """``lang`` ("zh" or "en") -> {word: ({column: value}, {flag names})}. Phrases use "_"."""
    text = resources.files(__package__).joinpath("data").joinpath(f"lexicon_{lang}.tsv").read_text("utf-8")
    out: dict[str, tuple[dict[int, float], set[str]]] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            tags, words = line.split("\t")
        except ValueError:
            raise ValueError(f"lexicon_{lang}.tsv line {lineno}: expected TAGS<TAB>WORDS") from None
        cols: dict[int, float] = {}
        flags: set[str] = set()
        for tag in tags.split():
            if tag.startswith("@"):
                if tag[1:] not in FLAG_NAMES:
                    raise ValueError(f"lexicon_{lang}.tsv line {lineno}: unknown flag {tag}")
                flags.add(tag[1:])
                continue
            name, _, value = tag.partition("=")
            if f"lang.{name}" not in COL:
                raise ValueError(f"lexicon_{lang}.tsv line {lineno}: unknown slot lang.{name}")
            cols[COL[f"lang.{name}"]] = float(value) if value else 1.0
        for word in words.split():
            entry = out.setdefault(word, ({}, set()))
            for c, v in cols.items():
                entry[0][c] = max(entry[0].get(c, 0.0), v)
            entry[1].update(flags)
    return {w: (c, frozenset(f)) for w, (c, f) in out.items()}


@functools.cache
def phrases_en() -> dict[str, list[tuple[str, ...]]]:
    """First word -> multi-word English phrases of the lexicon (longest first)."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for key in load_lexicon("en"):
        if "_" in key:
            parts = tuple(key.split("_"))
            out.setdefault(parts[0], []).append(parts)
    for lst in out.values():
        lst.sort(key=len, reverse=True)
    return out


def jieba_pos():
    """word -> part-of-speech tag of jieba's own dictionary file (dict.txt), as a mapping with
    ``get`` (:class:`.dictionary.JiebaDictionary`: read from its index, no dict of 349k words built)."""
    from .dictionary import default_dictionary

    return default_dictionary()


_CN_DIGIT = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "壹": 1,
    "贰": 2,
    "叁": 3,
    "肆": 4,
    "伍": 5,
    "陆": 6,
    "柒": 7,
    "捌": 8,
    "玖": 9,
}
_CN_UNIT = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}
CN_NUMERAL_CHARS = frozenset(_CN_DIGIT) | frozenset(_CN_UNIT) | frozenset(_CN_BIG)

EN_NUMBERS = {
    w: float(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
}
EN_NUMBERS.update(
    {
        "thirty": 30.0,
        "forty": 40.0,
        "fifty": 50.0,
        "sixty": 60.0,
        "seventy": 70.0,
        "eighty": 80.0,
        "ninety": 90.0,
        "hundred": 100.0,
        "thousand": 1e3,
        "million": 1e6,
        "billion": 1e9,
        "dozen": 12.0,
    }
)


def parse_cn_number(word: str) -> float | None:
    """Value of a Chinese numeral made only of numeral characters (三百二十 -> 320), else None."""
    if not word or any(ch not in CN_NUMERAL_CHARS for ch in word):
        return None
    if all(ch in _CN_DIGIT for ch in word) and len(word) > 1:  # 二〇二四 read digit by digit
        return float("".join(str(_CN_DIGIT[ch]) for ch in word))
    total, section, digit = 0, 0, 0
    for ch in word:
        if ch in _CN_DIGIT:
            digit = _CN_DIGIT[ch]
        elif ch in _CN_UNIT:
            section += (digit or 1) * _CN_UNIT[ch]
            digit = 0
        else:
            total = (total + section + digit) * _CN_BIG[ch]
            section, digit = 0, 0
    return float(total + section + digit)


def parse_digits(word: str) -> float | None:
    """Value of a digit word ("1,024", "3.5", "２０", "21st"), else None."""
    core = word.rstrip("stndrh") if word[-1:].isalpha() else word
    core = core.translate(_FULLWIDTH).replace(",", "")
    try:
        return float(core)
    except ValueError:
        return None


_FULLWIDTH = str.maketrans("０１２３４５６７８９", "0123456789")
