"""Training data: manifests, tokenization (cached), the deterministic split and the aux targets.

A data set is read from one of:

* a JSONL manifest, one ``{"input": ..., "modality": ..., "target": ..., ["split": ...]}`` per
  line; ``input`` is the text itself for text inputs (unless it names an existing file next to
  the manifest with one of the modality's extensions, e.g. ``notes/a.txt``: then that file is
  read), otherwise a path relative to the manifest;
  ``modality`` may be left out for files (it is taken from the extension); ``split`` (``train``,
  ``val`` or ``test``) pins an example to a split (held-out sets such as unseen tone frequencies);
* a ``.tsv`` of ``input<TAB>target`` text pairs (``#`` lines skipped);
* a folder of label-named sub-folders (``apples/苹果/001.png`` → target ``苹果``).

Tokenizers are pure functions, so each data set is tokenized once and cached as ``.npz``
(keyed by every input's bytes, the modality's name, version and config).

Auxiliary targets come from the tokens' named attribute slots, never from the modality's name,
so images and sounds are supervised as much as their slots allow (see docs/engine.md):
A (structure, 20 classes): the language rule classes (0 question, 12 exclamation, 13 negation,
6 statement) from language slots whose names say so; otherwise 14 + the dominant non-language
zone (14 vision, 15 audio); -1 (masked) when no slot is active. B: the mean attr (always).
C: the first 5 slots whose names mention emotion/polarity/sentiment/valence/arousal (masked when
the schema has none). D: argmax of the summed logic-relation slots (masked when none is active,
unlike upstream, which trained "cause" whenever there was no relation).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..._paths import is_file
from ...contract import TokenBatch, load_batches, save_batches
from ...errors import InputError
from ...inputs import check_regular_file, looks_like_path, special_kind
from ...modality import Modality
from ...schema import ZONES

SPLITS = ("train", "val", "test")
_A_RULES = ((re.compile(r"question|interrog"), 0), (re.compile(r"exclam"), 12), (re.compile(r"negat"), 13))
_TONE = re.compile(r"emotion|polarity|sentiment|valence|arousal")
_REL = re.compile(r"logic|relation|connective")
C_TARGET_DIM = 5


@dataclass
class Example:
    """One (input, target) pair; ``input`` is text or a resolved file path."""

    input: str
    modality: str
    target: str
    is_file: bool
    split: str | None = None
    line: int = 0


def _modality_for(registry, path: str) -> str:
    return registry.modality_for_path(path)


def read_examples(source: str | os.PathLike[str], registry=None, *, modality: str | None = None) -> list[Example]:
    """Examples from a JSONL manifest, a TSV of text pairs or a folder of label-named sub-folders.

    ``modality`` is the modality of a folder's files, of manifest lines that name none and of a
    TSV's texts (default: from each file's extension; ``text`` for texts). Hidden entries
    (``.DS_Store``, ``.git``) of a folder data set are skipped.
    """
    from ...plugins import get_registry

    registry = registry or get_registry()
    path = Path(source)
    if not path.exists():
        raise InputError(str(path), "no such data set (a .jsonl manifest, a .tsv file or a folder)")
    if modality is not None:
        registry.get_class("modalities", modality)  # an unknown name: UnknownNameError naming the installed ones
    if not path.is_dir():
        check_regular_file(path)  # a FIFO or /dev/zero would be read for ever
    if path.is_dir():
        out = []
        for sub in sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")):
            for f in sorted(p for p in sub.iterdir() if p.is_file() and not p.name.startswith(".")):
                out.append(Example(str(f), modality or _modality_for(registry, str(f)), sub.name, True))
        if not out:
            raise InputError(str(path), "folder holds no label-named sub-folders with files")
        return out
    text = _read_text(path)
    if path.suffix.lower() == ".tsv":
        if modality is not None and not _is_text(registry, modality):
            raise InputError(str(path), f"a .tsv holds text pairs; the {modality} modality does not read texts")
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
                found = f" (found {len(parts)} columns)" if len(parts) != 2 else ""
                raise InputError(f"{path}:{n}", f"a TSV line needs input<TAB>target, both non-empty{found}")
            out.append(Example(parts[0].strip(), modality or "text", parts[1].strip(), False, line=n))
        return _nonempty(out, path)
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{n}", f"invalid JSON: {exc.msg}") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("input"), str) or not isinstance(rec.get("target"), str):
            raise InputError(f"{path}:{n}", 'a manifest line needs {"input": str, "target": str}')
        if not rec["target"].strip():
            raise InputError(f"{path}:{n}", "empty target")
        split = rec.get("split")
        if split is not None and split not in SPLITS:
            raise InputError(f"{path}:{n}", f"split must be one of {', '.join(SPLITS)}, not {split!r}")
        line_modality = rec.get("modality")
        if line_modality is not None and not isinstance(line_modality, str):
            raise InputError(f"{path}:{n}", "modality must be a string")
        line_modality = line_modality or modality
        if line_modality is not None and line_modality not in registry.names("modalities"):
            installed = ", ".join(registry.names("modalities")) or "none"
            raise InputError(f"{path}:{n}", f"unknown modality {line_modality!r} (installed: {installed})")
        literal = rec.get("literal", False)
        if not isinstance(literal, bool):
            raise InputError(f"{path}:{n}", "literal must be true or false")
        named = path.parent / rec["input"]
        if not literal:
            text_ok = line_modality is None or _is_text(registry, line_modality)
            _check_named(named, rec["input"], registry, f"{path}:{n}", text_ok)
        if line_modality is None and (literal or not is_file(named)):
            line_modality = "text"
        if line_modality is not None and _is_text(registry, line_modality):
            if not literal and _reads_extension(registry, line_modality, named) and is_file(named):
                # "notes/a.txt" next to the manifest is that file's text, not the 11 characters
                out.append(Example(str(named), line_modality, rec["target"], True, split, n))
            else:
                out.append(Example(rec["input"], line_modality, rec["target"], False, split, n))
            continue
        file = path.parent / rec["input"]
        if not file.is_file():
            raise InputError(f"{path}:{n}", f"input file {rec['input']!r} not found next to the manifest")
        line_modality = line_modality or _modality_for(registry, str(file))
        out.append(Example(str(file), line_modality, rec["target"], True, split, n))
    return _nonempty(out, path)


def _check_named(named: Path, given: str, registry, where: str, text_ok: bool) -> None:
    """The rule of :mod:`v22sdk.inputs` for a manifest input: a special file, or (where a text
    could be meant) a missing path that looks like one, is an error naming the line
    (``"literal": true`` makes it a text)."""
    try:
        st = os.stat(named)
    except (OSError, ValueError):
        if text_ok and looks_like_path(given, registry.extensions()):
            raise InputError(
                where,
                f"input {given!r} looks like a file name but no such file exists next to "
                'the manifest (add "literal": true to the line to read it as text)',
            ) from None
        return
    kind = special_kind(st.st_mode)
    if kind:
        raise InputError(where, f"input {given!r} is {kind}, not a regular file")


def _is_text(registry, modality: str) -> bool:
    """Whether a modality takes a str (its input is the manifest's text) rather than a file."""
    if modality == "text":
        return True
    return getattr(registry.get_class("modalities", modality).input_spec, "kind", "") == "text"


def _reads_extension(registry, modality: str, path: Path) -> bool:
    """Whether ``modality`` declares ``path``'s extension as one of its file formats."""
    suffix = path.suffix.lower()
    return bool(suffix) and suffix in getattr(registry.get_class("modalities", modality), "extensions", ())


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")  # a BOM (Windows editors write one) is not data
    except UnicodeDecodeError:
        raise InputError(str(path), "not UTF-8 text") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror}") from None


