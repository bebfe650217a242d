"""Audio tokenizer speed: real-time factor on one core, and librosa computing the equivalent features
on the same clips, side by side.

    .venv/bin/python benchmarks/bench_audio.py [--seconds 60] [--repeat 3] [--json PATH]

One core: BLAS/OpenMP/numba thread counts are set to 1 before numpy is imported, and scipy.fft
runs with its default single worker. Times are CPU seconds of this process (time.process_time,
robust to other jobs on a shared machine) and wall seconds; the best of ``--repeat`` runs is kept.
librosa is warmed up on a short clip first so that numba's JIT compilation is not counted.

The librosa "equivalent" pipeline computes what our tokenizer computes, with librosa's functions
at the same sizes (16 kHz, n_fft 1024, hop 320): polyphase resampling, STFT, centroid, bandwidth,
roll-off 85/95 %, flatness, ZCR, RMS, spectral contrast, chroma, onset strength, onset detection,
tempo, YIN f0 (librosa.yin), and LPC formants on every second frame (librosa.lpc + np.roots).
pYIN (librosa.pyin) is timed separately because it is far slower than either.
``--json results/benchmarks/bench_audio.json`` also writes the figures there, for docs/benchmarks.md.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402


def clips(seconds: float) -> dict[str, tuple[np.ndarray, int]]:
    """Named test clips (float64 mono, rate): speech (espeak-ng, if installed), music-like, noise."""
    rng = np.random.default_rng(0)
    out = {}
    rate = 44_100
    t = np.arange(int(seconds * rate)) / rate
    notes = 220 * 2 ** (np.array([0, 4, 7, 12, 7, 4]) / 12)
    f = notes[(t * 2).astype(int) % notes.size]
    phase = 2 * np.pi * np.cumsum(f) / rate
    music = sum(np.sin(k * phase) / k for k in range(1, 6)) * (0.5 + 0.5 * np.exp(-8 * ((t * 2) % 1)))
    music[(np.arange(0, seconds, 0.5) * rate).astype(int)] += 0.8
    out["music_44k"] = (0.3 * music / np.abs(music).max(), rate)
    out["noise_16k"] = (rng.standard_normal(int(seconds * 16_000)) * 0.1, 16_000)
    exe = shutil.which("espeak-ng")
    if exe:
        import soundfile as sf

        text = ("The quick brown fox jumps over the lazy dog. Seven slow ships sailed home at dusk. "
                "Audio tokens carry pitch, formants, loudness and rhythm. ") * 4
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "s.wav")
            subprocess.run([exe, "-v", "en", "-w", path, text], check=True, capture_output=True)
            x, r = sf.read(path, dtype="float64")
        reps = int(np.ceil(seconds * r / x.size))
        out["speech_22k"] = (np.tile(x, reps)[: int(seconds * r)], r)
    return out


def best(fn, repeat: int) -> tuple[float, float]:
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return min(cpu), min(wall)


def ours(x: np.ndarray, rate: int):
    from v22sdk_audio import AudioModality

    return AudioModality().tokenize(x, sample_rate=rate)


def librosa_equivalent(x: np.ndarray, rate: int, with_pyin: bool = False):
    import librosa

    sr, n_fft, hop = 16_000, 1024, 320
    y = librosa.resample(x, orig_sr=rate, target_sr=sr, res_type="polyphase") if rate != sr else x
    S = np.abs(librosa.stft(y, n_fft=n_fft, hop_length=hop, window="hann"))
    feats = [
        librosa.feature.spectral_centroid(S=S, sr=sr, n_fft=n_fft),
        librosa.feature.spectral_bandwidth(S=S, sr=sr, n_fft=n_fft),
        librosa.feature.spectral_rolloff(S=S, sr=sr, n_fft=n_fft, roll_percent=0.85),
        librosa.feature.spectral_rolloff(S=S, sr=sr, n_fft=n_fft, roll_percent=0.95),
        librosa.feature.spectral_flatness(S=S),
        librosa.feature.zero_crossing_rate(y, frame_length=n_fft, hop_length=hop),
        librosa.feature.rms(S=S, frame_length=n_fft, hop_length=hop),
        librosa.feature.spectral_contrast(S=S, sr=sr, n_fft=n_fft, hop_length=hop),
        librosa.feature.chroma_stft(S=S ** 2, sr=sr, n_fft=n_fft, hop_length=hop),
    ]
    env = librosa.onset.onset_strength(S=librosa.amplitude_to_db(S), sr=sr, hop_length=hop)
    feats.append(librosa.onset.onset_detect(onset_envelope=env, sr=sr, hop_length=hop))
    feats.append(librosa.feature.tempo(onset_envelope=env, sr=sr, hop_length=hop))
    f0 = librosa.yin(y, fmin=50, fmax=2000, sr=sr, frame_length=n_fft, hop_length=hop)
    frames = librosa.util.frame(librosa.resample(y, orig_sr=sr, target_sr=8_000, res_type="polyphase"),
                                frame_length=240, hop_length=320, axis=0)[::1]
    a = librosa.lpc(frames * np.hamming(240), order=10, axis=-1)
    feats.append([np.roots(row) for row in a])
    if with_pyin:
        feats.append(librosa.pyin(y, fmin=50, fmax=2000, sr=sr, frame_length=n_fft, hop_length=hop))
    return f0, feats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pyin-seconds", type=float, default=10.0, help="clip length for the pYIN timing")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as a result file here")
    args = ap.parse_args()

    import librosa

    data = clips(args.seconds)
    warm = np.random.default_rng(1).standard_normal(16_000 * 3) * 0.1
    librosa_equivalent(warm, 16_000, with_pyin=True)           # numba JIT happens here, not timed
    ours(warm, 16_000)
    print(f"audio tokenizer vs librosa {librosa.__version__}, one core, best of {args.repeat}; "
          f"clips of {args.seconds:g} s")
    print(f"{'clip':12s} {'tokens':>6s} {'ours cpu s':>10s} {'x realtime':>10s} {'librosa cpu s':>13s} "
          f"{'x realtime':>10s} {'speed-up':>8s} {'ours wall':>9s} {'librosa wall':>12s}")
    total = {"ours": 0.0, "lib": 0.0, "sec": 0.0}
    per_clip = {}
    for name, (x, rate) in data.items():
        seconds = x.size / rate
        n = len(ours(x, rate))
        c_ours, w_ours = best(lambda: ours(x, rate), args.repeat)
        c_lib, w_lib = best(lambda: librosa_equivalent(x, rate), args.repeat)
        total["ours"] += c_ours
        total["lib"] += c_lib
        total["sec"] += seconds
        per_clip[name] = {"seconds": seconds, "tokens": n, "ours_cpu_s": c_ours, "librosa_cpu_s": c_lib,
                          "ours_wall_s": w_ours, "librosa_wall_s": w_lib}
        print(f"{name:12s} {n:6d} {c_ours:10.3f} {seconds / c_ours:10.0f} {c_lib:13.3f} {seconds / c_lib:10.0f} "
              f"{c_lib / c_ours:8.2f} {w_ours:9.3f} {w_lib:12.3f}")
    print(f"{'all':12s} {'':6s} {total['ours']:10.3f} {total['sec'] / total['ours']:10.0f} {total['lib']:13.3f} "
          f"{total['sec'] / total['lib']:10.0f} {total['lib'] / total['ours']:8.2f}")
    x, rate = data["music_44k"]
    x = x[: int(args.pyin_seconds * rate)]
    c_py, _ = best(lambda: librosa.pyin(librosa.resample(x, orig_sr=rate, target_sr=16_000, res_type="polyphase"),
                                        fmin=50, fmax=2000, sr=16_000, frame_length=1024, hop_length=320), 1)
    c_o, _ = best(lambda: ours(x, rate), args.repeat)
    print(f"pYIN alone on {args.pyin_seconds:g} s: {c_py:.3f} cpu s ({args.pyin_seconds / c_py:.1f}x realtime); "
          f"our full tokenization of the same: {c_o:.3f} s ({c_py / c_o:.0f}x faster)")
    if args.json:
        from v22sdk.evidence import write_result

        rt, speedup = total["sec"] / total["ours"], total["lib"] / total["ours"]
        write_result(args.json, {"clips": per_clip, "total": total, "pyin": {"seconds": args.pyin_seconds,
                                                                            "pyin_cpu_s": c_py, "ours_cpu_s": c_o},
                                 "librosa": librosa.__version__, "repeat": args.repeat},
                     tables={"summary": {"columns": ["measure", "figure", "target", "met"], "align": "lrrl", "rows": [
                         [f"full tokenization, {len(per_clip)} clips of {args.seconds:g} s ({', '.join(per_clip)}), "
                          f"CPU, best of {args.repeat}", f"{rt:.0f}× real time", "≥ 200×", "yes" if rt >= 200 else "no"],
                         ["the same vs librosa computing the equivalent features (the peer, same clips, same run)",
                          f"{speedup:.2f}× faster", "≥ 2×", "yes" if speedup >= 2 else "no"],
                         [f"librosa pYIN alone on {args.pyin_seconds:g} s of music",
                          f"{c_py / c_o:.0f}× slower than our whole tokenization", "—", "—"]]}})


if __name__ == "__main__":
    main()
