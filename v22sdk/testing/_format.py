"""How the kit writes values, inputs, tracebacks and reproductions into its failure messages.

* :func:`number` prints a value with the shortest digits that identify it in its own precision,
  so a value just outside a bound never reads as the bound (``1.0000001``, never ``1``).
* :func:`describe` summarises an input (arrays by dtype, shape, range and edge values).
* :func:`reproduction` turns a falsifying input into lines of Python that replay it: the input
  inline when it is small, else saved to an ``.npz`` file (:func:`save_example`,
  :func:`load_example`) so that a failure becomes a regression test.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from ..modality import Sample

#: Arrays up to this many elements (and texts up to this many characters) are printed inline.
INLINE_ELEMENTS = 64
INLINE_CHARS = 400


def number(value: Any) -> str:
    """``value`` with the fewest digits that tell it apart from every other value of its type."""
    if isinstance(value, (np.floating, float)):
        scalar = value if isinstance(value, np.floating) else np.float64(value)
        if not np.isfinite(scalar):
            return str(float(scalar))
        magnitude = abs(float(scalar))
        if magnitude != 0 and (magnitude >= 1e16 or magnitude < 1e-5):
            return np.format_float_scientific(scalar, unique=True, trim="-")
        return np.format_float_positional(scalar, unique=True, trim="-")
    if isinstance(value, np.generic):
        return str(value.item())
    return str(value)


def describe(value: Any, limit: int = 300) -> str:
    """A short, readable description of an example (arrays by dtype, shape, range and edges)."""
    if isinstance(value, Sample):
        return f"Sample(data={describe(value.data, limit)}, units={_units(value.units)}, source={value.source!r})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe(v, limit) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, np.ndarray):
        head = f"array(dtype={value.dtype}, shape={value.shape}"
        if not value.flags.c_contiguous:
            head += ", " + ("Fortran order" if value.flags.f_contiguous else "strided view")
        if value.dtype.byteorder not in ("=", "|"):
            head += ", non-native byte order"
        if value.size and value.dtype.kind in "biuf":
            with np.errstate(all="ignore"):
                finite = value[np.isfinite(value)] if value.dtype.kind == "f" else value
                if finite.size:
                    head += f", min={number(finite.min())}, max={number(finite.max())}"
                if value.dtype.kind == "f" and finite.size < value.size:
                    head += f", {value.size - finite.size} non-finite"
        body = np.array2string(value.ravel(), threshold=8, edgeitems=3, precision=6)
        return f"{head}, values={body})"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _units(units: Any) -> str:
    try:
        return "{" + ", ".join(f"{k!r}: {number(v)}" for k, v in dict(units).items()) + "}"
    except (TypeError, ValueError):
        return repr(units)


def author_traceback(exc: BaseException, limit: int = 12) -> str:
    """The traceback of an exception the plugin raised, without the kit's own frames."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if "/v22sdk/testing/" not in f.filename.replace(os.sep, "/")
        and "/hypothesis/" not in f.filename.replace(os.sep, "/")
    ]
    lines = traceback.format_list(frames[-limit:])
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


# -- reproductions ------------------------------------------------------------------------------
def _inline_data(data: Any) -> str | None:
    """A Python literal that rebuilds ``data`` exactly, or None when it is too large or exotic."""
    if isinstance(data, str):
        return repr(data) if len(data) <= INLINE_CHARS else None
    if isinstance(data, np.ndarray) and data.dtype.kind in "biuf" and data.size <= INLINE_ELEMENTS:
        values = data.tolist()  # exact: float32 -> float64 -> repr round-trips
        order = ", order='F'" if data.ndim > 1 and data.flags.f_contiguous and not data.flags.c_contiguous else ""
        return f"np.array({values!r}, dtype={data.dtype.str!r}{order})"
    if isinstance(data, (int, float, bool, type(None), bytes)):
        return repr(data)
    return None


def _class_path(modality: Any) -> tuple[str, str]:
    cls = type(modality)
    return cls.__module__, cls.__qualname__


def _config_literal(modality: Any) -> str:
    try:
        return repr(modality.config())
    except Exception:
        return "{}"


def failures_dir(chosen: str | None) -> Path:
    """Where large falsifying inputs are saved: ``chosen``, else a folder in the system's temp dir."""
    return Path(chosen) if chosen else Path(tempfile.gettempdir()) / "v22sdk-kit-failures"