def _nonempty(out: list[Example], path: Path) -> list[Example]:
    if not out:
        raise InputError(str(path), "holds no examples")
    return out


@functools.cache
def code_digest(cls: type) -> str:
    """Digest of the source files of the package defining ``cls``: a plugin edited without a
    version bump must not be served stale tokens from the cache."""
    import importlib
    import inspect

    module = importlib.import_module(cls.__module__.split(".")[0])
    files = [Path(module.__file__)] if module.__file__ else []
    if files and files[0].name == "__init__.py":
        files = sorted(files[0].parent.rglob("*.py"))
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    if not files:
        h.update(inspect.getsource(cls).encode())
    return h.hexdigest()


def example_key(ex: Example, modality: Modality, content: str | None = None) -> str:
    """Digest of everything the tokens of ``ex`` depend on: the input (``content``: its
    :func:`content_digest`, computed when not given), the modality's name, module, version,
    config and source code."""
    h = hashlib.sha256()
    # mypy checks a class object against Hashable with its instances' __hash__ (an unbound method
    # to it), so functools.cache's Hashable argument refuses every class: a gap in mypy, not here
    code = code_digest(type(modality))  # type: ignore[arg-type]
    h.update(
        json.dumps(
            [ex.modality, type(modality).__module__, getattr(modality, "version", None), modality.config(), code],
            sort_keys=True,
            default=str,
        ).encode()
    )
    h.update((content or content_digest(ex)).encode())
    return h.hexdigest()


