"""Inputs the kit makes itself, from the plugin's ``input_spec``, independent of its strategy.

An author's ``sample_inputs()`` reaches the bugs its author thought of. The kit adds its own
inputs, derived from the declared dtype kinds, ranks and units and from a few valid examples
(*bases*) drawn from the author's strategy:

* **dtype extremes** for every accepted kind: ``uint8``/``uint16`` at 0, full scale, alternating
  and a ramp; ``int8`` ... ``int64`` at their minimum and maximum (``-32768`` included), alternating
  full scale; ``float16``/``float32``/``float64`` at 0, ±1, alternating, ramps, far beyond full
  scale, subnormal and near the type's limits; ``bool`` all False, all True, alternating;
* **shapes**: length 0, 1 and 2 on **every** axis (a ``(T, 0)`` array included), every accepted rank;
* **content**: constant and all-zero input; constants at 0.9, 0.7, 1/3, -0.55 and 0.999 of full
  scale in every accepted dtype, at the base's shape and a length every small frame divides; a
  long input built by tiling a valid one;
* **token-dense long**: each unit at the end of its range with the more tokens, the base tiled to
  about LONG_TOKENS tokens there (a long input is otherwise long in elements, short in tokens);
* **twins**: pairs of one shape, dtype, mean and low-resolution summary but other fine detail
  (opposite phases, neighbours swapped pairwise, a mirror image); a pair in every accepted dtype
  (a half and its mirror image); two large pairs, one of them with the same borders (edges) and
  other interiors -- for the fresh-instance and fresh-process comparisons in the other order;
* **thin and long**: for every pair of axes, length 1 and 2 on one and the kit's long length on
  the other (``(1, L)``, ``(L, 1)``, ``(2, L)`` ... for an image): extreme aspect ratios, where a
  plugin's resizing can round a side to 0;
* **units**: each unit at its minimum and its maximum;
* **levels**: a constant at every level of an 8-bit sample (uint8 0..255, else int8 -128..127, else
  float32 k / 255), at the smallest base's shape in the lowest accepted rank: where a plugin takes
  another path for a narrow band of levels (a normalisation skipped when the norm is already near 1),
  one of 256 levels shows it; encoded once and judged by every rule (ENCODED_ONCE);
* **sides at integer-type boundaries**: 2**k - 1, 2**k and 2**k + 1 for k = 8 and 16 on each of the
  first two axes, where a length or index kept in the smallest integer type that holds the size wraps;
* **crossed**: the families above crossed (see :func:`cross_inputs`): every accepted dtype, in a
  varied pattern, at every large size regime (long at odd lengths just over powers of two, thin and
  long), at each unit's minimum, maximum and the base's value, plain and with the dtype's special
  values (max, min, smallest normal and subnormal) planted off any regular grid -- a seeded,
  bounded selection of that product that still covers every dtype, shape, unit setting and variant;
  and tiny constants (the smallest subnormal, the smallest normal and its 2nd, 3rd and 4th roots,
  where squares and products of three and four underflow) in every float dtype;
* **rounding**: each unit at values where it times a number of the plugin's configuration is a
  multiple of 1/2 (``frame_seconds`` × ``sample_rate`` = 6.5 samples): there a count computed from
  the two (frames, samples per window) depends on their last bits, so a configuration that does not
  survive ``config()`` exactly tokenizes differently;
* **memory layout**: the same values strided, in Fortran order, byte-swapped and read-only, which
  must give the very same tokens; and every accepted dtype at two whole frames of the configuration
  in every layout (:func:`layout_inputs`; byte-swapped also with a strided view and Fortran order);
* **large in every accepted rank** (:func:`rank_inputs`): a big grey image where the base is RGB;
* **siblings**: two large images with one long side and other aspect ratios, and range siblings
  (12-bit then full-range noise in every integer dtype wider than 8 bits), for the fresh-instance and
  fresh-process comparisons;
* **unit ladders** (:func:`ladder_inputs`): each unit at 1/4, 1/2 and all of its maximum, which the
  fresh process meets first;
* for text: single characters of every kind (combining marks, astral, zero-width, NUL, a lone
  surrogate ...), whitespace only, one long repeated text.

The kit cannot know which of these the plugin accepts, so each must give valid tokens **or** a
deliberate :class:`~v22sdk.errors.InputError`; nothing else (a crash, a NaN, an out-of-range slot).
:func:`invalid_inputs` derives inputs the declared spec excludes (every dtype of the other dtype
kinds, with values a declared kind could also hold -- zeros, 0/1, whole numbers 0..127 -- and with
values of either sign; the kinds no spec declares -- structured records, void, bytes, datetime64,
timedelta64, str, and object arrays of None and of numbers; other ranks, a higher one with its new
trailing axis 1, 2, 3 and 4 long and stacked on a new leading axis; NaN/inf in every float dtype -- also planted off any regular
grid in a large input -- units out of range), each of which must be an ``InputError``.
"""

from __future__ import annotations

import unicodedata
import warnings
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ..modality import InputSpec, Modality, Sample
from ._format import number

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

#: Concrete dtypes tried for each dtype kind.
KIND_DTYPES: dict[str, tuple[str, ...]] = {
    "u": ("uint8", "uint16"),
    "i": ("int8", "int16", "int32", "int64"),
    "f": ("float16", "float32", "float64"),
    "b": ("bool",),
}
#: A long input is tiled to at least this many elements along its axis (and 16 times the base) ...
LONG_LENGTH = 4096
#: ... but never beyond this many elements in all.
LONG_ELEMENTS = 2**20
#: A long text has at least this many characters.
LONG_TEXT = 20_000
#: Token-dense long inputs aim at this many tokens (above chunk sizes such as 4096 and 8192) ...
LONG_TOKENS = 20_000
#: ... and, where a setting's tokens are too sparse to reach that within LONG_ELEMENTS, stop at this
#: many elements: the extra length would buy few tokens at the cost of one long encode per use (the
#: audio modality at 1 kHz: about 1,000 tokens here against 2,100 at LONG_ELEMENTS, 4 s of CPU an
#: encode against 8), and the plain long input already spans LONG_ELEMENTS.
SPARSE_DENSE_ELEMENTS = 2**19
#: Constant inputs at these fractions of full scale (float: the values themselves), in every
#: accepted dtype: values where sums of squares minus squared sums cancel badly.
CONSTANT_FRACTIONS = (0.9, 0.7, 1 / 3, -0.55, 0.999)
#: Lengths divisible by every whole number up to 10 (and many more): the constant inputs are also
#: given this long on axis 0 (the largest one within CONSTANT_ELEMENTS), so frames tile them exactly.
WHOLE_LENGTHS = (5040, 2520, 720, 360, 120, 60)
CONSTANT_ELEMENTS = 2**16
#: At most this many crossed inputs (dtype x size regime x unit setting x variant), chosen by a
#: covering pass and then CROSS_SEED's random draw (see cross_inputs) ...
CROSS_MAX = 24
CROSS_SEED = 20_240_404
#: ... at lengths 2**p + 1 and 2**p + an odd k (seeded) for these p, where they fit LONG_ELEMENTS.
CROSS_POWERS = (12, 16)
CROSS_ODD = 3
#: Twin inputs are this long on their first (up to two) axes: a multiple of every power of two
#: an area thumbnail may reduce by.
TWIN_SIDE = 64
#: ... and two pairs are large, where a plugin may take another path for big inputs (a downscale, a
#: memo of expensive results): an image this many pixels a side (over 1024, a multiple of
#: TWIN_SIDE), a signal this long (over 2**16), at most TWIN_LARGE_ELEMENTS elements.
TWIN_LARGE_SIDE = 1088
TWIN_LARGE_LENGTH = 2**16 + TWIN_SIDE
TWIN_LARGE_ELEMENTS = 2**23
#: Two large inputs with one side SIBLING_SIDES[axis] on axis 0 or 1 and the other this many eighths
#: of it (a pair of siblings: the same long side, other aspect ratios). Each pair has a long side of
#: its own, met by no other input of the kit: a memo keyed on the long side that another input filled
#: first would give both siblings the same (wrong) plan in every process.
SIBLING_SIDES = (1160, 1240)
SIBLING_EIGHTHS = (4, 6)
#: Range siblings: in every accepted integer dtype wider than 8 bits, noise of 12 bits (0..4095, or
#: -2048..2047) and then noise over the dtype's full range (RANGE_SEED), at RANGE_SIDE a side (over 256:
#: where a plugin may treat an image as a camera frame) or RANGE_LENGTH samples: a bit depth learned
#: once from the first such input reads the second on the wrong scale.
RANGE_SIDE = 320
RANGE_LENGTH = 2 * LONG_LENGTH
RANGE_SEED = 12
RANGE_LABEL = "range siblings"
#: One pair, long on axis 0 (a memo keyed on the long side does not care which axis it is on; a
#: second pair, long on axis 1, cost a second of CPU per vision grid configuration).
SIBLING_AXES = 1
#: One large pair agrees on its borders: this fraction of each of its first (up to two) axes, at
#: either end, is the same in both (the first and last rows and columns included); they differ only
#: inside, so a memo keyed on the edges of an input (a header, a margin) gives the second the first's
#: tokens.
TWIN_BORDER = 1 / 4
#: Constants at every level of an 8-bit sample, in one accepted dtype (uint8: 0..255; else int8:
#: -128..127; else float32: k / 255), at the smallest base's shape (at most LEVEL_ELEMENTS elements)
#: in the lowest accepted rank (a grey image, a mono signal): a plugin that takes another path for a
#: narrow band of levels (a normalisation skipped when the norm is within 1 % of 1: level 17 of 255 in
#: vision) shows at one of them.
LEVEL_ELEMENTS = 2**12
#: Families of the kit's inputs that are many and tiny: encoded once, judged by every rule and for a
#: crash, an InputError that says nothing or a change in place, but not tokenized again (twice, in a
#: batch, by the rebuilt modality): their point is the rules at many values, not the behaviours.
ENCODED_ONCE = ("levels",)
#: The family of the dtype layout inputs (:func:`layout_inputs`). Its views of another kit input's
#: values (``same_as`` set) are encoded once, judged by every rule and compared with that input's
#: tokens, but not tokenized again, batched or rebuilt: the input they copy is.
VIEWS = "view"


