"""Audio tokenizer speed: real-time factor on one core, and librosa computing the equivalent features
on the same clips, side by side.

    .venv/bin/python benchmarks/bench_audio.py [--seconds 60] [--short 3.8] [--repeat 9] [--out FILE]

One core: BLAS/OpenMP/numba thread counts are set to 1 before numpy is imported, and scipy.fft
runs with its default single worker. Times are CPU seconds of this process (time.process_time,
robust to other jobs on a shared machine) and wall seconds. Each of ``--repeat`` rounds times every
clip once, ours and librosa alternating (the order swapped every other round), so that a slow
spell of the machine falls on every clip; the median and the best round are reported with the
range of the per-round ratios, and the ratio of the medians is compared with the targets of issue 21 (≥ 2× librosa on the long clips, ≥ 1.5× on the
short ones). librosa is warmed up on a short clip first so that numba's JIT compilation is not
counted. librosa loads scipy.signal, so in this process our resampler uses scipy's C loop (the same
bits as its numpy loop, which a fresh process without scipy.signal uses). The figures go to
``results/benchmarks/bench_audio.json`` (``--out``).

The librosa "equivalent" pipeline computes what our tokenizer computes, with librosa's functions
at the same sizes (16 kHz, n_fft 1024, hop 320): polyphase resampling, STFT, centroid, bandwidth,
roll-off 85/95 %, flatness, ZCR, RMS, spectral contrast, chroma, onset strength, onset detection,
tempo, YIN f0 (librosa.yin), and LPC formants on every second frame (librosa.lpc + np.roots).
pYIN (librosa.pyin) is timed separately because it is far slower than either.
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

        text = (
            "The quick brown fox jumps over the lazy dog. Seven slow ships sailed home at dusk. "
            "Audio tokens carry pitch, formants, loudness and rhythm. "
        ) * 4
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "s.wav")
            subprocess.run([exe, "-v", "en", "-w", path, text], check=True, capture_output=True)
            x, r = sf.read(path, dtype="float64")
        reps = int(np.ceil(seconds * r / x.size))
        out["speech_22k"] = (np.tile(x, reps)[: int(seconds * r)], r)
    return out


def timed(fn) -> tuple[float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c0, time.perf_counter() - w0


def best(fn, repeat: int) -> tuple[float, float]:
    runs = [timed(fn) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


FEATURES = (
    "polyphase resampling to 16 kHz, STFT (n_fft 1024, hop 320), spectral centroid, bandwidth, "
    "roll-off 85 % and 95 %, flatness, zero-crossing rate, RMS, spectral contrast, chroma, onset "
    "strength, onset detection, tempo, YIN f0 (50-2000 Hz), LPC formants (order 10, 8 kHz)"
)
TARGETS = {"long": 2.0, "short": 1.5}


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
        librosa.feature.chroma_stft(S=S**2, sr=sr, n_fft=n_fft, hop_length=hop),
    ]
    env = librosa.onset.onset_strength(S=librosa.amplitude_to_db(S), sr=sr, hop_length=hop)
    feats.append(librosa.onset.onset_detect(onset_envelope=env, sr=sr, hop_length=hop))
    feats.append(librosa.feature.tempo(onset_envelope=env, sr=sr, hop_length=hop))
    f0 = librosa.yin(y, fmin=50, fmax=2000, sr=sr, frame_length=n_fft, hop_length=hop)
    frames = librosa.util.frame(
        librosa.resample(y, orig_sr=sr, target_sr=8_000, res_type="polyphase"), frame_length=240, hop_length=320, axis=0
    )[::1]
    a = librosa.lpc(frames * np.hamming(240), order=10, axis=-1)
    feats.append([np.roots(row) for row in a])
    if with_pyin:
        feats.append(librosa.pyin(y, fmin=50, fmax=2000, sr=sr, frame_length=n_fft, hop_length=hop))
    return f0, feats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="length of the long clips")
    ap.add_argument("--short", type=float, default=3.8, help="length of the short clips")
    ap.add_argument("--repeat", type=int, default=9, help="rounds over every clip (ours and librosa alternate)")
    ap.add_argument("--pyin-seconds", type=float, default=10.0, help="clip length for the pYIN timing")
    ap.add_argument(
        "--out",
        "--json",
        default=str(Path(__file__).resolve().parents[1] / "results" / "benchmarks" / "bench_audio.json"),
    )
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at

    import statistics

    import librosa

    long_clips = clips(args.seconds)
    short_clips = {k: (x[: int(args.short * r)], r) for k, (x, r) in long_clips.items()}
    warm = np.random.default_rng(1).standard_normal(16_000 * 3) * 0.1
    librosa_equivalent(warm, 16_000, with_pyin=True)  # numba JIT happens here, not timed
    ours(warm, 16_000)
    load0 = os.getloadavg()
    print(
        f"audio tokenizer vs librosa {librosa.__version__}, one core, {args.repeat} interleaved rounds; "
        f"clips of {args.seconds:g} s and {args.short:g} s; load {load0[0]:.1f}"
    )
    print(f"features both compute: {FEATURES}")
    print(
        f"{'clip':16s} {'tokens':>6s} {'ours cpu s':>10s} {'x realtime':>10s} {'librosa cpu s':>13s} "
        f"{'speed-up':>8s} {'best-round':>10s} {'rounds':>9s} {'target':>6s}"
    )
    rows, data = [], {"clips": {}, "features": FEATURES, "targets": TARGETS}
    groups = [("long", long_clips), ("short", short_clips)]
    cases = [(length, name, x, rate) for length, group in groups for name, (x, rate) in group.items()]
    n_tokens = {(length, name): len(ours(x, rate)) for length, name, x, rate in cases}
    # Rounds over every clip: in each round, every clip once, ours then librosa (the order swapped
    # every other round), so a slow spell of the machine falls on every clip, not on one.
    times: dict[tuple[str, str], tuple[list, list]] = {(length, name): ([], []) for length, name, _, _ in cases}
    for r in range(args.repeat):
        for length, name, x, rate in cases:
            o, lb = times[(length, name)]
            pair = [(o, lambda: ours(x, rate)), (lb, lambda: librosa_equivalent(x, rate))]
            for out, fn in pair if r % 2 == 0 else pair[::-1]:
                out.append(timed(fn))
    for length, group in groups:
        tot_o, tot_l = 0.0, 0.0
        for name, (x, rate) in group.items():
            seconds = x.size / rate
            n = n_tokens[(length, name)]
            o, lb = times[(length, name)]
            co = [c for c, _ in o]
            cl = [c for c, _ in lb]
            mo, ml = statistics.median(co), statistics.median(cl)
            ratio, ratio_best = ml / mo, min(cl) / min(co)
            per_round = [b / a for a, b in zip(co, cl)]
            tot_o += mo
            tot_l += ml
            key = f"{name} {seconds:g} s"
            data["clips"][key] = {
                "tokens": n,
                "seconds": seconds,
                "ours_cpu_s": co,
                "librosa_cpu_s": cl,
                "ours_wall_s": [w for _, w in o],
                "librosa_wall_s": [w for _, w in lb],
                "round_ratios": per_round,
            }
            ok = ratio >= TARGETS[length]
            print(
                f"{key:16s} {n:6d} {mo:10.4f} {seconds / mo:10.0f} {ml:13.4f} {ratio:8.2f} {ratio_best:10.2f} "
                f"{min(per_round):5.2f}-{max(per_round):4.2f} {'yes' if ok else 'NO':>6s}"
            )
            rows.append(
                [
                    key,
                    str(n),
                    f"{mo * 1e3:.1f}",
                    f"{min(co) * 1e3:.1f}–{max(co) * 1e3:.1f}",
                    f"{seconds / mo:.0f}×",
                    f"{ml * 1e3:.1f}",
                    f"{ratio:.2f}×",
                    f"{min(per_round):.2f}–{max(per_round):.2f}",
                    f"≥ {TARGETS[length]}×",
                    "yes" if ok else "no",
                ]
            )
        data[f"{length}_ratio_of_summed_medians"] = tot_l / tot_o
    x, rate = long_clips["music_44k"]
    x = x[: int(args.pyin_seconds * rate)]
    c_py, _ = best(
        lambda: librosa.pyin(
            librosa.resample(x, orig_sr=rate, target_sr=16_000, res_type="polyphase"),
            fmin=50,
            fmax=2000,
            sr=16_000,
            frame_length=1024,
            hop_length=320,
        ),
        1,
    )
    c_o, _ = best(lambda: ours(x, rate), args.repeat)
    print(
        f"pYIN alone on {args.pyin_seconds:g} s: {c_py:.3f} cpu s ({args.pyin_seconds / c_py:.1f}x realtime); "
        f"our full tokenization of the same: {c_o:.3f} s ({c_py / c_o:.0f}x faster)"
    )
    load1 = os.getloadavg()
    data.update(
        {
            "pyin_cpu_s": c_py,
            "ours_same_clip_cpu_s": c_o,
            "pyin_seconds": args.pyin_seconds,
            "loadavg_start": list(load0),
            "loadavg_end": list(load1),
            "rounds": args.repeat,
        }
    )
    print(f"load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end")
    if args.no_write:
        return
    from v22sdk.evidence import write_result

    write_result(
        args.out,
        data,
        name="bench_audio",
        criterion={
            "targets": TARGETS,
            "statistic": "ratio of the median CPU times over interleaved rounds, librosa / ours, per clip; "
            "each round times every clip once (ours and librosa alternating), and the range of the "
            "per-round ratios is reported beside it",
            "features": FEATURES,
        },
        tables={
            "librosa": {
                "columns": [
                    "clip",
                    "tokens",
                    "ours: CPU median (ms)",
                    "ours: min–max (ms)",
                    "ours: × real time",
                    "librosa: CPU median (ms)",
                    "librosa / ours",
                    "per-round ratio, range",
                    "target",
                    "met",
                ],
                "align": "lrrrrrrrll",
                "rows": rows,
            }
        },
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