def examples_identity(examples: Sequence[Example], contents: Sequence[str] | None = None) -> str:
    """Digest of what a data set *is*: every example's input (a file's bytes, or the text), modality,
    target and pinned split, in order. Unlike the token cache key it leaves out the plugins' code,
    so a checkpoint's recorded split still applies after a tokenizer is edited."""
    h = hashlib.sha256()
    contents = contents or [content_digest(ex) for ex in examples]
    for ex, content in zip(examples, contents):
        h.update(json.dumps([ex.modality, ex.target, ex.split, content], ensure_ascii=False).encode())
    return h.hexdigest()[:24]


def content_digest(ex: Example) -> str:
    """sha256 of an example's input (see :func:`input_digest`)."""
    return input_digest(ex.input, ex.is_file)


def input_digest(source: str, is_file: bool) -> str:
    """sha256 of an input: the file's bytes, or the text's UTF-8 (a command-line argument's
    undecodable bytes, which Python holds as surrogates, hashed as the bytes they came from)."""
    data = Path(source).read_bytes() if is_file else source.encode("utf-8", "surrogateescape")
    return hashlib.sha256(data).hexdigest()


def cache_dir() -> Path:
    env = os.environ.get("V22SDK_CACHE")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("v22sdk")) / "tokens"


def tokenize_examples(
    examples: Sequence[Example],
    registry=None,
    *,
    cache: bool = True,
    progress=None,
    contents: Sequence[str] | None = None,
) -> tuple[list[TokenBatch], str]:
    """Token batches of every example (cached) and the data set's digest. ``contents``: the
    examples' :func:`content_digest` when the caller has them (each input is read once)."""
    from ...plugins import get_registry

    registry = registry or get_registry()
    modalities: dict[str, Any] = {}
    keys = []
    contents = contents or [content_digest(ex) for ex in examples]
    for ex, content in zip(examples, contents):
        if ex.modality not in modalities:
            modalities[ex.modality] = registry.modality(ex.modality)
        keys.append(example_key(ex, modalities[ex.modality], content))
    digest = hashlib.sha256("".join(keys).encode()).hexdigest()[:24]
    file = cache_dir() / f"{digest}.npz"
    if cache and file.exists():
        try:
            batches = load_batches(file)
            if len(batches) == len(examples):
                return batches, digest
        except InputError:
            pass  # a damaged cache entry is rebuilt, never trusted
    batches = []
    for i, ex in enumerate(examples):
        m = modalities[ex.modality]
        try:
            batches.append(m.tokenize_file(ex.input) if ex.is_file else m.tokenize(ex.input))
        except InputError as exc:
            raise InputError(
                exc.source if ex.is_file else f"example {i + 1} ({ex.input[:30]!r})", exc.problem
            ) from None
        if progress:
            progress(i + 1, len(examples))
    if cache:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_suffix(".tmp")
        save_batches(tmp, batches)
        os.replace(tmp, file)
    return batches, digest


