"""Fixed arrays shipped as package data: a tokenizer's constant projections, loaded in microseconds.

A tokenizer's fixed projection (vision's orthogonal 768→256, audio's 512→256) is a constant: the
same bits in every process. Deriving it at first use (a QR decomposition) costs 15–40 ms of CPU
on one BLAS thread and seconds on two contended ones, in every fresh process. Instead the plugin
ships the derived array as an ``.npy`` file inside its package, with the SHA-256 of that file
written in its source; :func:`load_fixed_array` reads it and checks the hash, so a damaged or
substituted file is an error naming the file, never different tokens. The plugin keeps the
derivation as a function (the documented definition of the constant); its tests derive the array
again and check that the shipped bits equal it.

    PROJECTION_SHA256 = "…"

    @functools.cache
    def projection():
        return load_fixed_array(__package__, "data/projection.npy", PROJECTION_SHA256)

``python -m v22sdk.fixed PACKAGE.MODULE:FUNCTION FILE`` writes a derivation's array to FILE and
prints the hash to paste into the source.
"""

from __future__ import annotations

import hashlib
import io
from importlib import resources

import numpy as np

from .errors import PluginError

__all__ = ["load_fixed_array", "write_fixed_array"]


def load_fixed_array(package: str, name: str, sha256: str) -> np.ndarray:
    """The read-only array in ``package``'s data file ``name`` (an ``.npy``), checked against ``sha256``.

    Raises :class:`~v22sdk.errors.PluginError` naming the file when it is missing, unreadable or
    not the file the plugin was released with.
    """
    where = f"{package}/{name}"
    try:
        raw = resources.files(package).joinpath(name).read_bytes()
    except (OSError, ModuleNotFoundError) as exc:
        raise PluginError(f"{where}: the packaged constant cannot be read ({exc}); reinstall the plugin") from None
    digest = hashlib.sha256(raw).hexdigest()
    if digest != sha256:
        raise PluginError(
            f"{where}: SHA-256 {digest[:16]}… is not the released {sha256[:16]}… "
            f"(a damaged or replaced file); reinstall the plugin"
        )
    array = np.load(io.BytesIO(raw), allow_pickle=False)
    array.flags.writeable = False
    return array


def write_fixed_array(path: str, array: np.ndarray) -> str:
    """Write ``array`` as an ``.npy`` file at ``path``; return the file's SHA-256 (hex)."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    raw = buf.getvalue()
    with open(path, "wb") as fh:
        fh.write(raw)
    return hashlib.sha256(raw).hexdigest()


def _main(argv: list[str] | None = None) -> None:
    import argparse
    import importlib

    ap = argparse.ArgumentParser(prog="python -m v22sdk.fixed", description=write_fixed_array.__doc__)
    ap.add_argument("derive", help="MODULE:FUNCTION returning the array (e.g. v22sdk_vision.embed:derive_projection)")
    ap.add_argument("out", help="the .npy file to write")
    args = ap.parse_args(argv)
    module, _, func = args.derive.partition(":")
    array = getattr(importlib.import_module(module), func)()
    print(write_fixed_array(args.out, array))


if __name__ == "__main__":
    _main()