def compared_only(ki: KitInput) -> bool:
    """Whether ``ki`` is a view that is only compared with the input whose values it holds."""
    return ki.family == VIEWS and ki.same_as is not None


#: Sides at the boundaries of the unsigned 8- and 16-bit integer types: 2**k - 1, 2**k and 2**k + 1
#: for these k, on each of the first two axes. A size or index kept in the smallest integer type that
#: holds the last index (np.min_scalar_type(n - 1)) wraps at exactly 2**k: an exclusive end of 256 in
#: uint8 is 0; one kept for n - 2 or n + 1 wraps a side earlier or later.
BOUNDARY_POWERS = (8, 16)
#: Dtype kinds an input spec may leave out, with the dtypes tried for each (complex is never declared).
UNDECLARED_DTYPES: dict[str, tuple[str, ...]] = {**KIND_DTYPES, "c": ("complex64", "complex128")}

#: Single characters (and tiny texts) that stress text tokenizers.
TEXT_EDGES: tuple[tuple[str, str], ...] = (
    ("one letter", "a"),
    ("one capital", "A"),
    ("one space", " "),
    ("one newline", "\n"),
    ("one digit", "0"),
    ("precomposed é", "\u00e9"),
    ("decomposed é (NFD)", "e\u0301"),
    ("lone combining mark", "\u0301"),
    ("stacked combining marks", "a\u0301\u0323\u0302"),
    ("one Han character", "\u4e2d"),
    ("astral emoji", "\U0001f600"),
    ("emoji with skin tone", "\U0001f44d\U0001f3fd"),
    ("zero-width joiner", "\u200d"),
    ("byte-order mark", "\ufeff"),
    ("NUL", "\x00"),
    ("CR LF", "\r\n"),
    ("line separator", "\u2028"),
    ("lone surrogate", "\ud800"),
    ("right-to-left", "\u05e9\u05dc\u05d5\u05dd"),
    ("whitespace only", " \t\n "),
    ("punctuation only", "!?.,;:"),
    ("digits only", "0123456789"),
    ("Han punctuation", "\u3002\uff0c"),
    ("constant text", "a" * 1000),
    ("repeated words", "ab " * 300),
)


@attrs.frozen(eq=False)
class KitInput:
    """One input the kit derived: a label for messages, the sample, what family it is from, the
    dtype kind and rank it stands for (for the spec's truthfulness), and ``same_as``: the index of
    the input whose tokens it must reproduce exactly (the same values in another memory layout);
    ``twin_of``: the index of its twin (same shape, dtype and mean, other detail: see
    :func:`_twin_inputs`), whose tokens a fresh instance and a fresh process compute in the other order."""

    label: str
    sample: Sample
    family: str
    kind: str | None = None
    rank: int | None = None
    same_as: int | None = None
    twin_of: int | None = None


