"""Real inputs the data suite does not hold: out-of-distribution ones, and real voices saying digits.

The open-set score (:mod:`.openset`) must be measured on inputs that are *not* like the training
data, and real ones: a checkpoint trained on handwritten digits, synthetic voices saying digits,
eight instruments and digit texts should call a photo, a spoken sentence, noise or a cello
unfamiliar. This module builds such a set from files that installed packages ship (no download),
in the layout of the data suite (:mod:`v22sdk.engine.data.suite`), one JSONL line per input:

    {"input": "photo/coffee.png", "modality": "vision", "category": "photo", "split": "test",
     "group": "skimage:coffee", "source": "skimage"}

Categories (modality): ``photo`` (vision: scikit-image's bundled photographs and scikit-learn's two
sample photos, each whole and as five crops), ``face`` (vision: scikit-image's 25×25 LFW crops of
faces and non-faces), ``drawing`` (vision: scikit-image's synthetic images and the demo set's
OpenCV drawings), ``letter`` (vision: letters A–Z drawn with OpenCV's fonts and put through the
suite's handwriting pipeline, 8×8 ink counts upsampled to 32×32: the nearest thing to a digit
that is not one), ``speech_sentence`` (audio: real recorded English prompts of four or more words,
Allison Smith for Asterisk, 8 kHz), ``speech_word`` (audio: her single non-digit words and
letters, and real recorded Mandarin syllables that are not digits, gcin-voice), ``synthetic_sentence``
(audio: espeak-ng reading sentences), ``noise`` (audio: white, pink and brown noise), ``instrument``
(audio: FluidR3 instruments the suite does not play), ``sound_effect`` (audio: FluidR3's sound
effects), ``sentence_text`` (text: lines of Tang poems and of the Zen of Python), ``other_number``
(text: numbers that are not digits).

Each input is in ``dev`` (a third of each category's groups, seeded) or ``test``: the open-set
score is *chosen* on dev (with the validation split as the familiar side) and *measured* on test.

``real_digits.jsonl`` holds real voices saying digits, with targets (English: Allison Smith's
recorded digits; Mandarin: the two recorded voices of gcin-voice): voices no checkpoint trained
on the suite has heard, and real people, not espeak-ng.

``ood.json`` records every source's name, version, licence and the SHA-256 of what was read.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, MissingDependency

CATEGORIES = {
    "photo": "vision",
    "face": "vision",
    "drawing": "vision",
    "letter": "vision",
    "speech_sentence": "audio",
    "speech_word": "audio",
    "synthetic_sentence": "audio",
    "noise": "audio",
    "instrument": "audio",
    "sound_effect": "audio",
    "sentence_text": "text",
    "other_number": "text",
}
#: bundled scikit-image photographs (files in skimage/data; the fetchers of others download)
SKIMAGE_PHOTOS = (
    "astronaut.png",
    "brick.png",
    "camera.png",
    "cell.png",
    "chelsea.png",
    "clock_motion.png",
    "coffee.png",
    "coins.png",
    "grass.png",
    "gravel.png",
    "hubble_deep_field.jpg",
    "ihc.png",
    "microaneurysms.png",
    "moon.png",
    "motorcycle_left.png",
    "page.png",
    "retina.jpg",
    "rocket.jpg",
    "text.png",
)
SKIMAGE_DRAWINGS = ("chessboard_RGB.png", "color.png", "logo.png", "phantom.png", "horse.png")
#: General MIDI programs of FluidR3 the suite does not play: (program, name)
OTHER_INSTRUMENTS = (
    (6, "harpsichord"),
    (21, "accordion"),
    (32, "acoustic bass"),
    (42, "cello"),
    (46, "harp"),
    (52, "choir aahs"),
    (65, "alto sax"),
    (104, "sitar"),
    (105, "banjo"),
    (109, "bagpipe"),
    (114, "steel drums"),
    (117, "melodic tom"),
)
SOUND_EFFECTS = (
    (120, "guitar fret noise"),
    (121, "breath noise"),
    (122, "seashore"),
    (123, "bird tweet"),
    (124, "telephone ring"),
    (125, "helicopter"),
    (126, "applause"),
    (127, "gunshot"),
)
ASTERISK_SOUNDS = Path("/usr/share/asterisk/sounds/en_US_f_Allison")
ASTERISK_TRANSCRIPTS = Path("/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz")
GCIN_VOICE = Path("/usr/share/gcin-voice/ogg")
TANG300 = Path("/usr/share/games/fortunes/tang300")
#: Mandarin digits in Zhuyin as gcin-voice names its folders (first tone unmarked)
ZHUYIN_DIGITS = {
    "ㄌㄧㄥ2": "零",
    "ㄧ": "一",
    "ㄦ4": "二",
    "ㄙㄢ": "三",
    "ㄙ4": "四",
    "ㄨ3": "五",
    "ㄌㄧㄡ4": "六",
    "ㄑㄧ": "七",
    "ㄅㄚ": "八",
    "ㄐㄧㄡ3": "九",
}
#: Mandarin syllables that also read as digits in other tones or words (left out of speech_word)
_DIGIT_SYLLABLES = {"ㄌㄧㄥ", "ㄧ", "ㄦ", "ㄙㄢ", "ㄙ", "ㄨ", "ㄌㄧㄡ", "ㄑㄧ", "ㄅㄚ", "ㄐㄧㄡ"}
DIGIT_WORDS = ("zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
DIGIT_LABELS = ("零", "一", "二", "三", "四", "五", "六", "七", "八", "九")
OTHER_NUMBERS = (
    "10",
    "12",
    "42",
    "100",
    "2024",
    "3.14",
    "十",
    "十二",
    "二十",
    "一百",
    "三千",
    "ten",
    "twelve",
    "eleven",
    "twenty",
    "forty-two",
    "one hundred",
    "a thousand",
    "first place",
    "half",
    "dozen",
)
SENTENCES_EN = (
    "The weather is lovely today.",
    "Please close the door behind you.",
    "Where did you park the car?",
    "I would like a cup of coffee.",
    "The meeting starts after lunch.",
    "Can you hear me clearly?",
)
SENTENCES_ZH = (
    "今天天气很好。",
    "请把门关上。",
    "你把车停在哪里了？",
    "我想喝一杯咖啡。",
    "会议在午饭后开始。",
    "你能听清楚吗？",
)


def build_ood(out: str | os.PathLike[str], *, seed: int = 0, log: Callable[[str], None] | None = None) -> Path:
    """Build the set into the new or empty folder ``out``; return the path of its ``ood.jsonl``.

    Missing programs, packages or files are a :class:`~v22sdk.errors.MissingDependency` naming
    what to install, before anything is built."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise InputError(str(out), "is not empty; give a new or empty folder")
    _check_dependencies()
    log = log or (lambda _msg: None)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    sources: dict[str, Any] = {}
    for build in (_vision, _asterisk, _gcin, _espeak, _noise, _fluidr3, _texts):
        got, src = build(out, seed)
        rows += got
        sources.update(src)
        log(f"ood: {build.__name__[1:]}: {len(got)} inputs")
    digits = [r for r in rows if "target" in r]
    ood = [r for r in rows if "target" not in r]
    for r in ood:
        r["split"] = _split(seed, r["category"], r["group"])
    _write_jsonl(out / "ood.jsonl", ood)
    _write_jsonl(out / "real_digits.jsonl", digits)
    counts: dict[str, dict[str, int]] = {}
    for r in ood:
        counts.setdefault(r["category"], {"dev": 0, "test": 0})[r["split"]] += 1
    info = {
        "name": "v22sdk out-of-distribution set",
        "seed": seed,
        "categories": CATEGORIES,
        "counts": counts,
        "real_digits": len(digits),
        "sources": sources,
        "sha256": {name: _sha256(out / name) for name in ("ood.jsonl", "real_digits.jsonl")},
    }
    (out / "ood.json").write_text(json.dumps(info, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return out / "ood.jsonl"


def read_ood(folder: str | os.PathLike[str], name: str = "ood.jsonl") -> list[dict[str, Any]]:
    """The lines of ``ood.jsonl`` (or ``real_digits.jsonl``), inputs made absolute."""
    folder = Path(folder)
    rows = [json.loads(line) for line in (folder / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in rows:
        if r["modality"] != "text":
            r["input"] = str(folder / r["input"])
    return rows


# -- the parts ---------------------------------------------------------------------------------------


def _vision(out: Path, seed: int) -> tuple[list[dict], dict]:
    import cv2
    import skimage
    import sklearn
    from sklearn.datasets import load_sample_images

    from .data.suite.handwriting import render as render_digit

    rows: list[dict] = []
    sk_dir = Path(skimage.__file__).parent / "data"
    photos = [(f"skimage:{n.split('.')[0]}", sk_dir / n) for n in SKIMAGE_PHOTOS]
    photos += [(f"sklearn:{Path(f).stem}", Path(f)) for f in load_sample_images().filenames]
    (out / "photo").mkdir()
    for group, path in photos:
        stem = group.replace(":", "_")
        dest = out / "photo" / f"{stem}{path.suffix}"
        shutil.copyfile(path, dest)  # the file as shipped
        rows.append(_row(dest, out, "photo", group, group.split(":")[0]))
        img = cv2.imdecode(np.frombuffer(dest.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
        if img is None:
            raise InputError(str(path), "OpenCV cannot decode this bundled photograph")
        h, w = img.shape[:2]
        s = min(h, w) // 2
        for k, (y, x) in enumerate(((0, 0), (0, w - s), (h - s, 0), (h - s, w - s), ((h - s) // 2, (w - s) // 2))):
            crop = out / "photo" / f"{stem}_crop{k}.png"
            cv2.imwrite(str(crop), img[y : y + s, x : x + s])
            rows.append(_row(crop, out, "photo", group, group.split(":")[0]))
    (out / "face").mkdir()
    lfw = np.load(sk_dir / "lfw_subset.npy")  # (200, 25, 25) float in [0, 1]
    for i in range(0, len(lfw), 2):  # 100 of them: 50 faces, 50 not
        dest = out / "face" / f"lfw_{i:03d}.png"
        cv2.imwrite(str(dest), np.clip(np.rint(lfw[i] * 255), 0, 255).astype(np.uint8))
        rows.append(_row(dest, out, "face", f"lfw:{i}", "skimage"))
    (out / "drawing").mkdir()
    for n in SKIMAGE_DRAWINGS:
        dest = out / "drawing" / f"skimage_{n}"
        shutil.copyfile(sk_dir / n, dest)
        rows.append(_row(dest, out, "drawing", f"skimage:{n}", "skimage"))
    demo = Path(__file__).parent / "data" / "demo" / "images"
    for f in sorted(demo.glob("*.png")):
        dest = out / "drawing" / f"demo_{f.name}"
        shutil.copyfile(f, dest)
        rows.append(_row(dest, out, "drawing", f"demo:{f.stem.rsplit('_', 1)[0]}", "demo"))
    (out / "letter").mkdir()
    fonts = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX)
    for letter in "ABCDEFGHJKLMNPQRTUVWXYZ":  # not I, O, S: read as 1, 0, 5
        for f_i, font in enumerate(fonts):
            counts = _letter_counts(letter, font, _rng(seed, "letter", letter, f_i))
            dest = out / "letter" / f"{letter}_{f_i}.png"
            dest.write_bytes(render_digit(counts))
            rows.append(_row(dest, out, "letter", f"letter:{letter}", "opencv"))
    # skimage's __init__.pyi lists __version__ in __all__ but does not declare it (a gap in its stub)
    sk_version: str = skimage.__version__  # type: ignore[attr-defined]
    sources = {
        "skimage": {
            "name": "scikit-image's bundled sample images",
            "version": f"scikit-image {sk_version}",
            "licence": "scikit-image: BSD-3-Clause; each image's own licence (public domain or CC) is in "
            "the docstring of its skimage.data function",
            "files": list(SKIMAGE_PHOTOS + SKIMAGE_DRAWINGS) + ["lfw_subset.npy"],
            "sha256": _sha256_files(
                [sk_dir / n for n in SKIMAGE_PHOTOS + SKIMAGE_DRAWINGS] + [sk_dir / "lfw_subset.npy"]
            ),
        },
        "sklearn": {
            "name": "scikit-learn's sample images (china.jpg, flower.jpg)",
            "version": f"scikit-learn {sklearn.__version__}",
            "licence": "scikit-learn: BSD-3-Clause; the photos: CC BY 2.0 (see sklearn.datasets.load_sample_images)",
            "sha256": _sha256_files([p for _, p in photos if _.startswith("sklearn")]),
        },
        "opencv": {
            "name": "letters drawn with OpenCV's Hershey fonts, rendered as the suite renders digits",
            "version": f"opencv {cv2.__version__}",
            "licence": "generated here (MIT, part of v22sdk)",
        },
        "demo": {
            "name": "the demo set's OpenCV drawings (v22sdk/engine/data/demo/images)",
            "licence": "generated by scripts/make_demo_data.py (MIT, part of v22sdk)",
        },
    }
    return rows, sources


def _letter_counts(letter: str, font: int, rng: np.random.Generator) -> np.ndarray:
    """A letter as the UCI digits were made: a 32×32 binary bitmap, then ink counts per 4×4 block
    (8×8 values in 0..16). Scale, thickness and position vary with ``rng``."""
    import cv2

    big = np.zeros((128, 128), np.uint8)
    scale = float(rng.uniform(2.6, 3.4))
    thickness = int(rng.integers(7, 12))
    (tw, th), _ = cv2.getTextSize(letter, font, scale, thickness)
    x = (128 - tw) // 2 + int(rng.integers(-6, 7))
    y = (128 + th) // 2 + int(rng.integers(-6, 7))
    cv2.putText(big, letter, (x, y), font, scale, 255, thickness, cv2.LINE_AA)
    ys, xs = np.nonzero(big > 127)
    if len(ys):  # NIST normalised each character to fill the 20×20 box centred in 32×32
        crop = big[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
        side = max(crop.shape)
        square = np.zeros((side, side), np.uint8)
        square[
            (side - crop.shape[0]) // 2 : (side - crop.shape[0]) // 2 + crop.shape[0],
            (side - crop.shape[1]) // 2 : (side - crop.shape[1]) // 2 + crop.shape[1],
        ] = crop
        box = cv2.resize(square, (20, 20), interpolation=cv2.INTER_AREA)
        big32 = np.zeros((32, 32), np.uint8)
        big32[6:26, 6:26] = box
    else:  # pragma: no cover - every letter draws ink
        big32 = np.zeros((32, 32), np.uint8)
    bits = (big32 > 127).astype(np.int64)
    return bits.reshape(8, 4, 8, 4).sum(axis=(1, 3))


def _transcripts() -> dict[str, str]:
    text = gzip.decompress(ASTERISK_TRANSCRIPTS.read_bytes()).decode("utf-8", "replace")
    out = {}
    for line in text.splitlines():
        name, sep, said = line.partition(":")
        if sep and not line.startswith(";"):
            out[name.strip()] = said.strip()
    return out


def _asterisk(out: Path, seed: int) -> tuple[list[dict], dict]:
    rows: list[dict] = []
    said = _transcripts()
    digit_word = re.compile(r"\b(" + "|".join(DIGIT_WORDS) + r")\b|\d", re.IGNORECASE)
    sentences, words = [], []
    for name, text in sorted(said.items()):
        f = ASTERISK_SOUNDS / f"{name}.wav"
        if "/" in name or not f.is_file() or "[" in text or digit_word.search(text):
            continue
        n_words = len(re.findall(r"[A-Za-z']+", text))
        if n_words >= 4:
            sentences.append((name, f))
        elif n_words == 1:
            words.append((name, f))
    (out / "speech").mkdir()
    for category, items, keep in (("speech_sentence", sentences, 120), ("speech_word", words, 40)):
        order = _rng(seed, category).permutation(len(items))[:keep]
        for i in sorted(order):
            name, f = items[i]
            dest = out / "speech" / f"allison_{name}.wav"
            shutil.copyfile(f, dest)
            rows.append(_row(dest, out, category, f"allison:{name}", "asterisk"))
    letters = ASTERISK_SOUNDS / "letters"
    for ch in "bcdfghjklmpqrtuvwxyz":  # not a, e, i, o, s: vowels and 'oh'
        f = letters / f"{ch}.wav"
        if f.is_file():
            dest = out / "speech" / f"allison_letter_{ch}.wav"
            shutil.copyfile(f, dest)
            rows.append(_row(dest, out, "speech_word", f"allison:letter_{ch}", "asterisk"))
    (out / "real_digits").mkdir()
    for d, label in enumerate(DIGIT_LABELS):
        f = ASTERISK_SOUNDS / "digits" / f"{d}.wav"
        dest = out / "real_digits" / f"allison_en_{d}.wav"
        shutil.copyfile(f, dest)
        rows.append(
            {
                **_row(dest, out, "real_digit", f"allison:{d}", "asterisk"),
                "target": label,
                "voice": "allison",
                "language": "en",
            }
        )
    used = [
        ASTERISK_SOUNDS / f"{r['group'].split(':', 1)[1]}.wav"
        for r in rows
        if r["category"] != "real_digit" and "letter_" not in r["group"]
    ]
    sources = {
        "asterisk": {
            "name": "Asterisk core sounds, English (recorded by Allison Smith)",
            "version": f"Debian asterisk-core-sounds-en-wav {_debian_version('asterisk-core-sounds-en-wav')}",
            "licence": "CC-BY-SA-3.0 (Allison Smith; Digium, Inc.)",
            "rate": "8 kHz, 16-bit WAV",
            "sha256": _sha256_files(sorted(used) + [ASTERISK_TRANSCRIPTS]),
        }
    }
    return rows, sources


def _gcin(out: Path, seed: int) -> tuple[list[dict], dict]:
    rows: list[dict] = []
    syllables = sorted(p.name for p in GCIN_VOICE.iterdir() if p.is_dir())
    others = [s for s in syllables if s.rstrip("12345") not in _DIGIT_SYLLABLES]
    pick = [others[i] for i in sorted(_rng(seed, "gcin").permutation(len(others))[:40])]
    read = []
    for s in pick:
        voice = sorted(p.name for p in (GCIN_VOICE / s).glob("*.ogg"))[0]
        f = GCIN_VOICE / s / voice
        dest = out / "speech" / f"gcin_{s}_{voice}"
        shutil.copyfile(f, dest)
        read.append(f)
        rows.append(_row(dest, out, "speech_word", f"gcin:{s}", "gcin"))
    for zhuyin, label in ZHUYIN_DIGITS.items():
        for voice in ("3.ogg", "5.ogg"):
            f = GCIN_VOICE / zhuyin / voice
            if f.is_file():
                dest = out / "real_digits" / f"gcin_zh_{label}_{voice}"
                shutil.copyfile(f, dest)
                read.append(f)
                rows.append(
                    {
                        **_row(dest, out, "real_digit", f"gcin:{zhuyin}:{voice}", "gcin"),
                        "target": label,
                        "voice": f"gcin-{voice.split('.')[0]}",
                        "language": "cmn",
                    }
                )
    sources = {
        "gcin": {
            "name": "gcin-voice: recorded Mandarin syllables (two voices)",
            "version": f"Debian gcin-voice {_debian_version('gcin-voice')}",
            "licence": "*/3.ogg: GPL-3 or LGPL-3 (Edward Der-Hua Liu); */5.ogg: CC-BY-3.0 "
            "(ChionMeilin, voice of Chu Lo)",
            "sha256": _sha256_files(read),
        }
    }
    return rows, sources


def _espeak(out: Path, seed: int) -> tuple[list[dict], dict]:
    from .data.suite.common import run_tool
    from .data.suite.speech import espeak

    exe, _data, version = espeak()
    rows: list[dict] = []
    variants = ("f3", "m3", "klatt2")
    for lang, voice, sentences in (("en", "en-us", SENTENCES_EN), ("cmn", "cmn", SENTENCES_ZH)):
        for i, text in enumerate(sentences):
            variant = variants[i % len(variants)]
            dest = out / "speech" / f"espeak_{lang}_{i}.wav"
            run_tool([exe, "-v", f"{voice}+{variant}", "-w", str(dest), text], "espeak-ng")
            rows.append(_row(dest, out, "synthetic_sentence", f"espeak:{lang}:{i}", "espeak"))
    return rows, {
        "espeak": {
            "name": "espeak-ng reading sentences",
            "version": version,
            "licence": "espeak-ng: GPL-3.0-or-later; its output is not covered by the GPL",
        }
    }


def _noise(out: Path, seed: int) -> tuple[list[dict], dict]:
    from .data.suite.common import write_wav

    rate = 16_000
    rows: list[dict] = []
    (out / "noise").mkdir()
    for colour, exponent in (("white", 0.0), ("pink", 1.0), ("brown", 2.0)):
        for i in range(8):
            rng = _rng(seed, "noise", colour, i)
            n = int(rate * rng.uniform(0.6, 2.0))
            spec = np.fft.rfft(rng.standard_normal(n))
            f = np.fft.rfftfreq(n, 1 / rate)
            spec[1:] /= f[1:] ** (exponent / 2)
            spec[0] = 0
            x = np.fft.irfft(spec, n)
            x *= 10 ** (rng.uniform(-26, -8) / 20) / np.sqrt(np.mean(x * x))
            dest = out / "noise" / f"{colour}_{i}.wav"
            write_wav(dest, np.clip(x, -1, 1), rate)
            rows.append(_row(dest, out, "noise", f"noise:{colour}:{i}", "numpy"))
    return rows, {
        "numpy": {
            "name": "white, pink and brown noise (seeded numpy generator)",
            "licence": "generated here (MIT, part of v22sdk)",
        }
    }


def _fluidr3(out: Path, seed: int) -> tuple[list[dict], dict]:
    from .data.suite.common import find_program, sha256_file, write_wav
    from .data.suite.instruments import RATE, find_soundfont, render

    exe = find_program("fluidsynth", "fluidsynth")
    soundfont = find_soundfont()
    notes, meta = [], []
    for category, programs in (("instrument", OTHER_INSTRUMENTS), ("sound_effect", SOUND_EFFECTS)):
        for program, name in programs:
            pitches = (48, 60, 72) if category == "instrument" else (60,)
            for pitch in pitches:
                notes.append((program, pitch, 80))
                meta.append((category, program, name, pitch))
    rows: list[dict] = []
    (out / "instruments").mkdir()
    with tempfile.TemporaryDirectory() as tmp:
        for (category, program, name, pitch), clip in zip(meta, render(exe, soundfont, notes, Path(tmp))):
            if np.abs(clip).max() < 1e-4:
                continue  # a program FluidR3 renders silent at this pitch: not an input
            dest = out / "instruments" / f"gm{program:03d}_{pitch}.wav"
            write_wav(dest, clip, RATE)
            rows.append({**_row(dest, out, category, f"gm:{program}", "fluidr3"), "name": name, "pitch": pitch})
    return rows, {
        "fluidr3": {
            "name": "FluidR3_GM.sf2 programs the suite does not play, rendered by FluidSynth",
            "version": f"Debian fluid-soundfont-gm {_debian_version('fluid-soundfont-gm')}",
            "licence": "MIT (per Debian's copyright file)",
            "sha256": sha256_file(soundfont),
        }
    }


def _texts(out: Path, seed: int) -> tuple[list[dict], dict]:
    import ast
    import codecs
    import importlib.util

    rows: list[dict] = []
    # the Zen of Python, read from the 'this' module's source (importing it would print it)
    spec = importlib.util.find_spec("this")
    if spec is None or spec.origin is None:
        raise MissingDependency(
            "the standard library's 'this' module", "reinstall Python with its full standard library"
        )
    source = Path(spec.origin).read_text(encoding="utf-8")
    coded = next(
        ast.literal_eval(node.value)
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "s"
    )
    zen = [line.strip() for line in codecs.decode(coded, "rot13").splitlines()[2:] if line.strip()]
    for i, line in enumerate(zen):
        rows.append(
            {"input": line, "modality": "text", "category": "sentence_text", "group": f"zen:{i}", "source": "python"}
        )
    poems = TANG300.read_text(encoding="utf-8", errors="replace")
    lines = [
        s
        for s in re.findall(r"[\u4e00-\u9fff]{5,7}[，。]", poems)
        if not any(d in s for d in "零〇一二三四五六七八九十百千两")
    ]
    pick = sorted(_rng(seed, "tang").permutation(len(lines))[:40])
    for i in pick:
        rows.append(
            {
                "input": lines[i],
                "modality": "text",
                "category": "sentence_text",
                "group": f"tang300:{i}",
                "source": "fortunes-zh",
            }
        )
    for i, text in enumerate(OTHER_NUMBERS):
        rows.append(
            {"input": text, "modality": "text", "category": "other_number", "group": f"number:{i}", "source": "v22sdk"}
        )
    import platform

    return rows, {
        "python": {
            "name": "the Zen of Python (the 'this' module)",
            "version": platform.python_version(),
            "licence": "PSF-2.0",
        },
        "fortunes-zh": {
            "name": "Tang poems (fortunes-zh tang300)",
            "version": f"Debian fortunes-zh {_debian_version('fortunes-zh')}",
            "licence": "GPL-2 (the poems themselves are public domain)",
            "sha256": _sha256(TANG300),
        },
        "v22sdk": {"name": "numbers that are not digits, written here", "licence": "MIT, part of v22sdk"},
    }


# -- helpers -----------------------------------------------------------------------------------------


def _check_dependencies() -> None:
    need = [
        (ASTERISK_SOUNDS / "digits" / "0.wav", "asterisk-core-sounds-en-wav"),
        (ASTERISK_TRANSCRIPTS, "asterisk-core-sounds-en"),
        (GCIN_VOICE, "gcin-voice"),
        (TANG300, "fortunes-zh"),
    ]
    for path, package in need:
        if not path.exists():
            raise MissingDependency(str(path), f"install the Debian package '{package}' (apt-get install {package})")
    for module, pip in (("skimage", "scikit-image"), ("sklearn", "scikit-learn"), ("cv2", "opencv-python-headless")):
        import importlib.util

        if importlib.util.find_spec(module) is None:
            raise MissingDependency(f"the Python package {pip}", f"pip install {pip}")


def _row(path: Path, out: Path, category: str, group: str, source: str) -> dict[str, Any]:
    return {
        "input": str(path.relative_to(out)),
        "modality": CATEGORIES.get(category, "audio"),
        "category": category,
        "group": group,
        "source": source,
        "sha256": _sha256(path),
    }


def _split(seed: int, category: str, group: str) -> str:
    """dev for a third of each category's groups (by a seeded hash of the group), test otherwise."""
    h = hashlib.sha256(f"{seed}:{category}:{group}".encode()).digest()
    return "dev" if int.from_bytes(h[:8], "big") % 3 == 0 else "test"


def _rng(seed: int, *key: Any) -> np.random.Generator:
    digest = hashlib.sha256(json.dumps([seed, *key], ensure_ascii=False).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _sha256_files(paths) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).name.encode())
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def _debian_version(package: str) -> str | None:
    from .data.suite.common import debian_version

    return debian_version(package)


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
