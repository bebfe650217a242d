"""What the suite's parts share: the label space, keyed random generators, group splits, hashing
and finding the external tools (with a typed error naming what is missing).

Every random choice of the builder comes from :func:`rng_for` keyed by the build seed and the
item's own identity (never from the order items are made in), so a smaller size is a subset of
a larger one built with the same seed, with the same split for every item it keeps.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ....errors import MissingDependency

#: the digit's label in every modality: its Chinese numeral
DIGIT_LABELS = ("零", "一", "二", "三", "四", "五", "六", "七", "八", "九")

#: fractions of each part's groups (writers' scans, voices, pitches, strings) held out
TEST_FRAC, VAL_FRAC = 0.2, 0.1

SPLITS = ("train", "val", "test")


@dataclass
class Record:
    """One manifest line: what ``v22sdk train`` reads (``input``, ``modality``, ``target``,
    ``split``) plus where it came from (``part``, ``group``: the unit the split was made by, and
    ``meta``), and for files the SHA-256 of the bytes written."""

    input: str
    modality: str
    target: str
    split: str
    part: str
    group: str
    meta: dict[str, Any] = field(default_factory=dict)
    sha256: str | None = None

    def to_json(self) -> dict[str, Any]:
        d = {
            "input": self.input,
            "modality": self.modality,
            "target": self.target,
            "split": self.split,
            "part": self.part,
            "group": self.group,
            "meta": self.meta,
        }
        if self.sha256:
            d["sha256"] = self.sha256
        return d


def rng_for(seed: int, *key: Any) -> np.random.Generator:
    """A generator that depends only on ``seed`` and ``key`` (hashed, so not Python's salted hash)."""
    digest = hashlib.sha256(json.dumps([int(seed), *key], ensure_ascii=False, default=str).encode()).digest()
    words = np.frombuffer(digest[:16], dtype="<u4").tolist()
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, *words])


def split_counts(n: int) -> dict[str, int]:
    """How many of ``n`` groups go to test, val and train (at least one test and, from 3 groups
    on, one val group)."""
    n_test = max(1, int(round(n * TEST_FRAC))) if n >= 2 else 0
    n_val = max(1, int(round(n * VAL_FRAC))) if n >= 3 else 0
    return {"test": n_test, "val": n_val, "train": n - n_test - n_val}


def split_groups(groups: Sequence[Any], seed: int, *key: Any) -> dict[Any, str]:
    """Assign each group to a split: a seeded permutation, the first ``split_counts`` to test,
    then val, then train."""
    order = [groups[i] for i in rng_for(seed, "split", *key).permutation(len(groups))]
    counts = split_counts(len(groups))
    out: dict[Any, str] = {}
    for i, g in enumerate(order):
        out[g] = "test" if i < counts["test"] else ("val" if i < counts["test"] + counts["val"] else "train")
    return out


def first_per_split(items: Sequence[Any], split_of, keep: dict[str, int] | None, order_key) -> list[Any]:
    """Of ``items``, the first ``keep[split]`` of each split in the order of ``order_key`` (all
    when ``keep`` is None); returned in the items' original order."""
    if keep is None:
        return list(items)
    chosen: set[int] = set()
    for split in SPLITS:
        idx = sorted((i for i, it in enumerate(items) if split_of(it) == split), key=lambda i: order_key(items[i]))
        chosen.update(idx[: keep.get(split, 0)])
    return [it for i, it in enumerate(items) if i in chosen]


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_files(paths: Iterable[str | Path], root: str | Path | None = None) -> str:
    """One digest over several files: each file's name (relative to ``root``) and bytes."""
    h = hashlib.sha256()
    for p in sorted(Path(x) for x in paths):
        name = str(p.relative_to(root)) if root else str(p)
        h.update(name.encode())
        h.update(b"\0")
        h.update(sha256_file(p).encode())
    return h.hexdigest()


def find_program(name: str, debian_package: str) -> str:
    """The path of the program ``name``; :class:`MissingDependency` naming it and its Debian package."""
    path = shutil.which(name)
    if path is None:
        raise MissingDependency(
            f"the program {name!r}",
            f"install the Debian package '{debian_package}' "
            f"(apt-get install {debian_package}; scripts/ci_services.sh does)",
        )
    return path


def run_tool(args: Sequence[str], what: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run an external program; a failure is a :class:`~v22sdk.errors.V22Error` naming it and its stderr."""
    from ....errors import V22Error

    try:
        out = subprocess.run(list(args), capture_output=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        raise V22Error(f"{what}: {args[0]} could not run: {exc}") from None
    if out.returncode != 0:
        err = out.stderr.decode("utf-8", "replace").strip().splitlines()
        raise V22Error(f"{what}: {Path(args[0]).name} exited with {out.returncode}" + (f": {err[-1]}" if err else ""))
    return out


def debian_version(package: str) -> str | None:
    """The installed Debian package's version, or None (no dpkg, or not installed that way)."""
    if shutil.which("dpkg-query") is None:
        return None
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def write_wav(path: Path, samples: np.ndarray, rate: int) -> str:
    """Write mono float samples in [-1, 1] as 16-bit PCM WAV; returns the file's SHA-256."""
    import soundfile

    pcm = np.clip(np.rint(np.asarray(samples, dtype=np.float64) * 32767.0), -32768, 32767).astype(np.int16)
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(str(path), pcm, rate, subtype="PCM_16", format="WAV")
    return sha256_file(path)
