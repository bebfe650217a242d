#!/usr/bin/env python
"""How closely the audio tokenizer agrees with librosa: the worst cases behind the tolerances of
``tests/audio/test_audio_librosa.py``.

    python scripts/measure_audio_librosa.py --out results/audio/librosa-agreement.json

The test asserts a tolerance; this script measures, on the same signals and with the same
comparisons (it imports them from the test, so that both read one definition), how far inside the
tolerance each quantity lies:

* the STFT magnitude and the frame descriptors (centroid, bandwidth, roll-off 85 %, flatness,
  ZCR, frame RMS) on identical frames: the largest relative difference over the five synthetic
  signals (frames with energy);
* the segment slots against the mean of librosa's frame values, librosa fed the same analysis
  range: the largest absolute difference;
* YIN f0 against ``librosa.pyin`` on frames both call voiced, in cents: per synthetic signal and
  on espeak-ng speech (``-v en -s 150``, two sentences, generated here; skipped without espeak-ng).

Needs librosa (a test-only dependency) and, for the speech row, espeak-ng. Under a minute of CPU.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "audio"))

SPEECH_TEXT = "The quick brown fox jumps over the lazy dog. Seven slow ships sailed home."


def _rel(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = np.maximum(np.abs(b), 1e-300)
    return float(np.max(np.abs(a - b) / scale)) if a.size else 0.0


def frame_descriptors(t) -> dict[str, float]:
    """The largest relative difference of each frame quantity over the synthetic signals."""
    import librosa
    from v22sdk_audio import spectral as sp

    worst: dict[str, float] = {}
    for y in t._signals().values():
        padded, fr, mag, _ = t._frames(y)
        S = np.abs(librosa.stft(padded, n_fft=1024, hop_length=320, window="hann", center=False))
        cent, bw, _, _ = sp.shape_moments(mag)
        ok = mag.sum(axis=1) > 1e-6
        starts = np.arange(fr.shape[0]) * 320
        zc = sp.zero_crossings(padded)
        pairs = {
            "stft": (mag, S.T),
            "centroid": (cent[ok], librosa.feature.spectral_centroid(S=S, sr=t.RATE, n_fft=1024)[0][ok]),
            "bandwidth": (bw[ok], librosa.feature.spectral_bandwidth(S=S, sr=t.RATE, n_fft=1024)[0][ok]),
            "rolloff85": (
                sp.rolloff(mag, 0.85)[0][ok],
                librosa.feature.spectral_rolloff(S=S, sr=t.RATE, n_fft=1024, roll_percent=0.85)[0][ok],
            ),
            "flatness": (
                sp.flatness(mag * mag)[ok],
                librosa.feature.spectral_flatness(S=S, power=2.0, amin=1e-10)[0][ok],
            ),
            "zcr": (
                (zc[starts + 1023] - zc[starts]) / 1024,
                librosa.feature.zero_crossing_rate(padded, frame_length=1024, hop_length=320, center=False)[0][
                    : fr.shape[0]
                ],
            ),
            "rms": (
                sp.frame_rms(fr),
                librosa.feature.rms(y=padded, frame_length=1024, hop_length=320, center=False)[0][: fr.shape[0]],
            ),
        }
        if "stft" in pairs:  # relative to the spectrum's largest bin (single bins near 0 have no relative error)
            a, b = pairs.pop("stft")
            worst["stft"] = max(worst.get("stft", 0.0), float(np.max(np.abs(a - b)) / np.max(np.abs(b))))
        for k, (a, b) in pairs.items():
            worst[k] = max(worst.get(k, 0.0), _rel(a, b))
    return worst


def segment_slots(t) -> float:
    """The largest absolute difference between a segment slot and librosa's frame mean."""
    import librosa
    from v22sdk_audio import AudioModality

    audio = AudioModality()
    schema = audio.schema
    worst = 0.0
    for name in ("harmonic_vibrato", "noise", "mixed"):
        y = t._signals()[name]
        padded, fr, _, n_seg = t._frames(y)
        S = np.abs(librosa.stft(padded, n_fft=1024, hop_length=320, window="hann", center=False))
        S[:2] = 0.0
        S = np.maximum(S - S.max() * 1e-3, 0.0)
        b = audio.tokenize(y, sample_rate=t.RATE)
        pairs = {
            "aud.spec.centroid": librosa.feature.spectral_centroid(S=S, sr=t.RATE, n_fft=1024)[0] / 8000,
            "aud.spec.rolloff85": librosa.feature.spectral_rolloff(S=S, sr=t.RATE, n_fft=1024)[0] / 8000,
            "aud.spec.flatness": librosa.feature.spectral_flatness(S=S, amin=1e-10)[0],
            "aud.zcr.mean": librosa.feature.zero_crossing_rate(
                padded, frame_length=1024, hop_length=320, center=False, threshold=1e-3 * np.abs(padded).max()
            )[0][: fr.shape[0]],
        }
        for slot_name, frame_vals in pairs.items():
            seg = frame_vals.reshape(n_seg, 25).mean(axis=1)
            worst = max(worst, float(np.max(np.abs(t.slot(b, schema, slot_name) - seg))))
    return worst


