"""The 128 named attribute slots of the audio modality (zone ``audio``, attr 256..383).

Each entry is (name, meaning, scaling). "segment" means the token's 0.5 s segment (its frames
whose centre lies inside the real audio); "voiced frames" are non-silent frames whose voicing
probability is >= 0.00156 (pYIN's emission rule, see pitch.py); "clip-level" values are computed over the whole input and copied into every token.
Every value is 0 when its feature is undefined (e.g. pitch of an unvoiced segment), which the
``aud.pitch.voiced``/``aud.flag.*`` slots make explicit.
"""

from __future__ import annotations

from v22sdk import AttributeSchema

_F0 = "log2(f0 / 316.2 Hz) / 2.66, clipped to [-1, 1] (50 Hz -> -1, 2 kHz -> +1); 0 if unvoiced"
_FORM = "log2(F / 1000 Hz) / 2.5, clipped to [-1, 1] (177 Hz -> -1, 5.66 kHz -> +1); 0 if none"
_DB = "(dBFS + 50) / 50, clipped to [-1, 1] (-100 dBFS floor -> -1, 0 dBFS -> +1)"
_HZ = "Hz / 8000 (Nyquist of the 16 kHz analysis rate), in [0, 1]"
_FRAC = "fraction in [0, 1]"
_FLAG = "0 or 1"
_PC_NAMES = ("c", "c_sharp", "d", "d_sharp", "e", "f", "f_sharp", "g", "g_sharp", "a", "a_sharp", "b")
_PC_LABEL = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
#: Band edges (Hz) of the 16 band-energy slots.
BAND_EDGES = (0, 50, 100, 150, 200, 300, 400, 600, 800, 1000, 1500, 2000, 3000, 4000, 5000, 6500, 8000)
#: Octave-like bands of the spectral-contrast slots.
CONTRAST_EDGES = (0, 200, 400, 800, 1600, 3200, 8000)


