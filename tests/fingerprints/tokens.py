"""Fingerprints of the built-in tokenizers' output: SHA-256 of every token bit, per input.

The speed work of issue 21 (packaged projections, numpy in place of scipy, our own dictionary
segmenter, preallocated buffers) must not move a single bit of any token: the default checkpoint
was trained on these tokens. ``python tests/fingerprints/tokens.py --write`` records the
fingerprints; test_token_fingerprints.py checks them. They were first recorded at 2c8811f, before
that work, and re-recorded from main's own code at 6de40f6 (audio and vision tokenizers 0.2.0, one
BLAS thread: ``OPENBLAS_NUM_THREADS=1``) when main was merged; the merged branch, with the speed
work so far, gave the same 194 digests. A deliberate, documented change of a tokenizer rewrites
the file in the same commit.

The digests are those of OpenBLAS's Haswell kernels (``OPENBLAS_CORETYPE=Haswell``), which every
x86-64 CPU with AVX2 runs: OpenBLAS picks its matrix kernels by CPU, and on an AVX-512 machine its
SkylakeX kernels sum a few of the audio tokenizer's products in another order (two of the 194
inputs then differ in the last bits). Tokens are bit-reproducible for one BLAS kernel; the test
pins the kernel so that it checks the code, not the machine it runs on.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "v22sdk" / "engine" / "data" / "demo"
FILE = Path(__file__).with_name("tokens.json")

MIXED = (
    "因为下雨，所以我们没有去公园。We stayed at home because it rained. 他很聪明，但是很懒。"
    "我吃了饭。今天是2024年3月5日，气温21.5度。「你好」，他说。第一名是三百二十个人里的一个！"
    "高高兴兴地回家了。The quick brown fox jumps over the lazy dog's 3rd kennel. 〇一二三 "
    "㐀㐁䶵 豈更 𠀀𠀁 中华人民共和国成立于1949年。这是一个测试：结巴分词、词性标注、句子边界。"
)


def reference_kernel_env() -> dict[str, str]:
    """One BLAS thread, and on x86-64 with AVX2 the Haswell kernels the digests were recorded with
    (OpenBLAS reads OPENBLAS_CORETYPE when it loads, hence a fresh process)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""
    if platform.machine() in ("x86_64", "AMD64") and " avx2" in flags:
        env["OPENBLAS_CORETYPE"] = "Haswell"
    return env


def _digest(batch) -> str:
    h = hashlib.sha256()
    for a in (batch.emb, batch.attr):
        h.update(np.ascontiguousarray(a).tobytes())
    for key in sorted(batch.offsets):
        h.update(key.encode())
        h.update(np.ascontiguousarray(batch.offsets[key]).tobytes())
    return h.hexdigest()


def _texts() -> dict[str, str]:
    out = {
        f"demo{i}": line
        for i, line in enumerate((DEMO / "text.tsv").read_text("utf-8").replace("\t", "\n").splitlines())
        if line
    }
    out["mixed"] = MIXED
    rng = np.random.default_rng(21)
    common = np.array([ord(c) for c in MIXED if "\u4e00" <= c <= "\u9fff"])
    for k in range(4):  # random Han strings: common characters, some rare and compatibility ones
        cps = rng.choice(common, 400)
        rare = rng.integers(0, cps.size, 40)
        cps[rare] = rng.choice([0x3007, 0x3400, 0x4DB5, 0x9FD6, 0x9FEA, 0xF900, 0x20000, 0x4E00, 0x9FA5], 40)
        out[f"random{k}"] = "".join(map(chr, cps))
    out["long"] = MIXED * 40
    return out


def _sounds() -> dict[str, tuple[np.ndarray, float]]:
    rng = np.random.default_rng(22)
    t16 = np.arange(16_000 * 7) / 16_000
    t44 = np.arange(44_100 * 5) / 44_100
    t22 = np.arange(22_050 * 3) / 22_050
    return {
        "chirp16k": (0.4 * np.sin(2 * np.pi * (200 + 300 * t16) * t16) + 0.01 * rng.standard_normal(t16.size), 16_000),
        "vowelish44k": (0.3 * sum(np.sin(2 * np.pi * 140 * k * t44) / k for k in range(1, 12)), 44_100),
        "noise22k_stereo": (np.stack([rng.standard_normal(t22.size), rng.standard_normal(t22.size)], 1) * 0.1, 22_050),
        "clicks8k": (np.repeat(np.eye(1, 800)[0], 30) * 0.8, 8_000),
        "int16_48k": ((rng.standard_normal(48_000 * 2) * 3000).astype(np.int16), 48_000),
    }


def _images() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(23)
    yy, xx = np.mgrid[0:300, 0:400]
    return {
        "noise_rgb_512": rng.integers(0, 256, (512, 512, 3), dtype=np.uint8),
        "gradient_u16": ((xx * 160 + yy * 10) % 65535).astype(np.uint16),
        "disc_rgba_f": np.dstack([((xx - 200) ** 2 + (yy - 150) ** 2 < 80**2).astype(np.float32)] * 4),
    }


def compute() -> dict[str, str]:
    from v22sdk import get_registry

    reg = get_registry()
    text, vision, audio = reg.modality("text"), reg.modality("vision"), reg.modality("audio")
    grid = reg.modality("vision", grid=3)
    fp: dict[str, str] = {}
    for name, s in _texts().items():
        fp[f"text/{name}"] = _digest(text.tokenize(s))
    for path in sorted((DEMO / "images").iterdir()):
        fp[f"vision/{path.name}"] = _digest(vision.tokenize_file(path))
    for name, img in _images().items():
        fp[f"vision/{name}"] = _digest(vision.tokenize(img))
        fp[f"vision-grid3/{name}"] = _digest(grid.tokenize(img))
    for path in sorted((DEMO / "audio").iterdir()):
        fp[f"audio/{path.name}"] = _digest(audio.tokenize_file(path))
    for name, (x, rate) in _sounds().items():
        fp[f"audio/{name}"] = _digest(audio.tokenize(x, sample_rate=rate))
    return fp


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        FILE.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
        print(f"wrote {FILE}")
    elif sys.argv[1:] == ["--print"]:
        print(json.dumps(compute(), sort_keys=True))
    else:
        sys.exit(
            "usage: OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1 python tests/fingerprints/tokens.py --write|--print"
        )