def save_example(sample: Sample, path: str | os.PathLike[str], **meta: Any) -> Path:
    """Write a falsifying input to ``path`` (``.npz``; no pickles) so it can be replayed later."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = sample.data
    arrays: dict[str, np.ndarray] = {}
    header = {
        "format": "v22sdk.kit-example",
        "version": 1,
        "units": {k: float(v) for k, v in sample.units.items()},
        "source": sample.source,
        **meta,
    }
    if isinstance(data, np.ndarray) and data.dtype.kind in "biufc":
        arrays["data"] = data
        header["kind"] = "array"
        header["dtype"] = data.dtype.str  # np.save keeps the byte order; recorded for the reader
        header["fortran"] = bool(data.ndim > 1 and data.flags.f_contiguous and not data.flags.c_contiguous)
    elif isinstance(data, str):
        arrays["data"] = np.frombuffer(data.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        header["kind"] = "text"
    else:
        header["kind"] = "json"
        header["json"] = data
    arrays["header"] = np.frombuffer(json.dumps(header, default=repr).encode(), dtype=np.uint8)
    tmp = path.with_name(path.name + ".tmp.npz")
    # numpy's stub: a str-keyed ** may hold "allow_pickle" (a bool); an explicit allow_pickle is no
    # fix, numpy < 2.1 (our numpy>=1.24 allows it) would save it as an array named so
    np.savez(tmp, **arrays)  # type: ignore[arg-type]
    os.replace(tmp, path)
    return path


def load_example(path: str | os.PathLike[str]) -> Sample:
    """The input saved by a failing check (see the failure's ``saved to`` line), as a Sample."""
    with np.load(path, allow_pickle=False) as npz:
        header = json.loads(npz["header"].tobytes().decode())
        if header.get("format") != "v22sdk.kit-example":
            raise ValueError(f"{path}: not a v22sdk kit example file")
        if header["kind"] == "array":
            data = npz["data"]
            if header.get("fortran"):
                data = np.asfortranarray(data)
        elif header["kind"] == "text":
            data = npz["data"].astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
        else:
            data = header.get("json")
    return Sample(data, dict(header.get("units", {})), header.get("source"))


def reproduction(
    example: Any, modality: Any, *, check: str, settings_dir: str | None, label: str | None = None
) -> tuple[str, str | None]:
    """Lines of Python that replay a falsifying input (a Sample, or several of them), and the file
    the first large one was saved to (or None)."""
    module, qualname = _class_path(modality)
    importable = "<locals>" not in qualname and module != "__main__"
    lines = [
        "import numpy as np",
        "from v22sdk import Sample",
        f"from {module} import {qualname.split('.')[0]}" if importable else f"# {module}.{qualname}",
        f"modality = {qualname}.from_config({_config_literal(modality)})",
    ]
    samples = (
        [example]
        if isinstance(example, Sample)
        else list(example)
        if isinstance(example, (list, tuple)) and all(isinstance(s, Sample) for s in example)
        else None
    )
    if not samples:
        return "\n".join(lines[2:] + [f"# falsifying example: {describe(example)}"]), None
    saved: str | None = None
    names = []
    for i, sample in enumerate(samples):
        name = "sample" if len(samples) == 1 else f"sample{i}"
        names.append(name)
        literal = _inline_data(sample.data)
        if literal is not None:
            lines.append(f"{name} = Sample({literal}, {dict(sample.units)!r}, {sample.source!r})")
            continue
        digest = hashlib.sha256(
            repr((check, getattr(modality, "name", "?"), _config_literal(modality), i)).encode() + _digest(sample.data)
        ).hexdigest()[:12]
        target = failures_dir(settings_dir) / f"{getattr(modality, 'name', 'modality')}-{check}-{digest}.npz"
        try:
            save_example(
                sample,
                target,
                check=check,
                modality=getattr(modality, "name", None),
                label=label,
                modality_class=f"{module}:{qualname}",
                config=_safe_config(modality),
            )
        except (OSError, TypeError, ValueError) as exc:
            lines.append(f"# {name}: the input could not be saved ({type(exc).__name__}: {exc})")
            continue
        saved = saved or str(target)
        if "from v22sdk.testing import load_example" not in lines:
            lines.insert(2, "from v22sdk.testing import load_example")
        lines.append(f"{name} = load_example({str(target)!r})")
    if check == "check_files" and len(samples) == 1:
        lines += [
            "modality.save(sample, 'input.bin')   # then load it under another name:",
            "modality.load('input.bin'), modality.tokenize_file('input.bin')",
        ]
    elif len(samples) == 1:
        lines.append(f"modality.tokenize(sample)   # the check: v22sdk.testing.checks.{check}")
    else:
        lines.append(f"modality.tokenize_batch([{', '.join(names)}])   # the check: v22sdk.testing.checks.{check}")
    return "\n".join(lines), saved


def _safe_config(modality: Any) -> Any:
    try:
        return json.loads(json.dumps(modality.config(), default=repr))
    except Exception:
        return None


def _digest(data: Any) -> bytes:
    if isinstance(data, np.ndarray):
        return str(data.dtype.str).encode() + repr(data.shape).encode() + np.ascontiguousarray(data).tobytes()
    return repr(data).encode("utf-8", "surrogatepass")