def pitch_row(t, y, fmax: float) -> dict[str, float]:
    cents, agree, n = t._compare_pitch(y, fmax=fmax)
    return {
        "median_cents": float(np.median(cents)),
        "p95_cents": float(np.percentile(cents, 95)),
        "within_50": float(np.mean(cents <= 50)),
        "voicing_agreement": float(agree),
        "both_voiced": int(n),
    }


def speech(t) -> np.ndarray | None:
    exe = shutil.which("espeak-ng")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "speech.wav"
        subprocess.run(
            [exe, "-v", "en", "-s", "150", "-w", str(path), SPEECH_TEXT], check=True, capture_output=True, timeout=60
        )
        import soundfile as sf

        x, rate = sf.read(path, dtype="float64")
    from scipy.signal import resample_poly

    return resample_poly(x, 160, rate // 100) if rate != t.RATE else x


def _at_least(share: float) -> str:
    return "100 %" if share == 1.0 else f"≥ {100 * share:.1f} %"


def tables(data: dict) -> dict:
    fd = data["frame_descriptors"]
    syn = data["pitch_synthetic"]
    med = [r["median_cents"] for r in syn.values()]
    sp = data.get("pitch_speech")
    rows = [
        [
            "STFT magnitude",
            "tone, vibrato harmonic, glide, noise, harmonic+noise",
            "rtol 1e-9",
            f"{fd['stft']:.1e} (of the largest bin)",
        ],
        [
            "centroid, bandwidth, roll-off 85 %, flatness, ZCR, frame RMS",
            "same",
            "rtol 1e-6",
            ", ".join(f"{fd[k]:.1e}" for k in ("centroid", "bandwidth", "rolloff85", "flatness", "zcr", "rms")),
        ],
        [
            "segment slots (`aud.spec.centroid`, `rolloff85`, `flatness`, `aud.zcr.mean`) vs the mean of librosa's "
            "frame values, librosa fed the same analysis range (bins 0–1 zeroed, the 60 dB gate subtracted)",
            "vibrato harmonic, noise, harmonic+noise",
            "abs 1e-4 (float32 storage)",
            f"{data['segment_slots']:.1e}",
        ],
        [
            "YIN f0 vs `librosa.pyin` f0, frames both voiced",
            "synthetic (tone, 150 Hz vibrato harmonic, 100→400 Hz glide, harmonic+noise)",
            "median ≤ 10 cents, ≥ 90 % within 50 cents, voicing agreement ≥ 85 %",
            f"median {min(med):.1f}–{max(med):.1f} cents, p95 ≤ {max(r['p95_cents'] for r in syn.values()):.1f} cents, "
            f"{_at_least(min(r['within_50'] for r in syn.values()))} within 50 cents, voicing "
            f"{_at_least(min(r['voicing_agreement'] for r in syn.values()))}",
        ],
    ]
    if sp:
        rows.append(
            [
                "same",
                "speech: espeak-ng (`-v en -s 150`, two sentences, 22 050 Hz → 16 kHz), generated at run time",
                "same",
                f"median {sp['median_cents']:.1f} cents, p95 {sp['p95_cents']:.1f} cents, "
                f"{100 * sp['within_50']:.1f} % within 50 cents, voicing agreement "
                f"{100 * sp['voicing_agreement']:.1f} % ({sp['both_voiced']} frames both voiced)",
            ]
        )
    return {
        "agreement": {
            "columns": ["quantity", "signals", "tolerance in the tests", "measured worst case"],
            "align": "llll",
            "rows": rows,
        }
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=None, help="result file (JSON, v22sdk.evidence)")
    args = ap.parse_args(argv)
    from v22sdk.evidence import begin, write_result

    begin()  # the result file names the commit this run starts at
    import librosa
    import test_audio_librosa as t  # the test's signals and comparisons: one definition for both

    data = {
        "librosa": librosa.__version__,
        "frame_descriptors": frame_descriptors(t),
        "segment_slots": segment_slots(t),
        "pitch_synthetic": {
            n: pitch_row(t, t._signals()[n], 1_000.0) for n in ("harmonic_vibrato", "glide", "tone", "mixed")
        },
    }
    y = speech(t)
    data["pitch_speech"] = None if y is None else pitch_row(t, y, 600.0)
    values = {"librosa": data["librosa"]}
    if data["pitch_speech"]:
        values["speech.voicing_agreement"] = f"{100 * data['pitch_speech']['voicing_agreement']:.0f} %"
    for row in tables(data)["agreement"]["rows"]:
        print(" | ".join(row))
    if args.out:
        write_result(args.out, data, tables=tables(data), name="audio-librosa-agreement", values=values)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
