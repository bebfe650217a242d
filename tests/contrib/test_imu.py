"""The IMU plugin on synthetic still / walking / turning recordings with known answers, and CSV I/O."""

from __future__ import annotations

import math

import numpy as np
import pytest
from v22sdk_imu import IMUModality, synthetic
from v22sdk_imu.slots import G

from v22sdk import InputError, UnitsError

M = IMUModality()


def tokens_and_values(signal, sr):
    tokens = M.tokenize(signal, sample_rate=sr)
    return tokens, [M.schema.values(row) for row in tokens.attr]


def test_windows_and_time_offsets():
    tokens, _ = tokens_and_values(*synthetic.still(10.0, 100.0))
    # 1000 samples, 256-sample windows every 128: starts 0, 128, ..., 640 -> 6 windows.
    assert len(tokens) == 6
    expected = [[s / 100, (s + 256) / 100] for s in range(0, 641, 128)]
    assert np.allclose(tokens.offsets["time"], expected, atol=1e-12)
    assert np.allclose(np.linalg.norm(tokens.emb.astype(np.float64), axis=1), 1.0, atol=1e-6)


def test_short_recording_is_one_partial_window():
    tokens, vals = tokens_and_values(*synthetic.still(1.0, 100.0))
    assert len(tokens) == 1 and tokens.offsets["time"].tolist() == [[0.0, 1.0]]
    assert vals[0]["imu.coverage"] == pytest.approx(100 / 256, abs=1e-6)


def test_still_device():
    _, vals = tokens_and_values(*synthetic.still(6.0, 100.0))
    for v in vals:
        assert v["imu.still"] == 1.0
        assert v["imu.step.cadence"] == 0.0 and v["imu.freq.dominant"] == 0.0
        assert v["imu.acc.mean"] == pytest.approx(0.25, abs=1e-3)  # |a| = g -> g / 4g
        assert v["imu.gravity.z"] == pytest.approx(1.0, abs=1e-4)
        assert v["imu.orient.change"] < 0.002


@pytest.mark.parametrize("cadence", [90.0, 110.0, 150.0])
def test_walking_cadence_and_dominant_frequency(cadence):
    _, vals = tokens_and_values(*synthetic.walking(10.0, 100.0, cadence_spm=cadence))
    for v in vals:
        assert v["imu.step.cadence"] * 240 == pytest.approx(cadence, abs=3.0)
        # Dominant frequency of |a| is the step rate, within one FFT bin (1 / 2.56 s).
        assert v["imu.freq.dominant"] * 20 == pytest.approx(cadence / 60, abs=1 / 2.56)
        assert v["imu.still"] == 0.0
        assert v["imu.band.gait"] > 0.9
        assert v["imu.freq.periodicity"] > 0.8


@pytest.mark.parametrize("rate", [45.0, -30.0])
def test_turning_integrates_the_gyro(rate):
    _, vals = tokens_and_values(*synthetic.turning(10.0, 100.0, degrees_per_second=rate))
    expected = math.radians(rate) * 2.56  # rad turned in one 2.56 s window
    for v in vals:
        assert v["imu.orient.yaw"] * math.pi == pytest.approx(expected, rel=0.01)
        assert v["imu.orient.change"] * math.pi == pytest.approx(abs(expected), rel=0.01)
        assert v["imu.still"] == 0.0  # rotating faster than 0.1 rad/s
        assert v["imu.step.cadence"] == 0.0
        assert v["imu.gyro.mean"] == pytest.approx(math.tanh(math.radians(abs(rate)) / math.pi), abs=0.01)


def test_embeddings_separate_the_activities():
    embs = {
        k: M.tokenize(*f(10.0, 100.0)[:1], sample_rate=100.0).emb.astype(np.float64)
        for k, f in synthetic.SIGNALS.items()
    }
    same = embs["walking"][0] @ embs["walking"][1]
    assert same > 0.95  # two windows of one walk
    assert embs["walking"][0] @ embs["still"][0] < same
    assert embs["turning"][0] @ embs["still"][0] < 0.999


def test_deterministic_bytes():
    x, sr = synthetic.walking(5.0, 100.0)
    assert M.tokenize(x, sample_rate=sr) == M.tokenize(x.copy(), sample_rate=sr)


def _write(path, header, rows, comments=()):
    lines = [f"# {c}" for c in comments] + [header] + [",".join(f"{v:.9g}" for v in r) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_csv_with_sample_rate_comment(tmp_path):
    x, sr = synthetic.walking(4.0, 100.0)
    path = _write(tmp_path / "walk.csv", "ax,ay,az,gx,gy,gz", x, ["sample_rate=100"])
    sample = M.load(path)
    assert sample.units == {"sample_rate": 100.0}
    assert np.allclose(sample.data, x, atol=1e-6)
    assert len(M.tokenize_file(path)) == 2


def test_csv_with_time_column_reordered_axes_and_units(tmp_path):
    x, sr = synthetic.turning(3.0, 50.0)
    t_ms = np.arange(len(x)) * 20.0
    table = np.column_stack([t_ms, x[:, 3:] * 180 / np.pi, x[:, :3] / G])  # deg/s and g
    path = _write(
        tmp_path / "turn.csv",
        "time_ms,gyro_x,gyro_y,gyro_z,acc_x,acc_y,acc_z",
        table,
        ["accel_unit=g, gyro_unit=deg/s"],
    )
    sample = M.load(path)
    assert sample.units["sample_rate"] == pytest.approx(50.0)
    assert np.allclose(sample.data, x, atol=1e-6)


@pytest.mark.parametrize(
    "header, comments, rows, error, match",
    [
        ("ax,ay,az,gx,gy", ["sample_rate=100"], [[0] * 5], InputError, "gz"),
        ("ax,ay,az,gx,gy,gz", [], [[0] * 6, [0] * 6], UnitsError, "no sample rate"),
        ("t,ax,ay,az,gx,gy,gz", ["sample_rate=50"], [[0.0] + [0] * 6, [0.01] + [0] * 6], UnitsError, "disagrees"),
        ("t,ax,ay,az,gx,gy,gz", [], [[0.0] + [0] * 6, [0.01] + [0] * 6, [0.05] + [0] * 6], InputError, "uniform"),
        ("ax,ay,az,gx,gy,gz", ["sample_rate=100"], [], InputError, "no samples"),
        ("ax,ay,az,gx,gy,gz", ["sample_rate=100", "gyro_unit=rpm"], [[0] * 6], UnitsError, "gyro_unit"),
    ],
)
def test_bad_csv_files(tmp_path, header, comments, rows, error, match):
    path = _write(tmp_path / "bad.csv", header, rows, comments)
    with pytest.raises(error, match=match):
        M.load(path)


def test_non_numeric_line_is_named(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("# sample_rate=100\nax,ay,az,gx,gy,gz\n0,0,9.8,0,0,0\n0,0,oops,0,0,0\n")
    with pytest.raises(InputError, match="line 4"):
        M.load(path)


def test_bad_arrays_raise_input_errors():
    for bad in (np.zeros((10, 5)), np.zeros((0, 6)), np.zeros(6), np.full((4, 6), np.inf)):
        with pytest.raises(InputError):
            M.tokenize(bad, sample_rate=100.0)
    with pytest.raises(UnitsError):
        M.tokenize(np.zeros((10, 6)), sample_rate=0.5)
