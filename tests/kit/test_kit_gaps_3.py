"""The four classes of gaps the third pre-registered mutation round found, closed as general rules.

* token counts: for each unit, the end of its range where the base gives the most tokens, the base
  tiled to about ``LONG_TOKENS`` tokens at that setting (``check_edge_inputs``, also in a batch);
* constants: constant inputs at several fractions of full scale (0.9, 0.7, 1/3, -0.55, 0.999) in
  every accepted dtype, at the base's shape and a length every small frame size divides;
* files: a file written again with other content (another size; the same size and modification
  time) loads as that content on the same instance, and once deleted raises InputError
  (``check_files``);
* twins: pairs of one shape, dtype, mean and low-resolution summary but other fine detail, which
  a fresh instance and a fresh process tokenize in the other order (``check_fresh_instance``,
  ``check_fresh_process``).

Each rule is shown failing a small broken plugin of this file and the round-3 mutant that survived
it, and passing the reference plugins.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from v22sdk import Sample
from v22sdk.modality import Encoding
from v22sdk.testing import checks
from v22sdk.testing._inputs import LONG_TOKENS, kit_inputs

from .mutants import apply, targets
from .test_kit_gaps import _mutant_class, _run, references

hello = pytest.importorskip("v22sdk_hello.modality", reason="pip install -e contrib/v22sdk-hello")
vision = pytest.importorskip("v22sdk_vision.modality")
HelloModality = hello.HelloModality


# -- class 1: token-count extremes ----------------------------------------------------------------
class FixedTokenBuffer(HelloModality):
    """Writes its tokens into a fixed buffer of 16384 rows: more frames overflow it."""

    name = "hello_token_buffer"

    def encode(self, data, *, sample_rate):
        enc = super().encode(data, sample_rate=sample_rate)
        if len(enc.emb) > 16384:
            raise IndexError(f"index {len(enc.emb) - 1} is out of bounds for axis 0 with size 16384")
        return enc


def test_the_kits_inputs_reach_the_largest_token_counts():
    m = HelloModality(frame_seconds=0.2)
    run = checks.kit_run(m)
    dense = [(ki, out) for ki, out in zip(run.inputs, run.outcomes) if ki.label.startswith("token-dense")]
    assert len(dense) == 1 and dense[0][0].sample.units["sample_rate"] == 100.0  # the minimum: most frames
    assert dense[0][0].family == "long"  # so check_edge_inputs also batches it with a short input
    assert LONG_TOKENS * 0.9 < len(dense[0][1].encoding.emb) < LONG_TOKENS * 1.1
    plain = [
        len(out.encoding.emb) for ki, out in zip(run.inputs, run.outcomes) if ki.label.startswith("long: the base")
    ]
    assert max(plain) < 4096 < len(dense[0][1].encoding.emb)  # the plain long input never got there


def test_check_edge_inputs_finds_a_failure_above_the_usual_token_counts():
    report = _run(FixedTokenBuffer(), "check_edge_inputs")
    assert report.failed == ["check_edge_inputs"], str(report)
    # the first input over 16384 tokens: a token-dense long one, or (since round 4's crossing) a
    # crossed long one at the lowest rate
    reason = report["check_edge_inputs"].reason
    assert "kit input: token-dense long" in reason or "kit input: crossed:" in reason, reason
    assert "out of bounds for axis 0 with size 16384" in reason


def test_the_round_3_survivor_long_emb_chunks_drop_tail_is_caught(tmp_path):
    cls = _mutant_class("hello", "long_emb_chunks_drop_tail", tmp_path)
    report = _run(cls(), "check_shape_dtype", "check_edge_inputs")
    # caught on a token-dense long input or (since round 4's crossing) a crossed long one
    assert not report.ok and ("token-dense long" in str(report) or "crossed:" in str(report)), str(report)


# -- class 2: constants at arbitrary values --------------------------------------------------------
class VarianceByMoments(HelloModality):
    """Adds 0 x a spread computed as mean(x^2) - mean(x)^2, which cancels below 0 (a NaN square
    root) for some constant inputs, never for 0, ±1 or full-scale integers (exact squares)."""

    name = "hello_moments"

    def encode(self, data, *, sample_rate):
        enc = super().encode(data, sample_rate=sample_rate)
        x = np.asarray(data, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            spread = np.sqrt(np.mean(x * x) - np.mean(x) ** 2) if x.size else 0.0
        return Encoding(enc.emb + 0 * spread, enc.attr, enc.offsets)


def test_the_kits_constants_cover_every_dtype_at_several_values():
    base = Sample(np.linspace(-0.5, 0.5, 1000), {"sample_rate": 16_000.0})
    consts = [ki for ki in kit_inputs(HelloModality(), [base]) if "of full scale" in ki.label]
    dtypes = {ki.sample.data.dtype.name for ki in consts}
    assert dtypes == {"int8", "int16", "int32", "int64", "float16", "float32", "float64"}
    assert {ki.sample.data.shape for ki in consts} == {(1000,), (5040,)}
    values = {float(ki.sample.data[0]) for ki in consts if ki.sample.data.dtype == np.float64}
    assert {0.9, 0.7, 1 / 3, -0.55, 0.999} <= values
    assert all(np.all(ki.sample.data == ki.sample.data.flat[0]) for ki in consts)


def _nan_on_new_constants(modality):
    """Labels of the kit's new constant inputs that give a NaN."""
    run = checks.kit_run(modality)
    return [
        ki.label
        for ki, out in zip(run.inputs, run.outcomes)
        if "of full scale" in ki.label
        and out.encoding is not None
        and not (np.isfinite(out.encoding.emb).all() and np.isfinite(out.encoding.attr).all())
    ]


