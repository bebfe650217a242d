"""Speech: the digits 0–9 spoken in English and in Mandarin by espeak-ng, split by voice.

A *voice* is one of espeak-ng's voice variants (``voices/!v/*`` in its data: ``f3``, ``klatt2``,
``Storm`` …; each sets formants, pitch range, breathiness and so on), i.e. the synthetic speaker.
Every variant says every digit once in English and once in Mandarin. The split is by variant:
test (and val) variants are never heard in training, in either language.

Per clip, seeded by (seed, variant, language, digit): the English accent (one of the eight
built-in English voices: British, American, Scottish, Lancastrian, RP, West Midlands,
Caribbean, New York), the speed (130–210 words per minute), the pitch (espeak ``-p`` 25–75) and
the amplitude (``-a`` 60–100; 100 is espeak's default, lower keeps most loud variants from
clipping).

Mandarin is spoken by the ``cmn-latn-pinyin`` voice from tone-numbered pinyin (``qi1``): in
espeak-ng 1.51 (Debian 12) the ``cmn`` voice's dictionary lacks most digit characters and reads
七 as English letter names, while its pinyin rules give the right Mandarin phonemes and tones.
MBROLA voices are not used (their data is not installed by ``espeak-ng``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ....errors import MissingDependency
from .common import (
    DIGIT_LABELS,
    Record,
    debian_version,
    find_program,
    first_per_split,
    rng_for,
    run_tool,
    sha256_file,
    sha256_files,
    split_groups,
)

PART = "speech"
ENGLISH_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
PINYIN = ("ling2", "yi1", "er4", "san1", "si4", "wu3", "liu4", "qi1", "ba1", "jiu3")
#: espeak-ng voice name → its language file under ``lang/``
ENGLISH_ACCENTS = {
    "en-gb": "gmw/en",
    "en-us": "gmw/en-US",
    "en-gb-scotland": "gmw/en-GB-scotland",
    "en-gb-x-gbclan": "gmw/en-GB-x-gbclan",
    "en-gb-x-rp": "gmw/en-GB-x-rp",
    "en-gb-x-gbcwmd": "gmw/en-GB-x-gbcwmd",
    "en-029": "gmw/en-029",
    "en-us-nyc": "gmw/en-US-nyc",
}
MANDARIN = ("cmn-latn-pinyin", "sit/cmn-Latn-pinyin")
SPEED = (130, 210)
PITCH = (25, 75)
AMPLITUDE = (60, 100)
LANGUAGES = ("en", "cmn")


def espeak() -> tuple[str, Path, str]:
    """The espeak-ng program, its data folder and its version line."""
    exe = find_program("espeak-ng", "espeak-ng")
    out = run_tool([exe, "--version"], "espeak-ng --version", timeout=60).stdout.decode("utf-8", "replace").strip()
    m = re.search(r"Data at:\s*(\S.*)$", out)
    if not m or not Path(m.group(1)).is_dir():
        raise MissingDependency("espeak-ng's data folder", "install the Debian package 'espeak-ng-data'")
    return exe, Path(m.group(1).strip()), out.split("Data at:")[0].strip()


def variants(data: Path) -> list[str]:
    """The installed voice variants (file names under ``voices/!v``; names with spaces left out,
    since espeak-ng's ``voice+variant`` syntax cannot carry them), sorted."""
    folder = data / "voices" / "!v"
    names = sorted(p.name for p in folder.iterdir() if p.is_file() and " " not in p.name) if folder.is_dir() else []
    if len(names) < 3:
        raise MissingDependency("espeak-ng's voice variants", f"{folder} holds {len(names)}; install 'espeak-ng-data'")
    return names


def build(
    out: Path, seed: int, voices_per_split: dict[str, int] | None, log: Callable[[str], None]
) -> tuple[list[Record], dict]:
    """Synthesise the clips under ``out/speech/<variant>/`` and return their records and the
    source's record. ``voices_per_split``: variants kept per split (None: all)."""
    exe, data, version = espeak()
    names = variants(data)
    for voice, lang_file in [*ENGLISH_ACCENTS.items(), MANDARIN]:
        if not (data / "lang" / lang_file).is_file():
            raise MissingDependency(f"the espeak-ng voice {voice!r}", "install the Debian package 'espeak-ng-data'")
    split_of = split_groups(names, seed, PART)
    rank = {v: int(rng_for(seed, PART, "rank", v).integers(1 << 62)) for v in names}
    chosen = first_per_split(names, split_of.get, voices_per_split, rank.get)
    log(f"speech: {len(chosen)} of {len(names)} voices × {len(LANGUAGES)} languages × 10 digits")
    accents = list(ENGLISH_ACCENTS)
    records = []
    for variant in chosen:
        for lang in LANGUAGES:
            for d in range(10):
                rng = rng_for(seed, PART, variant, lang, d)
                accent = accents[int(rng.integers(len(accents)))] if lang == "en" else MANDARIN[0]
                speed = int(rng.integers(SPEED[0], SPEED[1] + 1))
                pitch = int(rng.integers(PITCH[0], PITCH[1] + 1))
                amplitude = int(rng.integers(AMPLITUDE[0], AMPLITUDE[1] + 1))
                words = ENGLISH_WORDS[d] if lang == "en" else PINYIN[d]
                rel = f"{PART}/{variant}/{lang}_{d}.wav"
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                run_tool(
                    [
                        exe,
                        "-v",
                        f"{accent}+{variant}",
                        "-s",
                        str(speed),
                        "-p",
                        str(pitch),
                        "-a",
                        str(amplitude),
                        "-w",
                        str(out / rel),
                        words,
                    ],
                    f"espeak-ng ({rel})",
                    timeout=60,
                )
                records.append(
                    Record(
                        rel,
                        "audio",
                        DIGIT_LABELS[d],
                        split_of[variant],
                        PART,
                        f"voice:{variant}",
                        {
                            "digit": d,
                            "language": lang,
                            "voice": f"{accent}+{variant}",
                            "text": words,
                            "speed_wpm": speed,
                            "pitch": pitch,
                            "amplitude": amplitude,
                        },
                        sha256_file(out / rel),
                    )
                )
    used_lang = sorted({data / "lang" / f for f in [*ENGLISH_ACCENTS.values(), MANDARIN[1]]})
    read = (
        [data / f for f in ("phontab", "phonindex", "phondata", "intonations", "en_dict", "cmn_dict")]
        + used_lang
        + [data / "voices" / "!v" / v for v in chosen]
    )
    source = {
        "name": "espeak-ng speech synthesiser",
        "version": version
        + (f" (Debian espeak-ng-data {debian_version('espeak-ng-data')})" if debian_version("espeak-ng-data") else ""),
        "licence": "espeak-ng: GPL-3.0-or-later; its synthesised output is not covered by the GPL",
        "program": exe,
        "sha256": {
            "data files read (phoneme tables, en/cmn dictionaries, 9 language files, the variants used)": sha256_files(
                [p for p in read if p.is_file()], data
            )
        },
        "voices": {
            "all": names,
            "used": chosen,
            "by_split": {s: [v for v in chosen if split_of[v] == s] for s in ("train", "val", "test")},
        },
        "english_accents": accents,
        "mandarin": MANDARIN[0],
        "parameters": {"speed_wpm": list(SPEED), "pitch": list(PITCH), "amplitude": list(AMPLITUDE)},
        "split_by": "voice",
        "split": "by voice variant: val and test variants are never heard in training, in either language",
        "determinism": "espeak-ng output was bit-identical across runs on the machine that built the reference "
        "suite; each file's SHA-256 is in the manifest",
    }
    return records, source