def _specs() -> list[tuple[str, str, str]]:
    s: list[tuple[str, str, str]] = [
        ("aud.pitch.f0", "median YIN f0 over the segment's voiced frames", _F0),
        ("aud.pitch.f0_min", "lowest f0 among the voiced frames", _F0),
        ("aud.pitch.f0_max", "highest f0 among the voiced frames", _F0),
        ("aud.pitch.f0_std", "std of f0 over voiced frames, in semitones", "tanh(semitones / 4)"),
        (
            "aud.pitch.f0_slope",
            "least-squares f0 trend over voiced frames, octaves per second",
            "tanh(octaves per second / 2)",
        ),
        (
            "aud.pitch.jitter",
            "mean |change of f0| between consecutive voiced frames, semitones",
            "tanh(semitones / 2), 0 if < 2 voiced frames",
        ),
        ("aud.pitch.voicing_prob", "mean pYIN-prior voicing probability of the segment's frames", _FRAC),
        (
            "aud.pitch.voiced_fraction",
            "fraction of frames that are voiced (probability >= 0.00156, pYIN emission rule)",
            _FRAC,
        ),
        ("aud.pitch.voiced", "segment is voiced: voiced fraction >= 0.5", _FLAG),
        ("aud.pitch.clarity", "mean 1 - CMNDF dip over voiced frames (periodicity strength)", _FRAC),
        (
            "aud.pitch.octave",
            "scientific octave of the median f0 (A4 = 440 Hz is octave 4)",
            "(octave - 4) / 4, clipped to [-1, 1]; 0 if unvoiced",
        ),
        (
            "aud.pitch.cents",
            "deviation of the median f0 from the nearest equal-tempered note (A4 = 440 Hz)",
            "cents / 50, in [-1, 1]; 0 if unvoiced",
        ),
    ]
    s += [
        (f"aud.pitch_class.{n}", f"fraction of voiced frames whose f0 is nearest to pitch class {lab}", _FRAC)
        for n, lab in zip(_PC_NAMES, _PC_LABEL)
    ]
    s += [
        ("aud.formant.f1", "median first formant (LPC order 18) over voiced frames", _FORM),
        ("aud.formant.f2", "median second formant over voiced frames", _FORM),
        ("aud.formant.f3", "median third formant over voiced frames", _FORM),
        ("aud.formant.b1", "median bandwidth of F1, Hz", "tanh(Hz / 300); 0 if none"),
        ("aud.formant.b2", "median bandwidth of F2, Hz", "tanh(Hz / 300); 0 if none"),
        ("aud.formant.b3", "median bandwidth of F3, Hz", "tanh(Hz / 300); 0 if none"),
        ("aud.formant.f1_std", "std of log2 F1 over voiced frames, octaves", "tanh(octaves / 0.5)"),
        ("aud.formant.f2_std", "std of log2 F2 over voiced frames, octaves", "tanh(octaves / 0.5)"),
        (
            "aud.formant.f2_f1_ratio",
            "log2(F2 / F1) of the medians (vowel frontness)",
            "log2 ratio / 4, clipped; 0 if none",
        ),
        ("aud.formant.detected", "fraction of voiced frames with three formants found", _FRAC),
        ("aud.loud.rms_dbfs", "RMS level of the segment's samples, dBFS (full-scale sine = -3 dBFS)", _DB),
        ("aud.loud.peak", "peak absolute amplitude (full scale = 1)", "min(peak, 1), in [0, 1]"),
        ("aud.loud.crest", "crest factor peak/RMS, dB (sine 3 dB, noise ~12 dB, clicks > 20 dB)", "tanh(dB / 20)"),
        ("aud.loud.frame_db_max", "loudest 64 ms frame RMS, dBFS", _DB),
        ("aud.loud.frame_db_min", "quietest 64 ms frame RMS, dBFS", _DB),
        ("aud.loud.frame_db_std", "std of frame RMS in dB", "tanh(dB / 10)"),
        ("aud.loud.dynamic_range", "frame_db_max - frame_db_min, dB", "dB / 60, clipped to [0, 1]"),
        ("aud.loud.shimmer", "mean |change of frame RMS| between consecutive frames, dB", "tanh(dB / 3)"),
        ("aud.loud.low_energy", "fraction of frames whose RMS is below the segment's mean frame RMS", _FRAC),
        ("aud.loud.dc_offset", "mean sample value (full scale = 1)", "tanh(10 * mean)"),
        ("aud.zcr.mean", "mean zero-crossing rate per sample over the frames", _FRAC),
        ("aud.zcr.std", "std of the frame zero-crossing rate", "min(4 * std, 1)"),
        ("aud.zcr.max", "largest frame zero-crossing rate", _FRAC),
        ("aud.spec.centroid", "mean spectral centroid (magnitude-weighted mean frequency)", _HZ),
        ("aud.spec.centroid_std", "std of the frame centroid, Hz", "min(Hz / 4000, 1)"),
        ("aud.spec.centroid_slope", "least-squares trend of the centroid, Hz per second", "tanh(Hz/s / 8000)"),
        ("aud.spec.bandwidth", "mean spectral bandwidth (2nd-order spread around the centroid)", "min(Hz / 8000, 1)"),
        ("aud.spec.rolloff85", "mean frequency below which 85 % of the magnitude lies", _HZ),
        ("aud.spec.rolloff95", "mean frequency below which 95 % of the magnitude lies", _HZ),
        ("aud.spec.flatness", "mean spectral flatness (geometric / arithmetic mean of power)", _FRAC),
        ("aud.spec.flatness_std", "std of frame flatness", "min(2 * std, 1)"),
        ("aud.spec.flux", "mean spectral flux of the sum-normalised magnitude", "tanh(flux / 0.1)"),
        ("aud.spec.flux_std", "std of frame flux", "tanh(std / 0.1)"),
        (
            "aud.spec.slope",
            "mean least-squares slope of the dB power spectrum (floored 80 dB below each frame's peak), dB per kHz",
            "tanh(dB/kHz / 10)",
        ),
        ("aud.spec.entropy", "mean normalised spectral entropy of the power spectrum", _FRAC),
        ("aud.spec.skewness", "mean spectral skewness (frequency distribution)", "tanh(skewness / 5)"),
        ("aud.spec.kurtosis", "mean spectral excess kurtosis", "tanh(kurtosis / 20)"),
        ("aud.spec.crest", "spectral crest of the segment power spectrum: max / mean, dB", "tanh(dB / 30)"),
        ("aud.spec.peak_freq", "frequency of the strongest bin of the segment power spectrum", _HZ),
        ("aud.spec.brightness", "fraction of segment power above 1 500 Hz", _FRAC),
    ]
    for lo, hi in zip(BAND_EDGES[:-1], BAND_EDGES[1:]):
        s.append(
            (
                f"aud.band.hz_{lo}_{hi}",
                f"share of segment power in {lo}-{hi} Hz",
                "1 + log10(share) / 6, clipped to [0, 1] (share 1 -> 1, 1e-6 or less -> 0)",
            )
        )
    for i, (lo, hi) in enumerate(zip(CONTRAST_EDGES[:-1], CONTRAST_EDGES[1:])):
        s.append(
            (
                f"aud.contrast.b{i + 1}",
                f"spectral contrast in {lo}-{hi} Hz: 80th - 20th percentile of the segment's dB power spectrum",
                "tanh(dB / 40)",
            )
        )
    s += [
        (f"aud.chroma.{n}", f"share of 50 Hz-5 kHz segment power in bins nearest to pitch class {lab}", _FRAC)
        for n, lab in zip(_PC_NAMES, _PC_LABEL)
    ]
    s += [
        ("aud.chroma.peakiness", "largest chroma share (1 = one pitch class, 1/12 = flat)", _FRAC),
        (
            "aud.harm.hnr",
            "harmonics-to-noise ratio from the YIN dip d: 10 log10((1 - d) / d), dB, voiced frames",
            "tanh(dB / 20); 0 if unvoiced",
        ),
        (
            "aud.harm.harmonic_ratio",
            "share of spectral power within +-1 bin (15.6 Hz) of the harmonics of f0, "
            "voiced frames (40 ms hop); near 1 for any f0 below ~100 Hz, where harmonics are < 7 bins apart",
            _FRAC,
        ),
        ("aud.harm.periodicity", "mean 1 - CMNDF dip over all non-silent frames", _FRAC),
        (
            "aud.harm.odd_even",
            "log10 of power at odd / even harmonics 2..10 of f0, voiced frames (40 ms hop)",
            "tanh(log10 ratio); 0 if unvoiced or the harmonics hold < 0.01 % of the power",
        ),
        ("aud.onset.strength_mean", "mean onset strength (positive dB flux, dB per bin)", "tanh(dB / 2)"),
        ("aud.onset.strength_max", "largest onset strength in the segment", "tanh(dB / 10)"),
        ("aud.onset.strength_std", "std of onset strength", "tanh(dB / 5)"),
        ("aud.onset.rate", "onsets per second in the segment", "min(rate / 20, 1)"),
        ("aud.onset.present", "at least one onset in the segment", _FLAG),
        ("aud.mod.am_depth", "amplitude-modulation depth: std / mean of frame RMS", "tanh(ratio)"),
        (
            "aud.mod.am_rate",
            "dominant amplitude-modulation frequency of the frame RMS (2-24 Hz, 2 Hz steps)",
            "Hz / 24, in [0, 1]; 0 if no modulation",
        ),
        (
            "aud.rhythm.tempo",
            "clip-level tempo from the onset autocorrelation, BPM (copied into every token)",
            "(BPM - 140) / 100, in [-1, 1]; 0 if not estimated",
        ),
        ("aud.rhythm.tempo_confidence", "clip-level autocorrelation at the tempo lag / at lag 0", _FRAC),
        ("aud.rhythm.estimated", "clip-level: a tempo was estimated (>= 2 s of audio and >= 2 onsets)", _FLAG),
        (
            "aud.rhythm.regularity",
            "clip-level 1 - coefficient of variation of inter-onset intervals (>= 3 onsets)",
            "clipped to [0, 1]; 0 if < 3 onsets",
        ),
        ("aud.rhythm.onset_rate", "clip-level onsets per second", "min(rate / 20, 1)"),
        ("aud.rhythm.ioi_mean", "clip-level mean inter-onset interval, s", "tanh(s); 0 if < 2 onsets"),
        ("aud.clip.duration", "clip-level duration, s", "tanh(s / 60)"),
        ("aud.clip.position", "centre of this segment / clip duration", "in [0, 1]"),
        ("aud.clip.rms_dbfs", "clip-level RMS level, dBFS", _DB),
        ("aud.clip.relative_level", "segment RMS dB - clip RMS dB", "dB / 30, clipped to [-1, 1]"),
        (
            "aud.clip.source_rate",
            "clip-level sample rate of the input before resampling",
            "log2(rate / 16 kHz) / 4, clipped to [-1, 1]",
        ),
        (
            "aud.clip.channels",
            "clip-level number of input channels (mixed to mono)",
            "(channels - 1) / 7, clipped to [0, 1]",
        ),
        ("aud.flag.silence", "segment is silent: RMS < -60 dBFS", _FLAG),
        (
            "aud.flag.clipping",
            "segment is clipped: >= 0.1 % of its source samples are flat tops at >= 99 % of full scale",
            _FLAG,
        ),
        (
            "aud.flag.clip_fraction",
            "fraction of the segment's source samples that are clipped",
            "min(100 * fraction, 1)",
        ),
        ("aud.flag.over_range", "float input exceeds full scale (|x| > 1) in this segment", _FLAG),
        ("aud.flag.padded", "segment is shorter than 0.5 s (the clip's tail, zero-padded)", _FLAG),
        ("aud.flag.band_limited", "clip-level: source rate < 16 kHz, so content above its Nyquist is absent", _FLAG),
    ]
    return s


SPECS = _specs()
SCHEMA = AttributeSchema.build("audio", SPECS)
NAMES = tuple(spec[0] for spec in SPECS)
PITCH_CLASS_NAMES = _PC_NAMES
