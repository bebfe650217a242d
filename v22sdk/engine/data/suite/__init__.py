"""The real multimodal data suite: handwriting, speech, instrument notes and text, one label space.

Built at run time, with no download, from data that installed packages ship::

    from v22sdk.engine.data.suite import build_suite
    manifest = build_suite("suite", size="small", seed=0)   # → Path("suite/suite.jsonl")

or ``v22sdk data build-suite suite --size small --seed 0``. The folder holds

* ``suite.jsonl``: every example, one ``{"input", "modality", "target", "split", "part", "group",
  "meta", ["sha256"]}`` per line: what ``v22sdk train`` reads (it ignores the extra keys), with
  the split pinned; ``handwriting.jsonl``, ``speech.jsonl``, ``instruments.jsonl`` and
  ``text.jsonl``: the same lines by part;
* ``handwriting/`` (PNG), ``speech/`` and ``instruments/`` (WAV): the files;
* ``suite.json``: the build (size, seed, builder version), each source's name, version, licence
  and SHA-256 of what was read, the tools' versions, counts by part/split/label and the SHA-256
  of every manifest; ``README.txt``: the same for people. (Not ``manifest.json``: a folder with
  that file is read by ``v22sdk train`` as tokenized shards.)

Parts (each module's docstring says how it is made and split):

========== ======== ============================================ ===============================
part        modality source                                      split (val and test held out)
========== ======== ============================================ ===============================
handwriting vision   scikit-learn's digits: 1,797 real scans      stratified by digit, seeded
speech      audio    espeak-ng, ~100 voice variants, en + cmn     by voice variant
instruments audio    FluidR3_GM.sf2 via fluidsynth, 8 instruments by MIDI pitch
text        text     digit forms × phrasings (7, 七, 柒, seven…)   stratified by digit, seeded
========== ======== ============================================ ===============================

Targets: a digit is its Chinese numeral (``七``) in every modality; an instrument is its Chinese
name (``钢琴``, ``小提琴`` …). Sizes: ``tiny`` (tests: ~210 examples, seconds), ``small``
(experiments on 2 CPU cores: ~1,800), ``full`` (everything: ~5,700). A smaller size is a subset
of a larger one built with the same seed, with the same splits.

Determinism: every choice is seeded by (seed, the item's identity). The files are bit-identical
across builds on one machine (tested); across machines they depend on the versions of
espeak-ng, FluidSynth, the soundfont, OpenCV's PNG encoder and scikit-learn's copy of the data,
all recorded in ``suite.json``, with each file's SHA-256 in the manifests
(:func:`verify_suite` checks them).
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ....errors import InputError, V22Error
from .common import DIGIT_LABELS, SPLITS, Record, sha256_file

__all__ = [
    "build_suite",
    "verify_suite",
    "read_suite_info",
    "SIZES",
    "PARTS",
    "DIGIT_LABELS",
    "INSTRUMENT_LABELS",
    "BUILDER_VERSION",
]

#: bump when a change to the builder changes what a given (size, seed) produces
BUILDER_VERSION = 1
PARTS = ("handwriting", "speech", "instruments", "text")
MANIFEST = "suite.jsonl"
INFO = "suite.json"


def _instrument_labels() -> tuple[str, ...]:
    from .instruments import INSTRUMENTS

    return tuple(i[0] for i in INSTRUMENTS)


INSTRUMENT_LABELS = _instrument_labels()

#: per size and part, how much to keep per split (None: everything)
SIZES: dict[str, dict[str, Any]] = {
    "tiny": {
        "handwriting": {"train": 3, "val": 1, "test": 1},  # scans per digit
        "speech": {"train": 2, "val": 1, "test": 1},  # voices
        "instruments": ({"train": 2, "val": 1, "test": 1}, False),  # pitches per instrument, all velocities?
        "text": {"train": 3, "val": 1, "test": 1},
    },  # strings per digit
    "small": {
        "handwriting": {"train": 42, "val": 6, "test": 12},
        "speech": {"train": 21, "val": 3, "test": 6},
        "instruments": (None, False),
        "text": {"train": 21, "val": 3, "test": 6},
    },
    "full": {"handwriting": None, "speech": None, "instruments": (None, True), "text": None},
}


def build_suite(
    out: str | os.PathLike[str],
    *,
    size: str = "small",
    seed: int = 0,
    parts: Iterable[str] = PARTS,
    soundfont: str | None = None,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Build the suite into the folder ``out`` (new, or empty) and return its manifest's path.

    The folder is built under a temporary name next to ``out`` and renamed when complete, so
    ``out`` never holds half a suite. Missing tools are reported before anything is made:
    :class:`~v22sdk.errors.MissingDependency` names the program, file or package and how to
    install it. ``parts``: a subset of :data:`PARTS`. ``soundfont``: another path of
    FluidR3_GM.sf2. ``log``: called with a line per step (progress).
    """
    log = log or (lambda _line: None)
    if size not in SIZES:
        raise InputError(f"size {size!r}", f"unknown suite size; choose one of {', '.join(SIZES)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise InputError(f"seed {seed!r}", "the suite's seed must be an integer in [0, 2**32)")
    parts = list(dict.fromkeys(parts))
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        raise InputError(f"parts {','.join(unknown) or '(none)'}", f"choose one or more of {', '.join(PARTS)}")
    target = Path(out)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InputError(str(target), "exists and is not an empty folder; give a new folder for the suite")
    _check_tools(parts, soundfont)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.partial-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        records, sources = _build_parts(tmp, parts, SIZES[size], seed, soundfont, log)
        _write_manifests(tmp, records, parts)
        info = _info(tmp, size, seed, parts, records, sources)
        (tmp / INFO).write_text(json.dumps(info, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        (tmp / "README.txt").write_text(_readme(info), encoding="utf-8")
        if target.exists():
            target.rmdir()
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log(f"suite: {len(records)} examples in {target}")
    return target / MANIFEST


def _check_tools(parts: list[str], soundfont: str | None) -> None:
    """Raise MissingDependency for the first tool a requested part lacks (before anything is built)."""
    from .common import find_program

    if "handwriting" in parts:
        from .handwriting import require_sklearn

        require_sklearn()
    if "speech" in parts:
        from .speech import espeak

        espeak()
    if "instruments" in parts:
        from .instruments import find_soundfont

        find_program("fluidsynth", "fluidsynth")
        find_soundfont(soundfont)


def _build_parts(
    tmp: Path, parts: list[str], spec: dict[str, Any], seed: int, soundfont: str | None, log: Callable[[str], None]
) -> tuple[list[Record], dict[str, dict]]:
    records: list[Record] = []
    sources: dict[str, dict] = {}
    for part in parts:
        if part == "handwriting":
            from . import handwriting

            recs, src = handwriting.build(tmp, seed, spec[part], log)
        elif part == "speech":
            from . import speech

            recs, src = speech.build(tmp, seed, spec[part], log)
        elif part == "instruments":
            from . import instruments

            keep, all_velocities = spec[part]
            recs, src = instruments.build(tmp, seed, keep, all_velocities, log, soundfont)
        else:
            from . import text

            recs, src = text.build(tmp, seed, spec[part], log)
        records += recs
        sources[part] = src
    return records, sources


def _write_manifests(folder: Path, records: list[Record], parts: list[str]) -> None:
    def write(name: str, recs: list[Record]) -> None:
        with open(folder / name, "w", encoding="utf-8", newline="\n") as fh:
            for r in recs:
                fh.write(json.dumps(r.to_json(), ensure_ascii=False, sort_keys=False) + "\n")

    write(MANIFEST, records)
    for part in parts:
        write(f"{part}.jsonl", [r for r in records if r.part == part])


def _info(
    folder: Path, size: str, seed: int, parts: list[str], records: list[Record], sources: dict[str, dict]
) -> dict[str, Any]:
    from .... import __version__

    counts: dict[str, Any] = {}
    for part in parts:
        mine = [r for r in records if r.part == part]
        counts[part] = {
            "n": len(mine),
            "by_split": {s: sum(r.split == s for r in mine) for s in SPLITS},
            "groups_by_split": {s: len({r.group for r in mine if r.split == s}) for s in SPLITS},
            "by_label": dict(sorted(Counter(r.target for r in mine).items(), key=lambda kv: kv[0])),
        }
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return {
        "name": "v22sdk data suite",
        "builder_version": BUILDER_VERSION,
        "v22sdk": __version__,
        "size": size,
        "seed": seed,
        "parts": parts,
        "command": f"v22sdk data build-suite OUT --size {size} --seed {seed}"
        + (f" --parts {','.join(parts)}" if parts != list(PARTS) else ""),
        "labels": {"digits": list(DIGIT_LABELS), "instruments": list(INSTRUMENT_LABELS)},
        "n": len(records),
        "counts": counts,
        "sources": sources,
        "files": {
            "n": sum(1 for p in files if p.suffix in (".png", ".wav")),
            "bytes": sum(p.stat().st_size for p in files if p.suffix in (".png", ".wav")),
        },
        "manifests_sha256": {p.name: sha256_file(p) for p in files if p.suffix == ".jsonl"},
    }


def _readme(info: dict[str, Any]) -> str:
    lines = [
        f"v22sdk data suite (builder version {info['builder_version']}, size {info['size']}, seed {info['seed']})",
        f"Rebuild: {info['command']}",
        "",
        "Train on it: v22sdk train suite.jsonl -o model.pt  (splits are pinned in the manifest)",
        "",
        "Sources, versions and licences:",
    ]
    for part, src in info["sources"].items():
        c = info["counts"][part]
        lines += [
            f"- {part}: {src['name']}",
            f"    version: {src['version']}",
            f"    licence: {src['licence']}",
            f"    split: {src['split']}",
            f"    examples: {c['n']} (train {c['by_split']['train']}, val {c['by_split']['val']}, "
            f"test {c['by_split']['test']})",
        ]
    lines += ["", "SHA-256 of what was read: suite.json (sources); of every file written: the manifests."]
    return "\n".join(lines) + "\n"


def read_suite_info(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``suite.json`` of a built suite (InputError when ``folder`` holds none)."""
    p = Path(folder) / INFO
    if not p.is_file():
        raise InputError(str(folder), f"holds no {INFO}: not a suite built by 'v22sdk data build-suite'")
    return json.loads(p.read_text(encoding="utf-8"))


def verify_suite(folder: str | os.PathLike[str]) -> list[str]:
    """Problems of a built suite: files missing or changed since it was built (their SHA-256 in the
    manifests), manifests changed (their SHA-256 in ``suite.json``). Empty when intact."""
    folder = Path(folder)
    info = read_suite_info(folder)
    problems = []
    for name, digest in info.get("manifests_sha256", {}).items():
        p = folder / name
        if not p.is_file():
            problems.append(f"{name}: missing")
        elif sha256_file(p) != digest:
            problems.append(f"{name}: changed since the suite was built")
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return problems
    for n, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), 1):
        rec = json.loads(line)
        if "sha256" not in rec:
            continue
        p = folder / rec["input"]
        if not p.is_file():
            problems.append(f"{rec['input']}: missing (line {n})")
        elif sha256_file(p) != rec["sha256"]:
            problems.append(f"{rec['input']}: changed since the suite was built (line {n})")
    return problems


class SuiteError(V22Error):
    """A built suite failed verification (files missing or changed)."""
