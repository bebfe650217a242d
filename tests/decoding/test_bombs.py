"""Decoding is bounded by memory, not by pixel count: a table of generated bombs and near-limit
files of every format each plugin reads, each tokenized in a forked process whose peak memory is
measured (``ru_maxrss``, see ``peak.py``).

Every case must either decode within the decode budget, or be refused with one line naming the
file, in under a second of CPU time. The bombs (small valid files declaring 0.4-26 GB of
pixels or samples) must be refused; the near-limit files (whose estimate is just under the
budget) must decode, and their measured peak must stay under the budget: that is what proves
each plugin's estimate is an upper bound. The budget is set to 160 MiB here
(``V22SDK_DECODE_BUDGET_MB``) so that near-limit files stay small; the default is 512 MiB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import bombs
import numpy as np
import pytest

BUDGET_MB = 160
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _write(folder: Path, name: str, data: bytes) -> Path:
    p = folder / name
    p.write_bytes(data)
    return p


def _flac_noise(path: Path, seconds: float, rate: int, channels: int) -> None:
    import soundfile as sf

    x = np.random.default_rng(0).standard_normal((int(seconds * rate), channels)) * 0.1
    sf.write(path, x, rate, format="FLAC", subtype="PCM_16")


def _imu_csv(path: Path, rows: int) -> None:
    lines = [",".join(f"{v:.5f}" for v in r) + "\n" for r in np.random.default_rng(1).standard_normal((64, 6))]
    with open(path, "w") as f:
        f.write("# sample_rate=100\nax,ay,az,gx,gy,gz\n")
        f.write("".join(lines) * (rows // 64))


def _wav16(path: Path, frames: int, rate: int = 16_000) -> None:
    import wave

    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((np.random.default_rng(2).standard_normal(frames) * 3000).astype("<i2").tobytes())


def _ogg_ident(rate: int | None = None, channels: int | None = None) -> bytes:
    """A short OGG Vorbis whose identification header is patched (absurd rate or channels)."""
    import io
    import struct

    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, np.zeros(4800), 48_000, format="OGG", subtype="VORBIS")
    data = bytearray(buf.getvalue())
    at = data.find(b"\x01vorbis")
    if channels is not None:
        data[at + 11] = channels
    if rate is not None:
        data[at + 12 : at + 16] = struct.pack("<I", rate)
    nseg = data[26]
    length = 27 + nseg + sum(data[27 : 27 + nseg])
    data[22:26] = bytes(4)
    data[22:26] = struct.pack("<I", bombs._ogg_crc(bytes(data[:length])))
    return bytes(data)


# (case id, modality, builder(folder) -> path, expected: "refused" | "decoded")
CASES = [
    # -- vision: PNG of every colour type and depth, TIFF, WebP, JPEG, BMP ------------------------
    ("png8_grey_40000", "vision", lambda d: _write(d, "a.png", bombs.png(40000, 40000, 8, 0)), "refused"),
    ("png8_rgb", "vision", lambda d: _write(d, "a.png", bombs.png(12000, 12000, 8, 2)), "refused"),
    ("png8_rgba", "vision", lambda d: _write(d, "a.png", bombs.png(10000, 10000, 8, 6)), "refused"),
    ("png8_grey_alpha", "vision", lambda d: _write(d, "a.png", bombs.png(10000, 10000, 8, 4)), "refused"),
    ("png8_palette", "vision", lambda d: _write(d, "a.png", bombs.png(12000, 12000, 8, 3)), "refused"),
    ("png16_grey", "vision", lambda d: _write(d, "a.png", bombs.png(12000, 12000, 16, 0)), "refused"),
    ("png16_rgb", "vision", lambda d: _write(d, "a.png", bombs.png(8000, 8000, 16, 2)), "refused"),
    ("png16_rgba", "vision", lambda d: _write(d, "a.png", bombs.png(8000, 8000, 16, 6)), "refused"),
    ("tiff8_rgb", "vision", lambda d: _write(d, "a.tif", bombs.tiff(10000, 10000, 8, 3)), "refused"),
    ("tiff16_grey", "vision", lambda d: _write(d, "a.tif", bombs.tiff(12000, 12000, 16, 1)), "refused"),
    ("webp_lossless_16383", "vision", lambda d: _write(d, "a.webp", bombs.webp_lossless(16383, 16383)), "refused"),
    ("jpeg_progressive", "vision", lambda d: _write(d, "a.jpg", bombs.jpeg_with_size(20000, 20000, True)), "refused"),
    ("bmp_rle_30000", "vision", lambda d: _write(d, "a.bmp", bombs.bmp_rle(30000, 30000)), "refused"),
    ("near_png16_rgb", "vision", lambda d: _write(d, "a.png", bombs.png(2500, 2500, 16, 2)), "decoded"),
    ("near_png8_rgba", "vision", lambda d: _write(d, "a.png", bombs.png(3000, 3000, 8, 6)), "decoded"),
    ("near_tiff8_rgb", "vision", lambda d: _write(d, "a.tif", bombs.tiff(2400, 2400, 8, 3)), "decoded"),
    ("near_webp", "vision", lambda d: _write(d, "a.webp", bombs.webp_lossless(3000, 3000)), "decoded"),
    ("near_bmp_rle", "vision", lambda d: _write(d, "a.bmp", bombs.bmp_rle(3500, 3500)), "decoded"),
    ("jpeg_cut_scan_30000", "vision", lambda d: _write(d, "a.jpg", bombs.jpeg_with_size(30000, 30000)), "refused"),
    (
        "jpeg_baseline_30000_reduced",
        "vision",
        lambda d: _write(d, "a.jpg", bombs.jpeg_constant(30000, 30000)),
        "decoded",
    ),
    # -- audio: WAV, FLAC, OGG with absurd headers, a real silence bomb, near-limit clips ------------
    ("flac_declares_2e35_samples", "audio", lambda d: _write(d, "a.flac", bombs.flac_claiming(1 << 35)), "refused"),
    ("wav_sparse_1h_48k_stereo", "audio", lambda d: (bombs.wav_sparse(d / "a.wav", 3600), d / "a.wav")[1], "refused"),
    ("wav_1000_channels", "audio", lambda d: _write(d, "a.wav", bombs.wav_header(channels=1000)), "refused"),
    ("wav_rate_4ghz", "audio", lambda d: _write(d, "a.wav", bombs.wav_header(rate=4_000_000_000)), "refused"),
    ("ogg_rate_4ghz", "audio", lambda d: _write(d, "a.ogg", _ogg_ident(rate=4_000_000_000)), "refused"),
    ("ogg_255_channels", "audio", lambda d: _write(d, "a.ogg", _ogg_ident(channels=255)), "refused"),
    ("flac_silence_3min", "audio", lambda d: (bombs.flac_silence(d / "a.flac", 180), d / "a.flac")[1], "refused"),
    ("near_flac_16k_mono", "audio", lambda d: (_flac_noise(d / "a.flac", 25, 16_000, 1), d / "a.flac")[1], "decoded"),
    ("near_flac_48k_stereo", "audio", lambda d: (_flac_noise(d / "a.flac", 8, 48_000, 2), d / "a.flac")[1], "decoded"),
    # -- depth (contrib): PNG headers, .npy / .npz declared shapes, a zip bomb ------------------------
    ("depth_png8_bomb", "depth", lambda d: _write(d, "a.png", bombs.png(30000, 30000, 8, 0)), "refused"),
    ("depth_png16_20000", "depth", lambda d: _write(d, "a.png", bombs.png(20000, 20000, 16, 0)), "refused"),
    (
        "depth_npy_header_only",
        "depth",
        lambda d: _write(d, "a.npy", bombs.npy_header_only((100000, 100000))),
        "refused",
    ),
    (
        "depth_npz_zip_bomb",
        "depth",
        lambda d: _write(d, "a.npz", bombs.npz_zeros("depth", (6000, 6000), depth_scale=np.array(0.001))),
        "refused",
    ),
    ("near_depth_png16", "depth", lambda d: _write(d, "a.png", bombs.png(1500, 1500, 16, 0)), "decoded"),
    (
        "near_depth_npz",
        "depth",
        lambda d: _write(d, "a.npz", bombs.npz_zeros("depth", (1300, 1300), depth_scale=np.array(0.001))),
        "decoded",
    ),
    # -- imu (contrib) and hello (contrib), text ----------------------------------------------------
    ("imu_csv_1m_rows", "imu", lambda d: (_imu_csv(d / "a.csv", 1_000_000), d / "a.csv")[1], "refused"),
    ("near_imu_csv", "imu", lambda d: (_imu_csv(d / "a.csv", 100_000), d / "a.csv")[1], "decoded"),
    (
        "hello_wav_sparse_1h",
        "hello",
        lambda d: (bombs.wav_sparse(d / "a.wav", 3600, 48_000, 1), d / "a.wav")[1],
        "refused",
    ),
    ("near_hello_wav", "hello", lambda d: (_wav16(d / "a.wav", 1_000_000), d / "a.wav")[1], "decoded"),
    ("text_sparse_2gb", "text", lambda d: (open(d / "a.txt", "wb").truncate(2 << 30), d / "a.txt")[1], "refused"),
]
FAST = [c for c in CASES if c[3] == "refused" and c[0] != "jpeg_cut_scan_30000"]  # that one decodes to see
WARM = {
    "vision": lambda d: _write(d, "w.png", bombs.png(8, 8, 8, 2)),
    "audio": lambda d: (_flac_noise(d / "w.flac", 0.5, 16_000, 1), d / "w.flac")[1],
    "depth": lambda d: _write(d, "w.png", bombs.png(8, 8, 16, 0)),
    "imu": lambda d: (_imu_csv(d / "w.csv", 300), d / "w.csv")[1],
    "hello": lambda d: (_wav16(d / "w.wav", 1000), d / "w.wav")[1],
    "text": lambda d: _write(d, "w.txt", b"warm"),
}


def _measure(tmp: Path, cases) -> dict[str, dict]:
    plan = []
    for name in sorted({c[1] for c in cases}):
        (tmp / f"warm-{name}").mkdir()
    for case_id, modality, build, _ in cases:
        d = tmp / case_id
        d.mkdir()
        plan.append(
            {
                "id": case_id,
                "modality": modality,
                "path": str(build(d)),
                "warm": str(WARM[modality](tmp / f"warm-{modality}")),
            }
        )
    (tmp / "cases.json").write_text(json.dumps(plan))
    env = {
        **os.environ,
        "V22SDK_DECODE_BUDGET_MB": str(BUDGET_MB),
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    out = subprocess.run(
        [sys.executable, str(HERE / "peak.py"), str(tmp / "cases.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return {p["id"]: {**r, "path": p["path"]} for p, r in zip(plan, json.loads(out.stdout))}


@pytest.fixture(scope="module")
def refusals(tmp_path_factory):
    return _measure(tmp_path_factory.mktemp("bombs"), FAST)


@pytest.fixture(scope="module")
def everything(tmp_path_factory):
    return _measure(tmp_path_factory.mktemp("all"), CASES)


def _check(result: dict, expected: str) -> None:
    assert result["kind"] != "crash", result
    if result["error"] is not None:  # refused: one line, naming the file, fast
        assert "\n" not in result["error"] and result["path"] in result["error"], result
        assert result["cpu_s"] < 1.0, result
    else:  # decoded: within the budget
        assert result["added_mib"] <= BUDGET_MB, result
    assert (result["error"] is not None) == (expected == "refused"), result


@pytest.mark.parametrize("case_id", [c[0] for c in FAST])
def test_a_bomb_is_refused_from_its_header_in_under_a_second(refusals, case_id):
    result = refusals[case_id]
    _check(result, "refused")
    assert result["added_mib"] < 32, result  # nothing of the declared size was allocated


@pytest.mark.slow
@pytest.mark.parametrize("case_id, expected", [(c[0], c[3]) for c in CASES])
def test_every_file_decodes_within_the_budget_or_is_refused(everything, case_id, expected):
    _check(everything[case_id], expected)


def test_the_refusal_says_how_to_allow_it(refusals):
    msg = refusals["png16_rgb"]["error"]
    assert "a 8000x8000 16-bit RGB PNG needs about" in msg and "V22SDK_DECODE_BUDGET_MB=" in msg
    assert "decode budget of 160 MiB" in msg