def test_check_finite_finds_a_nan_on_a_constant_at_an_ordinary_value():
    report = _run(VarianceByMoments(), "check_finite", "check_edge_inputs")
    assert "check_finite" in report.failed, str(report)
    assert _nan_on_new_constants(VarianceByMoments())


@pytest.mark.slow  # about 7 s on 2 cores: the default run must stay under 10 minutes in CI
def test_the_round_3_survivor_rms_about_the_mean_is_caught(tmp_path):
    cls = _mutant_class("hello", "rms_about_the_mean", tmp_path)
    for config in ({}, {"frame_seconds": 0.2}):
        report = _run(cls(**config), "check_finite", "check_edge_inputs")
        assert "check_finite" in report.failed, str(report)
        assert _nan_on_new_constants(cls(**config))  # caught by the new constants on their own too


# -- class 3: files written again ----------------------------------------------------------------
_SEEN: dict = {}


class CachedByStat(HelloModality):
    """Caches load() by (path, size, modification time): a file rewritten with content of the same
    size within the clock's resolution still loads the old content."""

    name = "hello_stat_cache"

    def load(self, path):
        if not os.path.isfile(path):
            return super().load(path)
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
        if key not in _SEEN:
            _SEEN[key] = super().load(path)
        return _SEEN[key]


@pytest.mark.slow  # about 11 s on 2 cores: the default run must stay under 10 minutes in CI
def test_check_files_finds_a_cache_keyed_on_path_size_and_time():
    report = _run(CachedByStat(), "check_files")
    assert report.failed == ["check_files"], str(report)
    assert "of the same size and modification time" in report["check_files"].reason


@pytest.mark.slow  # about 10 s on 2 cores: the default run must stay under 10 minutes in CI
def test_the_round_3_survivor_load_cached_by_path_is_caught(tmp_path):
    cls = _mutant_class("hello", "load_cached_by_path", tmp_path)
    report = _run(cls(), "check_files")
    assert report.failed == ["check_files"], str(report)
    assert "written again" in report["check_files"].reason


# -- class 4: caches keyed on a summary of the data ---------------------------------------------
class AttrCacheByMean(vision.VisionModality):
    """Caches its tokens per instance by (shape, dtype, mean): twins share one result."""

    def encode(self, data, **units):
        cache = _INSTANCE_CACHES.setdefault(id(self), {})
        x = np.asarray(data)
        key = (x.shape, x.dtype.str, round(float(x.mean()), 6) if x.size else 0.0)
        if key not in cache:
            cache[key] = super().encode(data, **units)
        return cache[key]


_INSTANCE_CACHES: dict = {}


def test_the_kits_twins_agree_in_shape_mean_and_thumbnail():
    base = Sample(np.random.default_rng(0).random((40, 50, 3)), {})
    inputs = kit_inputs(vision.VisionModality(), [base])
    pairs = [(inputs[ki.twin_of], ki) for ki in inputs if ki.twin_of is not None and "siblings" not in ki.label]
    assert len(pairs) >= 5
    for a, b in pairs:
        x, y = a.sample.data, b.sample.data
        assert x.shape == y.shape and x.dtype == y.dtype and not np.array_equal(x, y)
        assert x.mean() == pytest.approx(y.mean())
    thumbs = [
        (
            a.sample.data.reshape(16, 4, 16, 4, -1).mean(axis=(1, 3)),
            b.sample.data.reshape(16, 4, 16, 4, -1).mean(axis=(1, 3)),
        )
        for a, b in pairs
        if "mirrored" not in a.label
    ]
    assert all(np.allclose(s, t) for s, t in thumbs)


def test_check_fresh_instance_finds_a_cache_keyed_on_the_mean():
    report = _run(AttrCacheByMean(), "check_fresh_instance")
    assert report.failed == ["check_fresh_instance"], str(report)
    assert "tokenized in the other order by a fresh instance" in report["check_fresh_instance"].reason


def test_the_round_3_survivor_attr_cache_keyed_on_thumbnail_is_caught(tmp_path):
    target, mutants = targets()["vision"]
    root = apply(target, next(m for m in mutants if m.name == "attr_cache_keyed_on_thumbnail"), tmp_path)
    script = (
        "import json; from v22sdk.testing import check_modality\n"
        "from v22sdk_vision.modality import VisionModality\n"
        "r = check_modality(VisionModality(), checks=['check_fresh_process'], fresh_process=True)\n"
        "print(json.dumps([r.failed, str(r)]))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *sys.path])}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    failed, text = json.loads(proc.stdout.strip().splitlines()[-1])
    assert failed == ["check_fresh_process"], text
    assert "shape=(64, 64" in text, text  # one of the kit's twin inputs


# -- the references pass the changed checks ------------------------------------------------------
@pytest.mark.slow
@references()
def test_references_pass_the_changed_checks(make):
    report = _run(
        make(),
        "check_edge_inputs",
        "check_finite",
        "check_files",
        "check_fresh_instance",
        "check_fresh_process",
        fresh_process=True,
    )
    assert report.ok, str(report)