# -- bases ------------------------------------------------------------------------------------
def draw_examples(modality: Modality, strategy: SearchStrategy[Sample], count: int, key: bytes) -> list[Sample]:
    """``count`` examples of ``strategy`` from a fixed seed stream (the kit's own inputs never vary
    between runs), without shrinking."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    found: list[Sample] = []

    def collect(example: Any) -> None:
        found.append(example)

    collect._hypothesis_internal_add_digest = key  # type: ignore[attr-defined]
    run = settings(
        max_examples=count,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )(given(strategy)(collect))
    run = seed(int.from_bytes(key[-8:].ljust(8, b"\0"), "big"))(run)
    run()
    return found


def _size(data: Any) -> int:
    if isinstance(data, np.ndarray):
        return int(data.size)
    return len(data) if isinstance(data, str) else 0


def _varied(data: Any) -> bool:
    if isinstance(data, np.ndarray):
        return data.size > 1 and data.dtype.kind in "biuf" and bool(np.any(data != data.flat[0]))
    return isinstance(data, str) and len(set(data)) > 1


def choose_bases(examples: list[Sample]) -> list[Sample]:
    """Up to two bases: the richest example (varied data, most elements) and the smallest."""
    usable = [s for s in examples if _size(s.data) > 0]
    if not usable:
        return examples[:1]
    rich = max(usable, key=lambda s: (_varied(s.data), min(_size(s.data), 1 << 16)))
    small = min(usable, key=lambda s: (_size(s.data), not _varied(s.data)))
    return [rich] if small is rich else [rich, small]


# -- arrays -----------------------------------------------------------------------------------
def _alternating(shape: tuple[int, ...], lo: Any, hi: Any, dtype: np.dtype) -> np.ndarray:
    flat: np.ndarray = np.where(np.arange(int(np.prod(shape))) % 2 == 0, lo, hi).astype(dtype)
    return flat.reshape(shape)


def _ramp(shape: tuple[int, ...], lo: float, hi: float, dtype: np.dtype) -> np.ndarray:
    n = int(np.prod(shape))
    values = np.linspace(lo, hi, n) if n > 1 else np.array([hi], dtype=np.float64)
    if dtype.kind in "iu":
        values = np.round(values)
    return values.astype(dtype).reshape(shape)


def _dtype_patterns(dtype_name: str, base: np.ndarray) -> list[tuple[str, np.ndarray]]:
    dtype = np.dtype(dtype_name)
    shape = base.shape
    out: list[tuple[str, np.ndarray]] = []
    if dtype.kind == "b":
        out += [
            ("all False", np.zeros(shape, dtype)),
            ("all True", np.ones(shape, dtype)),
            ("alternating False/True", _alternating(shape, False, True, dtype)),
        ]
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = int(info.min), int(info.max)
        out.append(("alternating full scale", _alternating(shape, lo, hi, dtype)))
        out.append(("zeros", np.zeros(shape, dtype)))
        out.append(("maximum everywhere", np.full(shape, hi, dtype)))
        if dtype_name in ("uint8", "uint16", "int16", "int32"):
            out.append(("ramp over the full range", _ramp(shape, lo, hi, dtype)))
        if lo < 0:
            out.append(("minimum everywhere", np.full(shape, lo, dtype)))
    else:
        info = np.finfo(dtype)
        out += [("alternating 0/1", _alternating(shape, 0.0, 1.0, dtype)), ("ramp 0..1", _ramp(shape, 0.0, 1.0, dtype))]
        if dtype_name != "float16":
            out += [
                ("zeros", np.zeros(shape, dtype)),
                ("ones", np.ones(shape, dtype)),
                ("minus ones", np.full(shape, -1.0, dtype)),
                ("alternating -1/1", _alternating(shape, -1.0, 1.0, dtype)),
                ("ramp -1..1", _ramp(shape, -1.0, 1.0, dtype)),
                ("alternating ±1000", _alternating(shape, -1000.0, 1000.0, dtype)),
                ("constant 10", np.full(shape, 10.0, dtype)),
                ("subnormal values", _alternating(shape, 0.0, float(info.smallest_subnormal), dtype)),
            ]
            if base.dtype.kind in "biuf":
                with np.errstate(all="ignore"):
                    converted = base.astype(dtype)
                if np.isfinite(converted).all():
                    out.append(("the base's values", converted))
                    out.append(("the base's values × 1e-30", (base.astype(np.float64) * 1e-30).astype(dtype)))
        # the extreme magnitudes in every float dtype, with either sign and each sign alone: a range
        # check on one side only (x.max() > limit) lets the other through
        big = float(info.max)
        out += [
            ("near the largest finite value", _alternating(shape, -big / 2, big / 2, dtype)),
            ("the largest finite value everywhere", np.full(shape, big, dtype)),
            ("the most negative finite value everywhere", np.full(shape, -big, dtype)),
        ]
    return out


def _take(x: np.ndarray, axis: int, n: int) -> np.ndarray:
    if x.shape[axis] >= n:
        return np.take(x, np.arange(n), axis=axis)
    return np.take(x, np.arange(n) % max(int(x.shape[axis]), 1), axis=axis)


def _long(x: np.ndarray, axis: int) -> np.ndarray | None:
    length = x.shape[axis]
    if length == 0 or x.size == 0:
        return None
    target = max(LONG_LENGTH, 16 * length)
    reps = -(-target // length)
    reps = min(reps, max(2, LONG_ELEMENTS // x.size))
    tiles = [1] * x.ndim
    tiles[axis] = reps
    tiled: np.ndarray = np.tile(x, tiles)
    return tiled


def _constant_value(dtype: np.dtype, fraction: float) -> Any:
    if dtype.kind == "f":
        return dtype.type(fraction)
    info = np.iinfo(dtype)
    if dtype.kind == "u":
        return dtype.type(round(abs(fraction) * int(info.max)))
    return dtype.type(round(fraction * (int(info.max) if fraction > 0 else -int(info.min))))


def _constant_inputs(kinds: list[str], x: np.ndarray, units: dict[str, Any], src: Any) -> list[KitInput]:
    """Constant inputs at CONSTANT_FRACTIONS of full scale in every accepted dtype (not bool), at
    the base's shape and at a whole length on axis 0 (see WHOLE_LENGTHS)."""
    out: list[KitInput] = []
    if x.ndim == 0 or x.size == 0:
        return out
    rest = max(1, x.size // max(int(x.shape[0]), 1))
    whole = next((n for n in WHOLE_LENGTHS if n * rest <= CONSTANT_ELEMENTS), None)
    shapes = [x.shape] + ([(whole,) + x.shape[1:]] if whole and whole != x.shape[0] else [])
    for kind in kinds:
        if kind == "b":
            continue
        for dtype_name in KIND_DTYPES[kind]:
            dtype = np.dtype(dtype_name)
            for fraction in CONSTANT_FRACTIONS:
                value = _constant_value(dtype, fraction)
                for shape in shapes:
                    out.append(
                        KitInput(
                            f"constant {dtype_name} {number(value)} ({fraction:.4g} of full scale), shape {shape}",
                            Sample(np.full(shape, value, dtype), units, src),
                            "content",
                            kind=kind,
                            rank=len(shape),
                        )
                    )
    return out


def _fit(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    for axis, n in enumerate(shape):
        x = _take(x, axis, n)
    return np.ascontiguousarray(x)


def _pair_swapped(x: np.ndarray, axis: int) -> np.ndarray:
    """Neighbours 2k and 2k+1 along ``axis`` swapped: every aligned block of an even size keeps its
    values, so every area thumbnail by a power of two is unchanged."""
    index = np.arange(x.shape[axis])
    index = index ^ 1 if x.shape[axis] % 2 == 0 else index
    return np.ascontiguousarray(np.take(x, index, axis=axis))


def _twin_inputs(x: np.ndarray, units: dict[str, Any], src: Any, kinds: list[str] | None = None) -> list[KitInput]:
    """Pairs of inputs of one shape and dtype, one mean and one low-resolution summary but other
    fine detail: alternating values and checkerboards in opposite phase, the base and the base with
    neighbours swapped pairwise, the base and its mirror image. A cache keyed on such a summary
    gives the second of a pair the first one's tokens.

    Also, in every dtype of the accepted ``kinds`` (the base's included), one pair of that dtype:
    the first half at full scale against its mirror image (a conversion cached per shape and dtype
    gives the second the first's tokens); and two large pairs: the first half at full scale against
    its mirror image (other edges), and zero borders (TWIN_BORDER of each side, at either end) with
    the first half of the interior at full scale against its mirror image (the same edges, the same
    mean: a memo keyed on them); and, for an image (two spatial axes), large siblings: one side
    SIBLING_SIDES[0] on axis 0, the other SIBLING_EIGHTHS of it (the same long side, other
    aspect ratios: a resize plan memo keyed on the long side); and range siblings (see RANGE_SIDE)."""
    if x.size == 0 or x.dtype.kind not in "biuf":
        return []
    spatial = min(x.ndim, 2)
    shape = (
        (TWIN_SIDE,) * spatial + x.shape[spatial:]
        if x.ndim > 1
        else (max(TWIN_SIDE, -(-min(x.shape[0], LONG_LENGTH) // TWIN_SIDE) * TWIN_SIDE),)
    )
    grids = np.indices(shape[:spatial])
    pairs: list[tuple[str, np.ndarray, np.ndarray]] = []

    def pattern(mask: np.ndarray, dtype: np.dtype = x.dtype) -> np.ndarray:
        """``mask`` at full scale of ``dtype``, the rest 0."""
        hi: Any = True if dtype.kind == "b" else (1.0 if dtype.kind == "f" else np.iinfo(dtype).max)
        full = mask.reshape(mask.shape + (1,) * (x.ndim - spatial))
        out = np.ascontiguousarray(np.broadcast_to(np.where(full, hi, 0).astype(dtype), mask.shape + shape[spatial:]))
        if len(shape) > spatial and shape[-1] > 1:  # the last channel (an alpha?) at full scale
            out[..., -1] = hi
        return out

    def halves(sides: tuple[int, ...], border: float = 0.0) -> np.ndarray:
        """True on the first half (along the last spatial axis) of the part of ``sides`` inside a
        border of ``border`` of each side at either end."""
        index = np.indices(sides)
        inside = np.ones(sides, dtype=bool)
        for axis, n in enumerate(sides):
            band = int(n * border)
            inside &= (index[axis] >= band) & (index[axis] < n - band)
        band = int(sides[-1] * border)
        first_half: np.ndarray = inside & (index[-1] < band + (sides[-1] - 2 * band) // 2)
        return first_half

    last = grids[spatial - 1] % 2 == 1
    pairs.append((f"alternating along axis {spatial - 1}", pattern(last), pattern(~last)))
    if spatial == 2:
        rows = grids[0] % 2 == 1
        board = (grids[0] + grids[1]) % 2 == 1
        pairs.append(("alternating along axis 0", pattern(rows), pattern(~rows)))
        pairs.append(("checkerboard", pattern(board), pattern(~board)))
    fitted = _fit(x, shape)
    for axis in range(spatial):
        pairs.append((f"the base with neighbours swapped along axis {axis}", fitted, _pair_swapped(fitted, axis)))
    pairs.append(("the base mirrored", fitted, np.ascontiguousarray(np.flip(fitted, axis=spatial - 1))))
    half = halves(shape[:spatial])
    for dtype_name in [d for k in (kinds or []) if k in KIND_DTYPES for d in KIND_DTYPES[k]]:
        dtype = np.dtype(dtype_name)
        pairs.append(
            (
                f"{dtype_name}: the first half at full scale, mirrored",
                pattern(half, dtype),
                pattern(half[..., ::-1], dtype),
            )
        )
    large = (TWIN_LARGE_SIDE,) * spatial + x.shape[spatial:] if x.ndim > 1 else (TWIN_LARGE_LENGTH,)
    if int(np.prod(large)) <= TWIN_LARGE_ELEMENTS:  # large: a half at full scale and mirrored, edges or not
        for what, border in (
            ("large: the first half at full scale, mirrored", 0.0),
            ("large: zero borders, the first half of the interior at full scale, mirrored", TWIN_BORDER),
        ):
            mask = halves(large[:spatial], border)
            pairs.append((what, pattern(mask), pattern(np.flip(mask, spatial - 1))))
        if spatial == 2:  # large, one long side, other aspect ratios: a plan memo keyed on the long side
            for axis in range(SIBLING_AXES):
                side = SIBLING_SIDES[axis]
                sides = [
                    tuple(side if a == axis else side * k // 8 for a in range(2)) + x.shape[2:] for k in SIBLING_EIGHTHS
                ]
                pairs.append(
                    (
                        f"large siblings: {side} on axis {axis}, the other side "
                        f"{sides[0][1 - axis]} then {sides[1][1 - axis]}",
                        _fit(x, sides[0]),
                        _fit(x, sides[1]),
                    )
                )
    # a bit depth learned from the first big input: 12-bit values, then the full range, per wide integer dtype
    ranged = (RANGE_SIDE,) * spatial + x.shape[spatial:] if x.ndim > 1 else (RANGE_LENGTH,)
    rng = np.random.default_rng(RANGE_SEED)
    for dtype_name in [d for k in (kinds or []) if k in "iu" for d in KIND_DTYPES[k] if np.dtype(d).itemsize >= 2]:
        info = np.iinfo(dtype_name)
        low = rng.integers(0 if info.min == 0 else -(2**11), 2**12 if info.min == 0 else 2**11, size=ranged)
        full = rng.integers(int(info.min), int(info.max), size=ranged, dtype=dtype_name, endpoint=True)
        pairs.append((f"{RANGE_LABEL}: {dtype_name} of 12 bits, then of the full range", low.astype(dtype_name), full))
    out: list[KitInput] = []
    for index, (what, a, b) in enumerate(pairs):
        if a.shape == b.shape and a.tobytes() == b.tobytes():
            continue
        first = len(out)
        family = "long" if what.startswith("large") else "twin"  # a large one is batched with a short one
        other = "the other phase" if a.shape == b.shape else "the sibling"
        out.append(
            KitInput(
                f"twin {index}a: {what}, shape {a.shape}",
                Sample(a.copy(), units, src),
                family,
                kind=a.dtype.kind,
                rank=a.ndim,
            )
        )
        out.append(
            KitInput(
                f"twin {index}b: {what}, {other}, shape {b.shape}",
                Sample(b.copy(), units, src),
                family,
                kind=b.dtype.kind,
                rank=b.ndim,
                twin_of=first,
            )
        )
    return out


def _twins(
    out: list[KitInput], label: str, data: np.ndarray, units: dict[str, Any], src: Any, kind: str
) -> list[KitInput]:
    """The same values (the input just added to ``out``) read-only and, for multi-byte dtypes, in
    non-native byte order: they must give the very same tokens."""
    ref = len(out) - 1
    frozen = data.copy()
    frozen.flags.writeable = False
    twins = [
        KitInput(
            f"{label}, read-only (same values)",
            Sample(frozen, units, src),
            "layout",
            kind=kind,
            rank=data.ndim,
            same_as=ref,
        )
    ]
    if data.dtype.itemsize > 1:
        twins.append(
            KitInput(
                f"{label} in non-native byte order (same values)",
                Sample(data.astype(data.dtype.newbyteorder()), units, src),
                "layout",
                kind=kind,
                rank=data.ndim,
                same_as=ref,
            )
        )
    return twins


def _thin_inputs(x: np.ndarray, units: dict[str, Any], src: Any) -> list[KitInput]:
    """For every ordered pair of axes (thin, long): ``x`` cut to 1 and 2 on the thin axis and tiled
    to the kit's long length on the long one (extreme aspect ratios: ``(1, L)``, ``(L, 2)`` ...)."""
    out: list[KitInput] = []
    if x.ndim < 2 or x.size == 0:
        return out
    for thin in range(x.ndim):
        for long_axis in range(x.ndim):
            if long_axis == thin:
                continue
            for n in (1, 2):
                cut = _take(x, thin, n)
                length = max(LONG_LENGTH, 16 * x.shape[long_axis])
                rest = max(1, cut.size // max(cut.shape[long_axis], 1))
                length = max(2 * cut.shape[long_axis], min(length, LONG_ELEMENTS // rest))
                data = np.ascontiguousarray(_take(cut, long_axis, length))
                out.append(
                    KitInput(
                        f"thin and long: length {n} on axis {thin}, {length} on axis {long_axis}: shape {data.shape}",
                        Sample(data, units, src),
                        "thin",
                        kind=x.dtype.kind,
                        rank=x.ndim,
                    )
                )
    return out


#: Awkward sizes: an image over 1024 pixels on one side -- twice a power-of-two working side, and
#: just over one -- ...
AWKWARD_LONG = (2048, 1025)
#: ... whose other side n is odd and chosen so that scaling back from a working image whose long
#: side is one of these (m = floor or ceil of n x working / long pixels) rounds up in float64:
#: m * (n / m) > n, so a box or coordinate scaled back and rounded up lands past the input's end.
AWKWARD_WORKING = (256, 512, 1024)
#: At most this many other sides per long side (the fewest that meet every working side found).
AWKWARD_COUNT = 2


def _scale_back_rounds_up(n: int, long: int) -> set[tuple[int, str]]:
    """The (working side, rounding) at which n pixels, scaled to ``working / long`` and back by
    ``n / m``, come back as more than n in float64."""
    found: set[tuple[int, str]] = set()
    for working in AWKWARD_WORKING:
        if working >= long:
            continue
        exact = n * working / long
        for how, m in (("floor", int(np.floor(exact))), ("ceil", int(np.ceil(exact)))):
            if m >= 1 and m * (n / m) > n:
                found.add((working, how))
    return found


def awkward_sides(long: int, cap: int) -> list[int]:
    """Odd sides n <= ``cap`` for an image ``long`` pixels on its other side, chosen greedily (the
    smallest that adds the most) to cover every (working side, rounding) where a scale back rounds up."""
    candidates = list(range(3, cap + 1, 2))
    covered: set[tuple[int, str]] = set()
    out: list[int] = []
    while candidates and len(out) < AWKWARD_COUNT:
        best = max(candidates, key=lambda n: (len(_scale_back_rounds_up(n, long) - covered), -n))
        new = _scale_back_rounds_up(best, long) - covered
        if not new:
            break
        out.append(best)
        covered |= new
    return out


def _awkward_inputs(x: np.ndarray, units: dict[str, Any], src: Any) -> list[KitInput]:
    """The base fitted to (n, long) and (long, n) on its first two axes, for each long side in
    AWKWARD_LONG and its awkward other sides (:func:`awkward_sides`), within LONG_ELEMENTS."""
    out: list[KitInput] = []
    if x.ndim < 2 or x.size == 0:
        return out
    rest = max(1, x.size // (int(x.shape[0]) * int(x.shape[1])))
    for long in AWKWARD_LONG:
        for n in awkward_sides(long, LONG_ELEMENTS // (long * rest)):
            for sides in ((n, long), (long, n)):
                data = _fit(x, sides + x.shape[2:])
                out.append(
                    KitInput(
                        f"awkward size: {sides[0]} x {sides[1]} (a scale back from a working size rounds up), "
                        f"shape {data.shape}",
                        Sample(data, units, src),
                        "long",
                        kind=x.dtype.kind,
                        rank=x.ndim,
                    )
                )
    return out


def level_inputs(spec: InputSpec, small: Sample) -> list[KitInput]:
    """A constant at every level of an 8-bit sample (see LEVEL_ELEMENTS) in the first accepted of
    uint8, int8 and float32 (as k / 255), at ``small``'s shape in the lowest accepted rank (its
    trailing axes dropped: a grey image, a mono signal), axis 0 cut to LEVEL_ELEMENTS elements."""
    x = np.asarray(small.data)
    if x.ndim == 0 or x.size == 0 or x.dtype.kind not in "biuf":
        return []
    low = min((r for r in spec.ndim if r >= 1), default=x.ndim)
    while x.ndim > low:
        x = x[..., 0]
    rest = max(1, x.size // max(int(x.shape[0]), 1))
    shape = (max(1, min(int(x.shape[0]), LEVEL_ELEMENTS // rest)),) + x.shape[1:]
    levels: list[Any]
    dtype: np.dtype[Any]
    if "u" in spec.dtypes:
        dtype, levels = np.dtype("uint8"), list(range(256))
    elif "i" in spec.dtypes:
        dtype, levels = np.dtype("int8"), list(range(-128, 128))
    elif "f" in spec.dtypes:
        dtype, levels = np.dtype("float32"), [k / 255 for k in range(256)]
    else:
        return []
    units, src = dict(small.units), small.source
    return [
        KitInput(
            f"level sweep: {dtype.name} constant {number(dtype.type(level))}, shape {shape}",
            Sample(np.full(shape, level, dtype), units, src),
            "levels",
            kind=dtype.kind,
            rank=len(shape),
        )
        for level in levels
    ]


def boundary_inputs(x: np.ndarray, units: dict[str, Any], src: Any) -> list[KitInput]:
    """``x`` fitted to 2**k - 1, 2**k and 2**k + 1 (k in BOUNDARY_POWERS) on each of its first two
    axes, the other of them cut so that the input fits LONG_ELEMENTS; those longer than LONG_LENGTH
    are long inputs."""
    out: list[KitInput] = []
    if x.ndim == 0 or x.size == 0:
        return out
    for axis in range(min(x.ndim, 2)):
        for p in BOUNDARY_POWERS:
            for n in (2**p - 1, 2**p, 2**p + 1):
                shape = list(x.shape)
                shape[axis] = n
                if x.ndim > 1:
                    other = 1 - axis
                    rest = max(1, int(np.prod(shape)) // (n * shape[other]))
                    shape[other] = max(1, min(shape[other], LONG_ELEMENTS // (n * rest)))
                if int(np.prod(shape)) > LONG_ELEMENTS:
                    continue
                data = _fit(x, tuple(shape))
                where = f"2**{p}" + (f" {n - 2**p:+d}" if n != 2**p else "")
                out.append(
                    KitInput(
                        f"side at an integer-type boundary: {n} ({where}) on axis {axis}, shape {data.shape}",
                        Sample(data, units, src),
                        "long" if n > LONG_LENGTH else "shape",
                        kind=x.dtype.kind,
                        rank=x.ndim,
                    )
                )
    return out


# -- crossed families ---------------------------------------------------------------------------
def _varied_pattern(dtype_name: str, x: np.ndarray) -> tuple[str, np.ndarray]:
    """The first pattern of ``dtype_name`` at ``x``'s shape whose values vary (so a change in place
    shows), else the first."""
    patterns = _dtype_patterns(dtype_name, x)
    for what, data in patterns:
        if _varied(data):
            return what, data
    return patterns[0]


def _odd_lengths(cap: int, rng: np.random.Generator) -> list[int]:
    """Odd lengths just over powers of two (2**p + 1, 2**p + a seeded odd k) that fit ``cap``;
    the largest odd length within ``cap`` when none does."""
    out: list[int] = []
    for p in CROSS_POWERS:
        ks = [2 * int(k) + 1 for k in rng.integers(1, 2 ** (p - 2), size=CROSS_ODD - 1)]
        out += [n for n in [2**p + 1] + [2**p + k for k in ks] if n <= cap and n not in out]
    if not out and cap > 2:
        out.append(cap - 1 + cap % 2)
    return out


def _special_values(dtype: np.dtype) -> list[Any]:
    if dtype.kind == "f":
        info = np.finfo(dtype)
        return [info.max, -info.max, info.smallest_subnormal, info.smallest_normal, -info.smallest_normal]
    if dtype.kind in "iu":
        info_i = np.iinfo(dtype)
        return [info_i.max, info_i.min]
    return [True, False]


def off_grid_positions(shape: tuple[int, ...]) -> list[int]:
    """Flat indices off every regular grid: (1, 1, ...), an odd offset past the middle, the last
    element (each only once)."""
    size = int(np.prod(shape))
    if size == 0:
        return []
    ones = int(np.ravel_multi_index(tuple(min(1, n - 1) for n in shape), shape))
    odd = min(size - 1, size // 2 + 3 - (size // 2) % 2)
    return list(dict.fromkeys([ones, odd, size - 1]))


def _planted(data: np.ndarray) -> np.ndarray:
    out: np.ndarray = data.copy()
    values = _special_values(out.dtype)
    with np.errstate(all="ignore"):
        for i, flat in enumerate(off_grid_positions(out.shape)):
            out.flat[flat] = values[i % len(values)]
    return out


#: Odd lengths tried (seeded) when looking for one whose quotient or product by a unit rounds up.
ROUNDING_TRIES = 256


def _rounding_lengths(
    x: np.ndarray, settings: list[tuple[str, dict[str, Any]]], rng: np.random.Generator
) -> list[tuple[tuple[int, ...], int]]:
    """For each unit setting and each unit value v in it: an odd length n on axis 0 just over the
    largest power of two in CROSS_POWERS that fits, where n / v and n * v (a duration from a rate,
    a count from a period) round up in float32, so an offset or count kept in single precision
    lands past the input's end."""
    rest = max(1, x.size // max(int(x.shape[0]), 1))
    cap = LONG_ELEMENTS // rest
    fitting = [p for p in CROSS_POWERS if 2**p + 1 <= cap]
    if not fitting:
        return []
    p = fitting[-1]
    span = max(1, min(2 ** (p - 2), (cap - 2**p) // 2))
    candidates = [n for k in rng.integers(0, span, ROUNDING_TRIES) if (n := 2**p + 2 * int(k) + 1) <= cap]
    out: list[tuple[tuple[int, ...], int]] = []
    for u, (_, setting) in enumerate(settings):
        for value in setting.values():
            if not isinstance(value, (int, float)) or not np.isfinite(value) or value <= 0:
                continue
            for op in (np.divide, np.multiply):
                n = next((n for n in candidates if float(np.float32(op(n, value))) > float(op(n, value))), None)
                if n is not None and ((n,) + x.shape[1:], u) not in out:
                    out.append(((n,) + x.shape[1:], u))
    return out


def cross_inputs(spec: InputSpec, base: Sample) -> list[KitInput]:
    """Families crossed, within CROSS_MAX inputs: every accepted dtype (bool included) in a varied
    pattern, at every large size regime (long along each of the first two axes at odd lengths just
    over powers of two, thin and long), at each unit's minimum and maximum and the base's units,
    plain or with the dtype's special values planted off any grid (:func:`off_grid_positions`).

    The full product is ordered by a seeded shuffle (CROSS_SEED); a first pass takes each item that
    brings a dtype, a (shape, unit setting) pair or a variant not yet taken -- so every long length
    meets every unit extreme, where a duration's float32 rounding shows -- a second pass fills up
    to CROSS_MAX."""
    x = np.asarray(base.data)
    if x.ndim == 0 or x.size == 0:
        return []
    units, src = dict(base.units), base.source
    rng = np.random.default_rng(CROSS_SEED)
    dtypes = [d for k in spec.dtypes if k in KIND_DTYPES for d in KIND_DTYPES[k]]
    shapes: list[tuple[int, ...]] = []
    for axis in range(min(x.ndim, 2)):
        rest = max(1, x.size // int(x.shape[axis]))
        for n in _odd_lengths(LONG_ELEMENTS // rest, rng):
            shapes.append(x.shape[:axis] + (n,) + x.shape[axis + 1 :])
    for ki in _thin_inputs(x, units, src):
        if ki.sample.data.shape not in shapes:
            shapes.append(ki.sample.data.shape)
    settings: list[tuple[str, dict[str, Any]]] = [("", units)]
    for unit in spec.units:
        for end, value in (("minimum", unit.minimum), ("maximum", unit.maximum)):
            if np.isfinite(value) and units.get(unit.name) != float(value):
                settings.append((f", {unit.name} at its {end} {float(value):g}", {**units, unit.name: float(value)}))
    pairs = [(shape, u) for shape in shapes for u in range(len(settings))]
    pairs += _rounding_lengths(x, settings, rng)
    product = [(d, p, v) for d in dtypes for p in range(len(pairs)) for v in (0, 1)]
    order = [product[i] for i in rng.permutation(len(product))]
    chosen: list[tuple[str, int, int]] = []
    seen: set[tuple[int, Any]] = set()
    for item in order:
        new = {(dim, value) for dim, value in enumerate(item)} - seen
        if new:
            chosen.append(item)
            seen |= new
    for item in order:
        if len(chosen) >= CROSS_MAX:
            break
        if item not in chosen:
            chosen.append(item)
    out: list[KitInput] = []
    for dtype_name, p, v in chosen:
        shape, u = pairs[p]
        what, small = _varied_pattern(dtype_name, x)
        data = _fit(small, shape)
        if v:
            data = _planted(data)
            what += ", special values off the grid"
        label, setting = settings[u]
        out.append(
            KitInput(
                f"crossed: {dtype_name} {what}, shape {data.shape}{label}",
                Sample(data, setting, src),
                "long",
                kind=np.dtype(dtype_name).kind,
                rank=data.ndim,
            )
        )
    return out


def tiny_inputs(kinds: list[str], x: np.ndarray, units: dict[str, Any], src: Any) -> list[KitInput]:
    """Constant and sign-alternating inputs at tiny magnitudes in every accepted float dtype: the
    smallest subnormal, the smallest normal and its square, cube and fourth roots (where a square,
    a product of three or of four underflows to 0 but the value does not), at the base's shape and
    a whole length on axis 0."""
    out: list[KitInput] = []
    if "f" not in kinds or x.ndim == 0 or x.size == 0:
        return out
    rest = max(1, x.size // max(int(x.shape[0]), 1))
    whole = next((n for n in WHOLE_LENGTHS if n * rest <= CONSTANT_ELEMENTS), None)
    shapes = [x.shape] + ([(whole,) + x.shape[1:]] if whole and whole != x.shape[0] else [])
    for dtype_name in KIND_DTYPES["f"]:
        info = np.finfo(dtype_name)
        tiny = float(info.smallest_normal)
        magnitudes = [float(info.smallest_subnormal)] + [tiny ** (1 / k) for k in (1, 2, 3, 4)]
        for value in magnitudes:
            for shape in shapes:
                for what, data in (
                    ("constant", np.full(shape, value, dtype_name)),
                    ("alternating sign", _alternating(shape, -value, value, np.dtype(dtype_name))),
                ):
                    out.append(
                        KitInput(
                            f"tiny: {dtype_name} {what} {value:.3g}, shape {shape}",
                            Sample(data, units, src),
                            "content",
                            kind="f",
                            rank=len(shape),
                        )
                    )
    return out


def config_numbers(config: Any) -> list[float]:
    """The positive finite numbers of a configuration, in order (nested dicts and lists included;
    not bools), each once."""
    found: list[float] = []

    def walk(item: Any) -> None:
        if isinstance(item, dict):
            for value in item.values():
                walk(value)
        elif isinstance(item, (list, tuple)):
            for value in item:
                walk(value)
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            value = float(item)
            if np.isfinite(value) and value > 0 and value not in found:
                found.append(value)

    walk(config)
    return found


#: Unit values tried per configuration number and unit: the first few where their product is a
#: multiple of 1/2 at or above the unit's minimum, and a few around the base's own value.
ROUNDING_FIRST = 4
ROUNDING_NEAR = 3


def rounding_values(spec: InputSpec, units: dict[str, Any], config: Any) -> list[tuple[str, float, float]]:
    """(unit name, value, configuration number) where value × number is a multiple of 1/2: there a
    count computed from the two is decided by their last bits (half-way rounding, a ceiling)."""
    out: list[tuple[str, float, float]] = []
    for unit in spec.units:
        lo, hi = float(unit.minimum), float(unit.maximum)
        if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
            continue
        seen: set[float] = {lo, hi}
        for c in config_numbers(config):
            step = 0.5 / c  # product c * v moves by 1/2
            if not np.isfinite(step) or step <= 0 or (hi - lo) / step > 1e12:
                continue
            first = int(np.ceil(lo / step))
            ms = list(range(first, first + ROUNDING_FIRST))
            here = units.get(unit.name)
            if isinstance(here, (int, float)) and np.isfinite(here):
                mid = int(round(float(here) / step))
                ms += list(range(mid - ROUNDING_NEAR // 2, mid - ROUNDING_NEAR // 2 + ROUNDING_NEAR))
            for m in ms:
                value = m * step
                if lo <= value <= hi and value not in seen:
                    seen.add(value)
                    out.append((unit.name, value, c))
    return out


def _rounding_inputs(spec: InputSpec, base: Sample, config: Any) -> list[KitInput]:
    units = dict(base.units)
    return [
        KitInput(
            f"{name} = {value!r}: × {c:g} from the configuration is {value * c:g}",
            Sample(_copy_data(base.data), {**units, name: float(value)}, base.source),
            "rounding",
            kind=base.data.dtype.kind if isinstance(base.data, np.ndarray) else None,
            rank=base.data.ndim if isinstance(base.data, np.ndarray) else None,
        )
        for name, value, c in rounding_values(spec, units, config)
    ]


def _copy_data(data: Any) -> Any:
    return data.copy() if isinstance(data, np.ndarray) else data


def array_inputs(spec: InputSpec, bases: list[Sample]) -> list[KitInput]:
    """The kit's array inputs (see the module docstring), from valid ``bases``."""
    out: list[KitInput] = []
    kinds = [k for k in spec.dtypes if k in KIND_DTYPES]
    for b, base in enumerate(bases):
        x = np.asarray(base.data)
        units, src = dict(base.units), base.source
        tag = "" if len(bases) == 1 else f" (base {b})"
        if b == 0:
            for kind in kinds:
                for dtype_name in KIND_DTYPES[kind]:
                    for what, data in _dtype_patterns(dtype_name, x):
                        out.append(
                            KitInput(
                                f"{dtype_name} {what}, shape {data.shape}",
                                Sample(data, units, src),
                                "dtype",
                                kind=kind,
                                rank=data.ndim,
                            )
                        )
                        if what.startswith("ramp"):
                            out += _twins(out, f"{dtype_name} {what}", data, units, src, kind)
                    long = _long(_dtype_patterns(dtype_name, x)[0][1], 0) if dtype_name != x.dtype.name else None
                    if long is not None:
                        out.append(
                            KitInput(
                                f"long: {dtype_name} {_dtype_patterns(dtype_name, x)[0][0]} tiled along "
                                f"axis 0, shape {long.shape}",
                                Sample(long, units, src),
                                "long",
                                kind=kind,
                                rank=long.ndim,
                            )
                        )
        for axis in range(x.ndim):
            for n in (0, 1, 2):
                data = _take(x, axis, n)
                out.append(
                    KitInput(
                        f"length {n} on axis {axis}: shape {data.shape}{tag}",
                        Sample(data, units, src),
                        "shape",
                        kind=x.dtype.kind,
                        rank=data.ndim,
                    )
                )
        if x.ndim > 1:
            ones = x[tuple(slice(0, 1) for _ in range(x.ndim))]
            out.append(
                KitInput(
                    f"length 1 on every axis: shape {ones.shape}{tag}",
                    Sample(ones.copy(), units, src),
                    "shape",
                    kind=x.dtype.kind,
                    rank=x.ndim,
                )
            )
        for rank in spec.ndim:
            if rank == x.ndim + 1:
                out.append(
                    KitInput(
                        f"rank {rank}: shape {x.shape + (1,)}{tag}",
                        Sample(x[..., None].copy(), units, src),
                        "shape",
                        kind=x.dtype.kind,
                        rank=rank,
                    )
                )
            elif rank == x.ndim - 1 and rank >= 1:
                out.append(
                    KitInput(
                        f"rank {rank}: shape {x.shape[:-1]}{tag}",
                        Sample(np.ascontiguousarray(x[..., 0]), units, src),
                        "shape",
                        kind=x.dtype.kind,
                        rank=rank,
                    )
                )
        if x.size:
            middle = x.flat[x.size // 2]
            out.append(
                KitInput(
                    f"constant ({number(middle)}){tag}",
                    Sample(np.full_like(x, middle), units, src),
                    "content",
                    kind=x.dtype.kind,
                    rank=x.ndim,
                )
            )
        out.append(
            KitInput(f"all zeros{tag}", Sample(np.zeros_like(x), units, src), "content", kind=x.dtype.kind, rank=x.ndim)
        )
        if b == 0:
            out += _constant_inputs(kinds, x, units, src)
            out += tiny_inputs(kinds, x, units, src)
        if b == 0:
            for axis in range(min(x.ndim, 2)):
                long = _long(x, axis)
                if long is not None:
                    out.append(
                        KitInput(
                            f"long: the base tiled along axis {axis}, shape {long.shape}",
                            Sample(long, units, src),
                            "long",
                            kind=x.dtype.kind,
                            rank=x.ndim,
                        )
                    )
        for unit in spec.units:
            for end, value in (("minimum", unit.minimum), ("maximum", unit.maximum)):
                if not np.isfinite(value):
                    continue
                out.append(
                    KitInput(
                        f"{unit.name} at its {end} {value:g} {unit.symbol}{tag}",
                        Sample(x.copy(), {**units, unit.name: float(value)}, src),
                        "units",
                        kind=x.dtype.kind,
                        rank=x.ndim,
                    )
                )
        if b == 0 and x.size:
            ref = len(out)
            out.append(
                KitInput(f"the base{tag}", Sample(x.copy(), units, src), "layout", kind=x.dtype.kind, rank=x.ndim)
            )
            for how, view in layout_views(x):
                out.append(
                    KitInput(
                        f"the base, {how} (same values)",
                        Sample(view, units, src),
                        "layout",
                        kind=x.dtype.kind,
                        rank=x.ndim,
                        same_as=ref,
                    )
                )
    if bases:
        out += _thin_inputs(np.asarray(bases[0].data), dict(bases[0].units), bases[0].source)
        out += _awkward_inputs(np.asarray(bases[0].data), dict(bases[0].units), bases[0].source)
        out += boundary_inputs(np.asarray(bases[0].data), dict(bases[0].units), bases[0].source)
        out += level_inputs(spec, bases[-1])
        out += cross_inputs(spec, bases[0])
        start = len(out)
        twins = _twin_inputs(np.asarray(bases[0].data), dict(bases[0].units), bases[0].source, kinds)
        out += [attrs.evolve(t, twin_of=start + t.twin_of) if t.twin_of is not None else t for t in twins]
    return out


#: Unit values tried, besides the base's own, for a whole-frame length (see :func:`frame_lengths`).
FRAME_UNIT_VALUES = (16000.0, 8000.0, 48000.0, 44100.0, 1000.0, 100.0, 10.0, 1.0)
#: Whole-frame layout inputs span this many frames, within CONSTANT_ELEMENTS elements.
FRAME_COUNT = 2


def frame_lengths(spec: InputSpec, units: dict[str, Any], config: Any) -> list[tuple[int, dict[str, Any]]]:
    """Lengths on axis 0 that hold exactly FRAME_COUNT frames of the plugin's configuration, with
    the units they need: for each configuration number c, a unit value v (the base's, else one of
    FRAME_UNIT_VALUES within the unit's range) where c * v is a whole number of at least 2 (a frame
    of c seconds at v Hz), and c itself where it is a whole number of at least 2 (a frame in
    samples). At most one length per configuration number, each once."""
    out: list[tuple[int, dict[str, Any]]] = []
    seen: set[int] = set()
    for c in config_numbers(config):
        found: tuple[int, dict[str, Any]] | None = None
        for unit in spec.units:
            here = units.get(unit.name)
            values = ([float(here)] if isinstance(here, (int, float)) and np.isfinite(here) else []) + [
                v for v in FRAME_UNIT_VALUES if unit.minimum <= v <= unit.maximum
            ]
            for v in values:
                product = c * v
                if 2 <= product <= LONG_LENGTH and abs(product - round(product)) < 1e-9:
                    found = (int(round(product)), {**units, unit.name: v})
                    break
            if found:
                break
        if found is None and 2 <= c <= LONG_LENGTH and c == int(c):
            found = (int(c), dict(units))
        if found and found[0] not in seen:
            seen.add(found[0])
            out.append(found)
    return out


def layout_views(data: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The values of ``data`` in every other memory layout, each labelled: a strided view, a
    negative-stride view, read-only, Fortran order (from rank 2) and, for a multi-byte numeric dtype,
    non-native byte order alone, with a strided view and with Fortran order (two changes at once)."""
    frozen = data.copy()
    frozen.flags.writeable = False
    views = [
        ("a strided view", np.repeat(data, 2, axis=0)[::2]),
        ("a negative-stride view", np.ascontiguousarray(data[::-1])[::-1]),
        ("read-only", frozen),
    ]
    if data.ndim > 1:
        views.append(("in Fortran order", np.asfortranarray(data)))
    if data.dtype.itemsize > 1 and data.dtype.kind in "iuf":
        swapped = data.astype(data.dtype.newbyteorder())
        views.append(("in non-native byte order", swapped))
        views.append(("in non-native byte order, a strided view", np.repeat(swapped, 2, axis=0)[::2]))
        if data.ndim > 1:
            views.append(("in non-native byte order and Fortran order", np.asfortranarray(swapped)))
    return views


def layout_inputs(spec: InputSpec, base: Sample, config: Any) -> list[KitInput]:
    """Every accepted dtype (a varied pattern) at each whole-frame length (:func:`frame_lengths`;
    the base's shape where there is none), plain and in every other memory layout of the same
    values (the base's own dtype at its shape is in every layout already): a strided
    view, a negative-stride view, Fortran order, non-native byte order, read-only. A plugin that
    views the samples without a copy where the dtype needs no conversion and the length fills whole
    frames (a zero-copy frame view built from the wrong strides) shows only there. ``same_as``
    counts within the returned list."""
    x = np.asarray(base.data)
    if x.ndim == 0 or x.size == 0:
        return []
    rest = max(1, x.size // max(int(x.shape[0]), 1))
    settings: list[tuple[tuple[int, ...], dict[str, Any], str]] = []
    for n, units in frame_lengths(spec, dict(base.units), config):
        length = FRAME_COUNT * n
        if length * rest <= CONSTANT_ELEMENTS and (length,) + x.shape[1:] != x.shape:
            changed = {k: v for k, v in units.items() if base.units.get(k) != v}
            where = f" ({FRAME_COUNT} whole frames of {n}" + (f" at {changed}" if changed else "") + ")"
            settings.append(((length,) + x.shape[1:], units, where))
    if not settings:  # no whole-frame length: the base's shape
        settings.append((x.shape, dict(base.units), ""))
    out: list[KitInput] = []
    for kind in [k for k in spec.dtypes if k in KIND_DTYPES]:
        for dtype_name in KIND_DTYPES[kind]:
            what, pattern = _varied_pattern(dtype_name, x)
            for shape, units, where in settings:
                data = np.ascontiguousarray(_fit(pattern, shape))
                label = f"layout: {dtype_name} {what}, shape {data.shape}{where}"
                ref = len(out)
                out.append(KitInput(label, Sample(data, units, base.source), VIEWS, kind=kind, rank=data.ndim))
                for how, view in layout_views(data):
                    out.append(
                        KitInput(
                            f"{label}, {how} (same values)",
                            Sample(view, units, base.source),
                            VIEWS,
                            kind=kind,
                            rank=data.ndim,
                            same_as=ref,
                        )
                    )
    return out


#: A ladder of unit values: each unit at these fractions of its (finite) maximum, in increasing
#: order, ending at the maximum (family LADDER).
LADDER_FRACTIONS = (0.25, 0.5, 1.0)
LADDER = "ladder"


def ladder_inputs(spec: InputSpec, base: Sample) -> list[KitInput]:
    """The base with each unit at LADDER_FRACTIONS of its maximum, in increasing order (within the
    unit's range, each value once). ``check_fresh_process`` gives them to the new process first of the
    kit's inputs, in this order: state kept from the largest setting seen so far (a table built for
    the longest frame, sliced for shorter ones) gives a lower rung, met after a higher one, other
    tokens than a process that meets it first."""
    x = np.asarray(base.data)
    out: list[KitInput] = []
    for unit in spec.units:
        if not np.isfinite(unit.maximum):
            continue
        seen: set[float] = set()
        for fraction in LADDER_FRACTIONS:
            value = float(unit.maximum) * fraction
            if not unit.minimum <= value <= unit.maximum or value in seen:
                continue
            seen.add(value)
            out.append(
                KitInput(
                    f"unit ladder: {unit.name} at {value:g} {unit.symbol} ({fraction:g} of its maximum)",
                    Sample(x.copy(), {**dict(base.units), unit.name: value}, base.source),
                    LADDER,
                    kind=x.dtype.kind,
                    rank=x.ndim,
                )
            )
    return out


def rank_inputs(spec: InputSpec, base: Sample) -> list[KitInput]:
    """Large inputs in every accepted rank besides the base's (the base with its trailing axes
    dropped, or a trailing axis of 1 added): tiled long along axis 0 and, from rank 2 when the base
    has two spatial axes, TWIN_LARGE_SIDE on each of them. A plugin whose path for a large input
    assumes the base's rank (a channel axis a resize drops) shows only there."""
    x = np.asarray(base.data)
    if x.ndim == 0 or x.size == 0 or x.dtype.kind not in "biuf":
        return []
    out: list[KitInput] = []
    units, src = dict(base.units), base.source
    for rank in sorted(r for r in spec.ndim if r >= 1 and r != x.ndim):
        y = x
        while y.ndim > rank:
            y = y[..., 0]
        y = np.ascontiguousarray(y.reshape(y.shape + (1,) * (rank - y.ndim)))
        candidates = [("tiled along axis 0", _long(y, 0))]
        if rank >= 2 and x.ndim >= 2:
            sides = (TWIN_LARGE_SIDE, TWIN_LARGE_SIDE) + y.shape[2:]
            if int(np.prod(sides)) <= LONG_ELEMENTS * 4:
                candidates.append((f"{TWIN_LARGE_SIDE} a side", _fit(y, sides)))
        for what, data in candidates:
            if data is None:
                continue
            out.append(
                KitInput(
                    f"large in rank {rank}: the base {what}, shape {data.shape}",
                    Sample(np.ascontiguousarray(data), units, src),
                    "long",
                    kind=x.dtype.kind,
                    rank=rank,
                )
            )
    return out


def text_inputs(spec: InputSpec, bases: list[Sample]) -> list[KitInput]:
    """The kit's text inputs: TEXT_EDGES, the bases in NFD, upper case and with CR LF, and a long text."""
    units = dict(bases[0].units) if bases else {}
    src = bases[0].source if bases else None
    out = [KitInput(label, Sample(text, units, src), "text") for label, text in TEXT_EDGES]
    for b, base in enumerate(bases):
        if not isinstance(base.data, str) or not base.data:
            continue
        text = base.data
        out.append(
            KitInput(f"base {b} decomposed (NFD)", Sample(unicodedata.normalize("NFD", text), units, src), "text")
        )
        out.append(KitInput(f"base {b} upper-cased", Sample(text.upper(), units, src), "text"))
        out.append(KitInput(f"base {b} with CR LF line ends", Sample(text.replace("\n", "\r\n"), units, src), "text"))
        if b == 0:
            long = text * (-(-LONG_TEXT // len(text)))
            out.append(KitInput(f"long: base 0 repeated to {len(long)} characters", Sample(long, units, src), "long"))
    for unit in spec.units:
        for end, value in (("minimum", unit.minimum), ("maximum", unit.maximum)):
            if np.isfinite(value) and bases:
                out.append(
                    KitInput(
                        f"{unit.name} at its {end} {value:g} {unit.symbol}",
                        Sample(bases[0].data, {**units, unit.name: float(value)}, src),
                        "units",
                    )
                )
    return out


def _token_count(modality: Modality, sample: Sample) -> int | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return len(modality.tokenize(Sample(_copy_data(sample.data), dict(sample.units), sample.source)))
    except Exception:  # the checks report it
        return None


def dense_inputs(modality: Modality, spec: InputSpec, base: Sample) -> list[KitInput]:
    """Token-dense long inputs: for each unit, the end of its range (minimum or maximum) at which
    the base gives the most tokens, and all units so at once; the base tiled on axis 0 to about
    LONG_TOKENS tokens at that setting (an odd length; at most LONG_ELEMENTS elements, and
    SPARSE_DENSE_ELEMENTS where LONG_TOKENS is out of reach within LONG_ELEMENTS). The plain
    long input is long in elements but, at ordinary units, short in tokens."""
    x = np.asarray(base.data)
    if not spec.units or x.ndim == 0 or x.size == 0:
        return []
    units, src = dict(base.units), base.source
    settings: list[tuple[str, dict[str, Any]]] = []
    for unit in spec.units:
        counted: list[tuple[int, str, float]] = []
        for end, value in (("minimum", unit.minimum), ("maximum", unit.maximum)):
            if np.isfinite(value):
                count = _token_count(modality, Sample(x, {**units, unit.name: float(value)}, src))
                if count:
                    counted.append((count, f"{unit.name} at its {end} {float(value):g} {unit.symbol}", float(value)))
        if counted:
            _, label, value = max(counted, key=lambda c: c[0])
            settings.append((label, {**units, unit.name: value}))
    if len(settings) > 1:
        both = dict(units)
        for _, setting in settings:
            both.update({k: v for k, v in setting.items() if units.get(k) != v})
        settings.append((" and ".join(label for label, _ in settings), both))
    rest = max(1, x.size // int(x.shape[0]))
    out: list[KitInput] = []
    for label, setting in settings:
        count = _token_count(modality, Sample(x, setting, src))
        if not count:
            continue
        rows = int(np.ceil(LONG_TOKENS * x.shape[0] / count))
        if rows > LONG_ELEMENTS // rest:  # the target is out of reach: a shorter input suffices
            rows = SPARSE_DENSE_ELEMENTS // rest
        rows = max(2 * int(x.shape[0]), rows)
        rows += 1 - rows % 2
        data = np.ascontiguousarray(_take(x, 0, rows))
        out.append(
            KitInput(
                f"token-dense long: the base tiled to {rows} on axis 0 with {label} (about "
                f"{count * rows // int(x.shape[0])} tokens), shape {data.shape}",
                Sample(data, setting, src),
                "long",
                kind=x.dtype.kind,
                rank=x.ndim,
            )
        )
    return out


def kit_inputs(modality: Modality, bases: list[Sample]) -> list[KitInput]:
    """The kit's inputs for ``modality``: from its input spec, its configuration and valid ``bases``."""
    spec = modality.input_spec
    try:
        config = modality.config()
    except Exception:  # check_config_roundtrip reports it
        config = {}
    if spec.kind == "text":
        out = text_inputs(spec, bases)
    else:
        array_bases = [b for b in bases if isinstance(b.data, np.ndarray)]
        out = array_inputs(spec, array_bases) if array_bases else []
        bases = array_bases
        if bases:
            out += dense_inputs(modality, spec, bases[0])
        if bases:
            start = len(out)
            out += [
                attrs.evolve(ki, same_as=start + ki.same_as) if ki.same_as is not None else ki
                for ki in layout_inputs(spec, bases[0], config)
            ]
            out += rank_inputs(spec, bases[0])
            out += ladder_inputs(spec, bases[0])
    if bases:  # the richest base: a count over the whole input shows a changed frame size
        out += _rounding_inputs(spec, bases[0], config)
    return out


# -- inputs the spec excludes ------------------------------------------------------------------
def _undeclared_patterns(dtype_name: str, shape: tuple[int, ...]) -> list[tuple[str, np.ndarray]]:
    """Values in a dtype of a kind the spec does not declare, each of which must be refused: zeros,
    0/1 (which every dtype kind holds), whole numbers 0..127 (which every integer and float dtype
    holds) and values of either sign (an integer's minimum and maximum alternating; a ramp -1..1 for
    float and complex). A plugin that reads an undeclared dtype as a declared one when its values
    fit (int8 viewed as uint8 when none is negative) is found by the values a declared kind holds."""
    dtype = np.dtype(dtype_name)
    out = [
        ("zeros", np.zeros(shape, dtype)),
        ("alternating 0/1", _alternating(shape, 0, 1, dtype)),
    ]
    if dtype.kind != "b":
        n = int(np.prod(shape))
        whole = np.round(np.linspace(0, 127, n)) if n > 1 else np.array([127.0])
        out.append(("whole numbers 0..127", whole.astype(dtype).reshape(shape)))
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            out.append(("alternating minimum/maximum", _alternating(shape, int(info.min), int(info.max), dtype)))
        else:
            out.append(("a ramp -1..1", _ramp(shape, -1.0, 1.0, dtype)))
    return out


def _other_kind_cases(spec: InputSpec, x: np.ndarray, units: dict[str, Any], src: Any) -> list[tuple[str, Sample]]:
    """Arrays of the dtype kinds no input spec can declare, each of which must be refused:
    structured records of 1, 3 and 4 fields of the first accepted dtype (one field per channel:
    RGB, RGBA), an opaque void, bytes (``S``) of 1, 3 and 4 (a pixel's channels as bytes),
    datetime64 (``M``) and timedelta64 (``m``), zeros and a ramp -- each at the base's shape and at
    it without its last axis (a view of 3 bytes as 3 channels adds an axis). A plugin that unpacks
    records or bytes into channels, or reads dates as integers, tokenizes them."""
    field = next((d for k in spec.dtypes if k in KIND_DTYPES for d in KIND_DTYPES[k]), "uint8")
    cases: list[tuple[str, Sample]] = []
    shapes = [x.shape] + ([x.shape[:-1]] if x.ndim > 1 else [])
    for count in (3, 4, 1):
        record = np.dtype([(name, field) for name in "rgba"[:count]])
        for shape in shapes:
            data = np.zeros(shape, record)
            for i, name in enumerate(record.names or ()):
                data[name] = np.ones(shape, field) if i % 2 else np.zeros(shape, field)
            cases.append(
                (
                    f"dtype kind 'V' (structured, {count} {field} field(s)), not declared: shape {shape}",
                    Sample(data, units, src),
                )
            )
    cases.append(("dtype kind 'V' (opaque void of 4 bytes), not declared", Sample(np.zeros(x.shape, "V4"), units, src)))
    for shape in shapes:  # bytes of 1, 3 and 4 (a pixel's channels as bytes), at either shape
        for width in (1, 3, 4):
            data = np.full(shape, bytes(range(1, width + 1)), dtype=f"S{width}")
            cases.append((f"dtype kind 'S' (bytes of {width}), not declared: shape {shape}", Sample(data, units, src)))
        n_here = int(np.prod(shape))
        here = np.arange(n_here, dtype=np.int64).reshape(shape)
        for kind, unit in (("M", "datetime64[s]"), ("m", "timedelta64[s]")):
            for what, data in (("zeros", np.zeros(shape, unit)), ("ramp", here.astype(unit))):
                label = f"dtype kind {kind!r} ({unit} {what}), not declared: shape {shape}"
                cases.append((label, Sample(data, units, src)))
    return cases


#: An undeclared higher rank is tried with its new trailing axis this long (a channel axis: mono
#: as (T, 1), stereo (T, 2), RGB, RGBA) and with a leading axis of 2 (a batch stacked as one array).
HIGHER_RANK_SIDES = (1, 2, 3, 4)


def _higher_rank(x: np.ndarray, rank: int) -> list[np.ndarray]:
    """``x`` raised to ``rank``: trailing axes of 1, then the last new axis HIGHER_RANK_SIDES long
    (the values repeated along it), and two copies stacked on a new leading axis. A plugin that
    takes one shape of an undeclared rank (stereo mixed down to mono) shows at that shape."""
    extra = rank - x.ndim
    ones = x.reshape(x.shape + (1,) * extra)
    out = [ones]
    for side in HIGHER_RANK_SIDES[1:]:
        out.append(np.ascontiguousarray(np.repeat(ones, side, axis=-1)))
    out.append(np.ascontiguousarray(np.stack([x, x]).reshape((2,) + x.shape + (1,) * (extra - 1))))
    return out


def invalid_inputs(spec: InputSpec, base: Sample) -> list[tuple[str, Sample]]:
    """Inputs the declared spec excludes, derived from a valid ``base``: each must raise InputError."""
    units, src = dict(base.units), base.source
    cases: list[tuple[str, Sample]] = []
    if spec.kind == "text":
        cases += [
            ("bytes instead of text", Sample(b"abc", units, src)),
            ("None", Sample(None, units, src)),
            ("an int", Sample(12345, units, src)),
            ("a list of str", Sample(["a", "b"], units, src)),
        ]
    elif isinstance(base.data, np.ndarray):
        x = base.data
        if "f" in spec.dtypes:
            for dtype_name in ("float16", "float32", "float64"):
                for bad in (np.nan,) if dtype_name == "float16" else (np.nan, np.inf, -np.inf):
                    with np.errstate(all="ignore"):
                        broken = np.zeros(x.shape, dtype=dtype_name)
                    broken.flat[broken.size // 2] = bad
                    cases.append((f"{dtype_name} holding {bad}", Sample(broken, units, src)))
            big = _long(x, 0) if x.ndim and x.size else None
            if big is not None:
                for dtype_name in ("float16", "float32", "float64"):
                    bads = (np.nan,) if dtype_name == "float16" else (np.nan, np.inf, -np.inf)
                    for i, flat in enumerate(off_grid_positions(big.shape)):
                        bad = bads[i % len(bads)]
                        broken = np.zeros(big.shape, dtype=dtype_name)
                        broken.flat[flat] = bad
                        where = tuple(int(j) for j in np.unravel_index(flat, big.shape))
                        cases.append(
                            (f"{dtype_name}, shape {big.shape}, holding {bad} at {where}", Sample(broken, units, src))
                        )
        for kind, dtype_names in UNDECLARED_DTYPES.items():
            if kind in spec.dtypes:
                continue
            for dtype_name in dtype_names:
                for what, data in _undeclared_patterns(dtype_name, x.shape):
                    detail = dtype_name if what == "zeros" else f"{dtype_name}, {what}"
                    cases.append((f"dtype kind {kind!r} ({detail}), not declared", Sample(data, units, src)))
        cases += _other_kind_cases(spec, x, units, src)
        cases.append(("a str array", Sample(np.full(x.shape, "x"), units, src)))
        cases.append(("an object array", Sample(np.full(x.shape, None, dtype=object), units, src)))
        if x.dtype.kind in "biuf":  # numbers boxed as Python objects: still not a declared dtype kind
            cases.append(("an object array of the base's numbers", Sample(x.astype(object), units, src)))
            cases.append(("an object array of zeros", Sample(np.zeros(x.shape, dtype=object), units, src)))
            halves = np.full(x.shape, 0.5, dtype=np.float64).astype(object)
            cases.append(("an object array of Python floats 0.5", Sample(halves, units, src)))
        cases.append(("a str, not an array", Sample("not an array", units, src)))
        cases.append(("None", Sample(None, units, src)))
        for rank in range(0, max(spec.ndim, default=0) + 2):
            if rank in spec.ndim:
                continue
            if rank < x.ndim:
                data = np.asarray(x.flat[0]) if rank == 0 else x.reshape(x.shape[: rank - 1] + (-1,))
                cases.append((f"rank {rank}, not declared: shape {data.shape}", Sample(data, units, src)))
                continue
            for shaped in _higher_rank(x, rank):
                cases.append((f"rank {rank}, not declared: shape {shaped.shape}", Sample(shaped, units, src)))
    for unit in spec.units:
        below = float(np.nextafter(unit.minimum, -np.inf))
        cases.append(
            (f"{unit.name} below its minimum ({below!r})", Sample(base.data, {**units, unit.name: below}, src))
        )
        if np.isfinite(unit.maximum):
            above = float(np.nextafter(unit.maximum, np.inf))
            cases.append(
                (f"{unit.name} above its maximum ({above!r})", Sample(base.data, {**units, unit.name: above}, src))
            )
        for wrong in (float("nan"), float("inf"), "fast"):
            wrong_units: dict[str, Any] = {**units, unit.name: wrong}  # "fast": not a number, on purpose
            cases.append((f"{unit.name} = {wrong!r}", Sample(base.data, wrong_units, src)))
    cases.append(("an unknown unit", Sample(base.data, {**units, "kit_unknown_unit": 1.0}, src)))
    return cases