def make_split(
    examples: Sequence[Example], seed: int, val_frac: float = 0.1, test_frac: float = 0.1
) -> dict[str, list[int]]:
    """Deterministic split: pinned examples keep their split, the rest are permuted with ``seed``."""
    split: dict[str, list[int]] = {s: [] for s in SPLITS}
    free = []
    for i, ex in enumerate(examples):
        (split[ex.split].append(i) if ex.split else free.append(i))
    order = [free[i] for i in np.random.default_rng(seed).permutation(len(free))]
    n = len(order)
    n_test = int(round(n * test_frac)) if n >= 3 else 0
    n_val = int(round(n * val_frac)) if n >= 3 else 0
    split["test"] += order[:n_test]
    split["val"] += order[n_test : n_test + n_val]
    split["train"] += order[n_test + n_val :]
    return {k: sorted(v) for k, v in split.items()}


@dataclass
class AuxTargets:
    """Per-example auxiliary targets: ``a`` (N,) int (-1 masked), ``c`` (N, 5), ``c_mask`` (N,), ``d`` (N,) int."""

    a: np.ndarray
    c: np.ndarray
    c_mask: np.ndarray
    d: np.ndarray


def aux_targets(batches: Sequence[TokenBatch], registry=None) -> AuxTargets:
    from ...plugins import get_registry

    registry = registry or get_registry()
    n = len(batches)
    a = np.full(n, -1, dtype=np.int64)
    c = np.zeros((n, C_TARGET_DIM), dtype=np.float32)
    c_mask = np.zeros(n, dtype=np.float32)
    d = np.full(n, -1, dtype=np.int64)
    lang = np.arange(ZONES["language"].start, ZONES["language"].stop)
    plan_cache: dict[str, tuple] = {}
    for i, b in enumerate(batches):
        if b.modality not in plan_cache:
            schema = registry.get_class("modalities", b.modality).schema
            rules = [
                (np.array([s.index for s in schema if rx.search(s.name)], dtype=np.int64), cls) for rx, cls in _A_RULES
            ]
            tone = np.array([s.index for s in schema if _TONE.search(s.name)][:C_TARGET_DIM], dtype=np.int64)
            rel = np.array([s.index for s in schema if _REL.search(s.name)][:11], dtype=np.int64)
            plan_cache[b.modality] = (rules, tone, rel)
        rules, tone, rel = plan_cache[b.modality]
        active = np.abs(b.attr) > 0  # (N_tok, 384)
        if active[:, lang].any():
            a[i] = 6
            for idx, cls in rules:
                if idx.size and (b.attr[:, idx] > 0).any():
                    a[i] = cls
                    break
        elif active.any():
            zone_counts = [active[:, ZONES[z].start : ZONES[z].stop].sum() for z in ("vision", "audio")]
            a[i] = 14 + int(np.argmax(zone_counts))
        if tone.size:
            c[i, : tone.size] = b.attr[:, tone].mean(0)
            c_mask[i] = 1.0
        if rel.size:
            s = b.attr[:, rel].sum(0)
            if (s > 0).any():
                d[i] = int(np.argmax(s))
    return AuxTargets(a, c, c_mask, d)


@dataclass
class Dataset:
    """A tokenized data set with its targets, split and digest."""

    examples: list[Example]
    batches: list[TokenBatch]
    digest: str
    aux: AuxTargets
    attr_sets: list[frozenset[str]] = field(default_factory=list)
    #: :func:`examples_identity` (for tokenized shards: their manifest's digest); ``digest`` is the
    #: token cache key, which also changes when a plugin's code does
    identity: str = ""
    #: every example's :func:`content_digest`, in order (each input read once, when it was loaded)
    contents: list[str] = field(default_factory=list)

    @property
    def modalities(self) -> list[str]:
        return [ex.modality for ex in self.examples]


