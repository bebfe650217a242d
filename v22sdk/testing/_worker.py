"""The fresh process of ``check_fresh_process``: ``python -m v22sdk.testing._worker JOB RESULT``.

It imports the modality's class, rebuilds it from its config, tokenizes the job's inputs in order
(its very first calls) and writes the encodings, or the name of the error an input raised. It
imports numpy and the plugin only (no hypothesis, no kit), and applies the parent's thread limits so
that both processes compute under the same conditions. Exit code 3: the modality cannot be built.

Before its first call it seeds NumPy's global generator and Python's ``random`` with GLOBAL_SEED,
which nothing else seeds them with (hypothesis seeds them with 0 inside each example): tokens that
depend on global random state (a projection drawn from ``np.random`` on first use, consistent within
a process) then differ from the parent's, whoever seeded the parent's generator and when.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ..modality import Encoding, Sample

#: The seed of NumPy's global generator and Python's ``random`` in the fresh process, set after the
#: plugin is imported and built and before its first call: a value no one else seeds them with.
GLOBAL_SEED = 2_873_071_097


def write_inputs(
    path: Path, samples: list[Sample], *, class_path: str, config: Any, thread_limits: dict[str, int]
) -> None:
    arrays: dict[str, np.ndarray] = {}
    items = []
    for i, sample in enumerate(samples):
        data = sample.data
        item: dict[str, Any] = {"units": {k: float(v) for k, v in sample.units.items()}, "source": sample.source}
        if isinstance(data, np.ndarray):
            arrays[f"d{i}"] = data
            item["kind"] = "array"
            item["fortran"] = bool(data.ndim > 1 and data.flags.f_contiguous and not data.flags.c_contiguous)
        elif isinstance(data, str):
            arrays[f"d{i}"] = np.frombuffer(data.encode("utf-32-le", "surrogatepass"), dtype="<u4")
            item["kind"] = "text"
        else:
            item["kind"] = "json"
            item["json"] = data
        items.append(item)
    header = {"class": class_path, "config": config, "threads": thread_limits, "items": items}
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    # numpy's stub: a str-keyed ** may hold "allow_pickle" (a bool); an explicit allow_pickle is no
    # fix, numpy < 2.1 (our numpy>=1.24 allows it) would save it as an array named so
    np.savez(path, **arrays)  # type: ignore[arg-type]


def _read_inputs(path: Path) -> tuple[dict[str, Any], list[Sample]]:
    with np.load(path, allow_pickle=False) as npz:
        header = json.loads(npz["header"].tobytes().decode())
        samples = []
        for i, item in enumerate(header["items"]):
            if item["kind"] == "array":
                data: Any = npz[f"d{i}"]
                if item.get("fortran"):
                    data = np.asfortranarray(data)
            elif item["kind"] == "text":
                data = npz[f"d{i}"].astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
            else:
                data = item.get("json")
            samples.append(Sample(data, item["units"], item["source"]))
    return header, samples


def read_outputs(path: Path) -> list[Encoding | str]:
    """Per input: its Encoding, or ``"ErrorType: message"`` when it raised."""
    with np.load(path, allow_pickle=False) as npz:
        header = json.loads(npz["header"].tobytes().decode())
        out: list[Encoding | str] = []
        for i, item in enumerate(header["items"]):
            if "error" in item:
                out.append(item["error"])
                continue
            offsets = {key: npz[f"o{i}.{key}"] for key in item["offsets"]}
            out.append(Encoding(npz[f"e{i}"], npz[f"a{i}"], offsets))
    return out


def main(argv: list[str]) -> int:
    job, result = Path(argv[0]), Path(argv[1])
    header, samples = _read_inputs(job)
    if header.get("threads"):
        try:
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=header["threads"])
        except ImportError:  # pragma: no cover
            pass
    module_name, qualname = header["class"].split(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        modality = obj.from_config(header["config"])
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
    # global random state other than the parent's: tokens must not depend on it
    random.seed(GLOBAL_SEED)
    np.random.seed(GLOBAL_SEED)
    arrays: dict[str, np.ndarray] = {}
    items: list[dict[str, Any]] = []
    for i, sample in enumerate(samples):
        try:
            units = modality.check_units(sample.units, sample.source or "<input>")
            enc = modality.encode(sample.data, **units)
            arrays[f"e{i}"] = np.asarray(enc.emb)
            arrays[f"a{i}"] = np.asarray(enc.attr)
            offsets = dict(enc.offsets)
            for key, value in offsets.items():
                arrays[f"o{i}.{key}"] = np.asarray(value)
            items.append({"offsets": list(offsets)})
        except Exception as exc:
            items.append({"error": f"{type(exc).__name__}: {exc}"})
    arrays["header"] = np.frombuffer(json.dumps({"items": items}).encode(), dtype=np.uint8)
    tmp = result.with_name(result.name + ".tmp.npz")
    np.savez(tmp, **arrays)  # type: ignore[arg-type]  # numpy's stub, see write_inputs above
    os.replace(tmp, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
