"""Packaged constant arrays (v22sdk.fixed): loaded read-only, refused when the file's hash differs."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import pytest

from v22sdk.errors import PluginError
from v22sdk.fixed import load_fixed_array, write_fixed_array


@pytest.fixture
def package(tmp_path, monkeypatch):
    pkg = tmp_path / "fixedpkg"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield pkg
    sys.modules.pop("fixedpkg", None)


def test_roundtrip_is_bit_exact_and_read_only(package):
    a = np.random.default_rng(1).standard_normal((7, 5))
    digest = write_fixed_array(str(package / "data" / "p.npy"), a)
    assert digest == hashlib.sha256((package / "data" / "p.npy").read_bytes()).hexdigest()
    b = load_fixed_array("fixedpkg", "data/p.npy", digest)
    assert b.dtype == a.dtype and np.array_equal(a, b)
    with pytest.raises(ValueError):
        b[0, 0] = 1.0


def test_a_changed_file_is_refused_naming_it(package):
    a = np.arange(12.0).reshape(3, 4)
    digest = write_fixed_array(str(package / "data" / "p.npy"), a)
    raw = bytearray((package / "data" / "p.npy").read_bytes())
    raw[-1] ^= 1  # one bit of the last value
    (package / "data" / "p.npy").write_bytes(bytes(raw))
    with pytest.raises(PluginError, match=r"fixedpkg/data/p.npy: SHA-256 .* reinstall"):
        load_fixed_array("fixedpkg", "data/p.npy", digest)


def test_a_missing_file_is_a_plugin_error(package):
    with pytest.raises(PluginError, match="fixedpkg/data/none.npy"):
        load_fixed_array("fixedpkg", "data/none.npy", "0" * 64)


def test_the_module_command_prints_the_hash(tmp_path):
    """``python -m v22sdk.fixed MODULE:FUNCTION OUT`` writes the derivation and prints its SHA-256,
    which for the vision projection is the hash the plugin ships (derived on OpenBLAS's reference
    kernels: the QR's last bits follow the CPU's kernels, see tests/fingerprints/tokens.py)."""
    from fingerprints.tokens import reference_kernel_env
    from v22sdk_vision.embed import PROJECTION_SHA256

    out = tmp_path / "q.npy"
    proc = subprocess.run(
        [sys.executable, "-m", "v22sdk.fixed", "v22sdk_vision.embed:derive_projection", str(out)],
        env=reference_kernel_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == PROJECTION_SHA256 == hashlib.sha256(out.read_bytes()).hexdigest()