def load_dataset(
    source,
    registry=None,
    *,
    sample: int | None = None,
    seed: int = 0,
    cache: bool = True,
    progress=None,
    modality: str | None = None,
) -> Dataset:
    """Read, (optionally) sample N examples with ``seed`` before anything else, tokenize.

    ``modality``: see :func:`read_examples` (not used for already-tokenized shards, which name theirs).
    """
    from ...plugins import get_registry

    registry = registry or get_registry()
    if (Path(source) / "manifest.json").is_file():  # already tokenized: `v22sdk tokenize --backend ray` shards
        examples, batches, digest = read_sharded(source)
        if sample is not None and sample < len(examples):
            keep = np.sort(np.random.default_rng(seed).choice(len(examples), size=sample, replace=False))
            examples, batches = [examples[i] for i in keep], [batches[i] for i in keep]
            digest = hashlib.sha256(f"{digest}:{keep.tolist()}".encode()).hexdigest()[:24]
        identity = digest
        contents = [content_digest(ex) for ex in examples]  # shard items name their source: no file read
    else:
        examples = read_examples(source, registry, modality=modality)
        if sample is not None and sample < len(examples):
            keep = np.sort(np.random.default_rng(seed).choice(len(examples), size=sample, replace=False))
            examples = [examples[i] for i in keep]
        contents = [content_digest(ex) for ex in examples]
        batches, digest = tokenize_examples(examples, registry, cache=cache, progress=progress, contents=contents)
        identity = examples_identity(examples, contents)
    from ..canonical import engine_attr_set

    sets = [engine_attr_set(b, registry) for b in batches]
    return Dataset(examples, batches, digest, aux_targets(batches, registry), sets, identity, contents)


def read_sharded(folder: str | os.PathLike[str]) -> tuple[list[Example], list[TokenBatch], str]:
    """Examples, token batches and digest of a folder written by ``v22sdk tokenize --backend ray``.

    The shards are read as they are (no re-tokenization); every item needs the ``target`` its
    input manifest gave it.
    """
    from ...scale.shards import load_shards

    batches, items = load_shards(folder)
    untargeted = [it["source"] for it in items if not str(it.get("target") or "").strip()]
    if untargeted:
        raise InputError(
            str(folder),
            f"{len(untargeted)} tokenized input(s) have no target (first: "
            f"{untargeted[0]}); tokenize a JSONL manifest with targets to train on it",
        )
    examples = [Example(it["source"], it["modality"], it["target"], False, it.get("split"), it["idx"]) for it in items]
    manifest = (Path(folder) / "manifest.json").read_bytes()
    return examples, batches, hashlib.sha256(manifest).hexdigest()[:24]


def to_tensors(batches: Sequence[TokenBatch], max_len: int, registry=None):
    """Padded ``tokens`` (N, L, 640) float32 and ``mask`` (N, L) bool (L ≤ max_len; longer inputs
    truncated), as the engine reads them: storage slots held at their ceiling
    (:func:`v22sdk.engine.canonical.engine_attr`; ``registry``: the default one when ``None``)."""
    import torch

    from ..canonical import engine_attr

    if registry is None:
        from ...plugins import get_registry

        registry = get_registry()
    ceilings: dict = {}
    length = min(max_len, max(len(b) for b in batches))
    tokens = np.zeros((len(batches), length, 640), dtype=np.float32)
    mask = np.zeros((len(batches), length), dtype=bool)
    for i, b in enumerate(batches):
        n = min(len(b), length)
        tokens[i, :n, :256] = b.emb[:n]
        tokens[i, :n, 256:] = engine_attr(b, registry, _cache=ceilings)[:n]
        mask[i, :n] = True
    return torch.from_numpy(tokens), torch.from_numpy(mask)
