"""From a decoded signal to (emb, attr, time offsets): the whole per-clip analysis.

Shapes: N segments (tokens) of 25 frames; F = 25 N frames; frame values are reshaped to (N, 25)
and reduced under the mask of frames whose centre lies inside the real audio. Work is done on
arrays over all frames at once (in blocks of ``BLOCK`` frames to bound memory), never per token.
"""

from __future__ import annotations

import numpy as np

from . import formants as fm
from . import masked as mk
from . import pitch as pt
from . import rhythm as rh
from . import spectral as sp
from .embedding import embed
from .frontend import (
    FRAMES_PER_SEGMENT,
    HOP,
    N_FFT,
    RATE,
    SEGMENT,
    clipped_mask,
    frame_valid,
    frames,
    hann,
    pad,
    resample,
    segment_count,
    to_mono,
)
from .slots import BAND_EDGES, CONTRAST_EDGES, NAMES, SCHEMA

BLOCK = 512  # frames per block: 4 MB temporaries, reused by the allocator (2,048: 16 MB, faulted anew)
SILENCE_RMS = 1e-3  # -60 dBFS: silence flag, and frames below it are never voiced
DB_FLOOR = -100.0
GATE_DB = 60.0  # the spectral analysis range, below the clip's strongest bin
#: Coarse sample lattices (8- to 12-bit PCM) whose rounding noise the gate is raised above.
LATTICE_BITS = (8, 9, 10, 11, 12)
#: The raised gate: this many times the rms a bin's magnitude gets from the lattice's rounding noise.
LATTICE_K = 2.0
DT = HOP / RATE  # 20 ms between frames
_ATTR_INDEX = SCHEMA.indices


def lattice_step(x: np.ndarray) -> float:
    """The step q = 2^(1-b) of the coarsest lattice of ``LATTICE_BITS`` that holds every sample of ``x``
    (full scale ±1), or 0.0 when none does (16-bit and finer PCM, float, anything resampled or mixed).

    An all-zero clip lies on every lattice and has nothing to gate: 0.0. A 16-bit clip fails on one of
    4,096 samples spread over it, so only clips on a lattice pay for the full pass.
    """
    flat = x.reshape(-1)
    if flat.size == 0:
        return 0.0
    finest = float(2 ** (LATTICE_BITS[-1] - 1))
    probe = flat[:: max(1, flat.size // 4096)] * finest
    if not np.array_equal(probe, np.round(probe)):
        return 0.0
    scaled = flat * finest
    if not np.array_equal(scaled, np.round(scaled)) or not scaled.any():
        return 0.0
    ints = np.abs(scaled).astype(np.int64)
    # the coarsest lattice: the number of trailing zero bits every sample shares
    common = int(np.bitwise_or.reduce(ints))
    shift = (common & -common).bit_length() - 1
    bits = max(LATTICE_BITS[-1] - shift, LATTICE_BITS[0])
    return float(2.0 ** (1 - bits))


def _db(x: np.ndarray) -> np.ndarray:
    return 20.0 * np.log10(np.maximum(x, 10 ** (DB_FLOOR / 20)))


def _dbscale(db: np.ndarray) -> np.ndarray:
    return np.clip((db + 50.0) / 50.0, -1.0, 1.0)


def _f0scale(f0: np.ndarray, ok: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.clip(np.log2(f0 / 316.2) / 2.66, -1.0, 1.0)
    return np.where(ok, v, 0.0)


def _formscale(f: np.ndarray, ok: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.clip(np.log2(f / 1000.0) / 2.5, -1.0, 1.0)
    return np.where(ok, v, 0.0)


def analyse(x: np.ndarray, rate: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Full-scale float64 samples (n,) or (n, ch) at ``rate`` -> emb (N, 256) f32, attr (N, 384) f32, time (N, 2) f64."""
    n_src = x.shape[0]
    channels = 1 if x.ndim == 1 else x.shape[1]
    duration = n_src / rate
    mono_src = to_mono(x)
    y = resample(mono_src, rate)
    n_seg = segment_count(int(round(duration * RATE)) if y.size else 1)
    valid = frame_valid(max(1, int(round(duration * RATE))), n_seg)  # (N, 25)
    vflat = valid.ravel()
    v: dict[str, np.ndarray] = {}

    # ---- time spans and source-rate loudness, clipping, over-range --------------------------
    start = np.arange(n_seg) * (SEGMENT / RATE)
    end = np.minimum(start + SEGMENT / RATE, duration)
    time = np.stack([start, end], axis=1)
    # source sample i belongs to segment floor(i / (rate / 2)); segment j starts at ceil(j * rate / 2)
    bounds = np.minimum(-(-np.arange(n_seg) * rate // 2), n_src)
    seg_starts = np.minimum(bounds, max(n_src - 1, 0))
    cnt = np.diff(np.append(bounds, n_src)).astype(np.float64)
    has_src = cnt > 0
    cnt = np.maximum(cnt, 1.0)
    seg_sum = lambda a: np.where(has_src, np.add.reduceat(a, seg_starts), 0.0)  # noqa: E731
    rms = np.sqrt(seg_sum(mono_src * mono_src) / cnt)
    peak = np.where(has_src, np.maximum.reduceat(np.abs(mono_src), seg_starts), 0.0)
    dc = seg_sum(mono_src) / cnt
    clip_frac = seg_sum(clipped_mask(x).astype(np.float64)) / cnt
    over_sample = (np.abs(x) > 1.0) if x.ndim == 1 else (np.abs(x) > 1.0).any(axis=1)
    over = seg_sum(over_sample.astype(np.float64)) > 0
    rms_db, peak_db = _db(rms), _db(peak)
    v["aud.loud.rms_dbfs"] = _dbscale(rms_db)
    v["aud.loud.peak"] = np.minimum(peak, 1.0)
    v["aud.loud.crest"] = np.where(rms > 0, np.tanh((peak_db - rms_db) / 20.0), 0.0)
    v["aud.loud.dc_offset"] = np.tanh(10.0 * dc)
    silent = rms < SILENCE_RMS
    v["aud.flag.silence"] = silent.astype(np.float64)
    v["aud.flag.clip_fraction"] = np.minimum(100.0 * clip_frac, 1.0)
    v["aud.flag.clipping"] = (clip_frac >= 1e-3).astype(np.float64)
    v["aud.flag.over_range"] = over.astype(np.float64)
    v["aud.flag.padded"] = ((end - start) < SEGMENT / RATE - 1e-9).astype(np.float64)

    # ---- frame-level features, in blocks --------------------------------------------------
    from scipy import fft

    padded = pad(y, n_seg)
    fr = frames(padded, n_seg)
    n_fr = fr.shape[0]
    win = hann()
    mag = np.empty((n_fr, N_FFT // 2 + 1))
    frms = np.empty(n_fr)
    for a in range(0, n_fr, BLOCK):
        blk = fr[a : a + BLOCK]
        mag[a : a + BLOCK] = np.abs(fft.rfft(blk * win, axis=1))
        frms[a : a + BLOCK] = sp.frame_rms(blk)
    # Bins 0 and 1 (below 23 Hz) hold a windowed DC offset (none reaches bin 2). An offset is not
    # sound (aud.loud.dc_offset reports it), and storage adds one: libsndfile's 8-bit PCM rounds
    # down, -0.5 LSB (-48 dBFS) on average.
    mag[:, :2] = 0.0
    # The analysis range: GATE_DB below the clip's strongest bin. That level is subtracted from
    # every magnitude (floored at 0): what lies under it — the noise floor of the storage (8-bit
    # PCM's is 65-75 dB below a signal near full scale, 16-bit's ~110 dB), dither, hiss — reads 0
    # in every copy of the same samples, and a bin just above it counts only by its excess, so
    # no feature jumps at the edge (a hard gate let stray noise bins rule the spectral moments).
    # On a coarse lattice (8- to 12-bit PCM) the rounding noise is white with variance q²/12; a
    # bin's magnitude then has rms q/√12·√Σw²·√(RATE/rate) (resampling keeps the noise's density per
    # Hz), which for 8-bit PCM lies near the 60 dB gate: the gate is raised to LATTICE_K times it,
    # so that the noise (exceeding twice its rms in 1.8 % of bins) reads 0. 16-bit noise lies 48 dB
    # lower, so finer samples keep the 60 dB gate and their tokens.
    gate = mag.max() * 10.0 ** (-GATE_DB / 20.0)
    step = lattice_step(x)
    if step:
        noise = step / np.sqrt(12.0) * np.sqrt(np.sum(win * win) * RATE / rate)
        gate = max(gate, LATTICE_K * noise)
    np.subtract(mag, gate, out=mag)
    np.maximum(mag, 0.0, out=mag)
    # zero crossings in O(n): cumulative sign changes of the padded signal, differenced per frame
    zc = sp.zero_crossings(padded, max(float(np.abs(padded).max()) * 10.0 ** (-GATE_DB / 20.0), 1e-10))
    starts = np.arange(n_fr) * HOP
    zcr = (zc[starts + N_FFT - 1] - zc[starts]) / N_FFT
    power = mag * mag
    logp = sp.log_power(power)
    loud_frame = frms >= SILENCE_RMS
    shape = (n_seg, FRAMES_PER_SEGMENT)
    R = lambda a: a.reshape(shape)  # noqa: E731  (frame values -> (N, 25))

    # ---- pitch: YIN on every frame -------------------------------------------------------------
    # only non-silent frames inside the audio are analysed; the others are unvoiced (dip 1)
    loud_p = loud_frame & vflat
    f0 = np.full(n_fr, pt.F0_MIN)
    vprob = np.zeros(n_fr)
    dmin = np.ones(n_fr)
    todo = np.flatnonzero(loud_p)
    for a in range(0, todo.size, BLOCK):
        sel = todo[a : a + BLOCK]
        f0[sel], vprob[sel], dmin[sel] = pt.yin(fr[sel])
    vprob = np.where(loud_p, vprob, 0.0)
    voiced_flat = vprob >= pt.VOICED_THRESHOLD
    voiced = R(voiced_flat)
    lf0 = np.log2(np.maximum(f0, 1.0))
    n_voiced = voiced.sum(axis=1)
    has_pitch = n_voiced > 0
    med = 2.0 ** mk.median(R(lf0), voiced)
    v["aud.pitch.f0"] = _f0scale(med, has_pitch)
    v["aud.pitch.f0_min"] = _f0scale(2.0 ** mk.vmin(R(lf0), voiced), has_pitch)
    v["aud.pitch.f0_max"] = _f0scale(2.0 ** mk.vmax(R(lf0), voiced), has_pitch)
    v["aud.pitch.f0_std"] = np.tanh(12.0 * mk.std(R(lf0), voiced) / 4.0)
    v["aud.pitch.f0_slope"] = np.tanh(mk.slope(R(lf0), voiced, DT) / 2.0)
    pair = voiced[:, 1:] & voiced[:, :-1]
    jit = mk.mean(np.abs(np.diff(R(lf0), axis=1)) * 12.0, pair)
    v["aud.pitch.jitter"] = np.tanh(jit / 2.0)
    v["aud.pitch.voicing_prob"] = mk.mean(R(vprob), valid)
    vfrac = mk.mean(voiced.astype(np.float64), valid)
    v["aud.pitch.voiced_fraction"] = vfrac
    v["aud.pitch.voiced"] = (vfrac >= 0.5).astype(np.float64)
    v["aud.pitch.clarity"] = mk.mean(R(1.0 - dmin), voiced)
    midi_med = 69.0 + 12.0 * np.log2(np.where(has_pitch, med, 440.0) / 440.0)
    note = np.round(midi_med)
    v["aud.pitch.octave"] = np.where(has_pitch, np.clip((np.floor(note / 12.0) - 1.0 - 4.0) / 4.0, -1, 1), 0.0)
    v["aud.pitch.cents"] = np.where(has_pitch, np.clip((midi_med - note) * 2.0, -1.0, 1.0), 0.0)
    pc = np.mod(np.round(69.0 + 12.0 * (lf0 - np.log2(440.0))), 12).astype(np.int64)
    onehot = (pc[:, None] == np.arange(12)[None, :]) & voiced_flat[:, None]
    share = onehot.reshape(n_seg, FRAMES_PER_SEGMENT, 12).sum(axis=1) / np.maximum(n_voiced, 1)[:, None]
    for k, name in enumerate(_names("aud.pitch_class.")):
        v[name] = share[:, k]

    # ---- formants: LPC at 8 kHz on every second voiced frame (40 ms hop) -----------------------
    ff = np.full((n_fr, 3), np.nan)
    fb = np.full((n_fr, 3), np.nan)
    lpc_pick = voiced_flat & (np.arange(n_fr) % 2 == 0)
    idx = np.flatnonzero(lpc_pick)
    if idx.size:
        lpc_in = fm.lpc_frames(y, idx)
        for a in range(0, idx.size, BLOCK):
            ff[idx[a : a + BLOCK]], fb[idx[a : a + BLOCK]] = fm.formants(lpc_in[a : a + BLOCK])
    for i in range(3):
        ok = ~np.isnan(R(ff[:, i]))
        has = ok.any(axis=1)
        lf = np.log2(np.where(np.isnan(ff[:, i]), 1.0, ff[:, i]))
        fmed = 2.0 ** mk.median(R(lf), ok)
        v[f"aud.formant.f{i + 1}"] = _formscale(fmed, has)
        v[f"aud.formant.b{i + 1}"] = np.where(has, np.tanh(mk.median(R(np.nan_to_num(fb[:, i])), ok) / 300.0), 0.0)
        if i < 2:
            v[f"aud.formant.f{i + 1}_std"] = np.tanh(mk.std(R(lf), ok) / 0.5)
        if i == 0:
            f1med, has1 = fmed, has
        if i == 1:
            v["aud.formant.f2_f1_ratio"] = np.where(
                has & has1, np.clip(np.log2(fmed / np.where(has1, f1med, 1.0)) / 4.0, -1, 1), 0.0
            )
    all3 = R(~np.isnan(ff).any(axis=1) & lpc_pick)
    v["aud.formant.detected"] = mk.count(all3) / np.maximum(mk.count(R(lpc_pick)), 1)

    # ---- frame loudness, ZCR ----------------------------------------------------------------
    fdb = _db(frms)
    v["aud.loud.frame_db_max"] = _dbscale(mk.vmax(R(fdb), valid))
    v["aud.loud.frame_db_min"] = _dbscale(mk.vmin(R(fdb), valid))
    v["aud.loud.frame_db_std"] = np.tanh(mk.std(R(fdb), valid) / 10.0)
    v["aud.loud.dynamic_range"] = np.clip((mk.vmax(R(fdb), valid) - mk.vmin(R(fdb), valid)) / 60.0, 0, 1)
    v["aud.loud.shimmer"] = np.tanh(mk.mean(np.abs(np.diff(R(fdb), axis=1)), valid[:, 1:]) / 3.0)
    frm_mean = mk.mean(R(frms), valid)
    v["aud.loud.low_energy"] = mk.mean((R(frms) < frm_mean[:, None]).astype(np.float64), valid)
    v["aud.zcr.mean"] = mk.mean(R(zcr), valid)
    v["aud.zcr.std"] = np.minimum(4.0 * mk.std(R(zcr), valid), 1.0)
    v["aud.zcr.max"] = mk.vmax(R(zcr), valid)

    # ---- spectral shape (frame level) ---------------------------------------------------------
    cent, bw, skew, kurt = sp.shape_moments(mag)
    flat = sp.flatness(power, logp)
    flux = sp.flux(mag)
    v["aud.spec.centroid"] = mk.mean(R(cent), valid) / 8000.0
    v["aud.spec.centroid_std"] = np.minimum(mk.std(R(cent), valid) / 4000.0, 1.0)
    v["aud.spec.centroid_slope"] = np.tanh(mk.slope(R(cent), valid, DT) / 8000.0)
    v["aud.spec.bandwidth"] = np.minimum(mk.mean(R(bw), valid) / 8000.0, 1.0)
    r85, r95 = sp.rolloff(mag, 0.85, 0.95)
    v["aud.spec.rolloff85"] = mk.mean(R(r85), valid) / 8000.0
    v["aud.spec.rolloff95"] = mk.mean(R(r95), valid) / 8000.0
    v["aud.spec.flatness"] = mk.mean(R(flat), valid)
    v["aud.spec.flatness_std"] = np.minimum(2.0 * mk.std(R(flat), valid), 1.0)
    v["aud.spec.flux"] = np.tanh(mk.mean(R(flux), valid) / 0.1)
    v["aud.spec.flux_std"] = np.tanh(mk.std(R(flux), valid) / 0.1)
    v["aud.spec.slope"] = np.tanh(mk.mean(R(sp.slope(logp)), valid) / 10.0)
    v["aud.spec.entropy"] = mk.mean(R(sp.entropy(power, logp)), valid)
    v["aud.spec.skewness"] = np.tanh(mk.mean(R(skew), valid) / 5.0)
    v["aud.spec.kurtosis"] = np.tanh(mk.mean(R(kurt), valid) / 20.0)

    # ---- segment power spectrum: bands, contrast, chroma, crest --------------------------------
    nv = np.maximum(valid.sum(axis=1), 1)[:, None]
    validf = valid.astype(np.float64)
    seg_pow = np.einsum("nfk,nf->nk", power.reshape(n_seg, FRAMES_PER_SEGMENT, -1), validf) / nv  # (N, 513)
    total = seg_pow.sum(axis=1)
    has_pow = total > 0
    safe_total = np.where(has_pow, total, 1.0)
    freqs = sp.FREQS
    band_of = np.clip(np.searchsorted(BAND_EDGES, freqs, side="right") - 1, 0, len(BAND_EDGES) - 2)
    band = np.zeros((freqs.size, len(BAND_EDGES) - 1))
    band[np.arange(freqs.size), band_of] = 1.0
    shares = (seg_pow @ band) / safe_total[:, None]
    band_val = np.where(has_pow[:, None], np.clip(1.0 + np.log10(np.maximum(shares, 1e-12)) / 6.0, 0, 1), 0.0)
    for k, name in enumerate(n for n in NAMES if n.startswith("aud.band.")):
        v[name] = band_val[:, k]
    # floored 60 dB below the clip's strongest bin, like the embedding: below it an empty band's
    # percentiles would read the storage's noise floor (16-bit vs 24-bit copies differed by 0.1)
    pdb = 10.0 * np.log10(np.maximum(seg_pow, max(float(seg_pow.max()) * 1e-6, 1e-10)))
    for k, (lo, hi) in enumerate(zip(CONTRAST_EDGES[:-1], CONTRAST_EDGES[1:])):
        in_band = (freqs >= lo) & (freqs < hi) if hi < 8000 else (freqs >= lo)
        q = mk.percentiles(pdb[:, in_band], (80, 20))
        v[f"aud.contrast.b{k + 1}"] = np.where(has_pow, np.tanh((q[0] - q[1]) / 40.0), 0.0)
    chroma_bins = (freqs >= 50.0) & (freqs <= 5000.0)
    cpc = np.mod(np.round(69.0 + 12.0 * np.log2(np.where(chroma_bins, freqs, 440.0) / 440.0)), 12).astype(int)
    cmat = np.zeros((freqs.size, 12))
    cmat[np.flatnonzero(chroma_bins), cpc[chroma_bins]] = 1.0
    chroma = seg_pow @ cmat
    csum = chroma.sum(axis=1, keepdims=True)
    chroma = np.where(csum > 0, chroma / np.where(csum > 0, csum, 1.0), 0.0)
    for k, name in enumerate(_names("aud.chroma.")):
        v[name] = chroma[:, k]
    v["aud.chroma.peakiness"] = chroma.max(axis=1)
    v["aud.spec.crest"] = np.where(
        has_pow,
        np.tanh(10 * np.log10(np.maximum(seg_pow.max(axis=1) / np.maximum(seg_pow.mean(axis=1), 1e-300), 1.0)) / 30.0),
        0.0,
    )
    v["aud.spec.peak_freq"] = np.where(has_pow, freqs[np.argmax(seg_pow, axis=1)] / 8000.0, 0.0)
    v["aud.spec.brightness"] = seg_pow[:, freqs > 1500.0].sum(axis=1) / safe_total

    # ---- harmonicity ---------------------------------------------------------------------------
    d = np.clip(dmin, 1e-6, 1.0)
    hnr = 10.0 * np.log10(np.maximum(1.0 - d, 1e-6) / d)
    v["aud.harm.hnr"] = np.where(has_pitch, np.tanh(mk.mean(R(hnr), voiced) / 20.0), 0.0)
    v["aud.harm.periodicity"] = mk.mean(R(1.0 - dmin), R(loud_p))
    hr, oe = _harmonic_measures(power, f0, lpc_pick)
    v["aud.harm.harmonic_ratio"] = mk.mean(R(hr), R(lpc_pick))
    v["aud.harm.odd_even"] = np.where(R(lpc_pick).any(axis=1), np.tanh(mk.mean(R(oe), R(lpc_pick))), 0.0)

    # ---- onsets, modulation, clip-level rhythm ---------------------------------------------------
    env = rh.onset_envelope(logp)
    onset = rh.pick_onsets(env, vflat)
    seg_secs = np.maximum(valid.sum(axis=1), 1) * DT
    n_on = R(onset).sum(axis=1)
    v["aud.onset.strength_mean"] = np.tanh(mk.mean(R(env), valid) / 2.0)
    v["aud.onset.strength_max"] = np.tanh(mk.vmax(R(env), valid) / 10.0)
    v["aud.onset.strength_std"] = np.tanh(mk.std(R(env), valid) / 5.0)
    v["aud.onset.rate"] = np.minimum(n_on / seg_secs / 20.0, 1.0)
    v["aud.onset.present"] = (n_on > 0).astype(np.float64)
    rr = R(frms)
    v["aud.mod.am_depth"] = np.where(
        frm_mean > 0, np.tanh(mk.std(rr, valid) / np.where(frm_mean > 0, frm_mean, 1)), 0.0
    )
    modspec = np.abs(fft.rfft(np.where(valid, rr - frm_mean[:, None], 0.0), axis=1))[:, 1:]
    strong = modspec.max(axis=1) > 1e-3 * np.maximum(frm_mean, 1e-12) * FRAMES_PER_SEGMENT
    v["aud.mod.am_rate"] = np.where(strong & (frm_mean > 0), (np.argmax(modspec, axis=1) + 1) * 2.0 / 24.0, 0.0)

    on_idx = np.flatnonzero(onset)
    n_valid_frames = int(vflat.sum())
    bpm, conf = rh.tempo(env, n_valid_frames, on_idx.size)
    ioi = np.diff(on_idx) * DT
    clip = {
        "aud.rhythm.tempo": np.clip((bpm - 140.0) / 100.0, -1, 1) if bpm > 0 else 0.0,
        "aud.rhythm.tempo_confidence": conf,
        "aud.rhythm.estimated": float(bpm > 0),
        "aud.rhythm.regularity": float(np.clip(1.0 - ioi.std() / ioi.mean(), 0, 1)) if ioi.size >= 2 else 0.0,
        "aud.rhythm.onset_rate": min(on_idx.size / duration / 20.0, 1.0),
        "aud.rhythm.ioi_mean": float(np.tanh(ioi.mean())) if ioi.size else 0.0,
        "aud.clip.duration": float(np.tanh(duration / 60.0)),
        "aud.clip.rms_dbfs": float(_dbscale(_db(np.sqrt(np.mean(mono_src**2))))),
        "aud.clip.source_rate": float(np.clip(np.log2(rate / RATE) / 4.0, -1, 1)),
        "aud.clip.channels": float(np.clip((channels - 1) / 7.0, 0, 1)),
        "aud.flag.band_limited": float(rate < RATE),
    }
    for name, value in clip.items():
        v[name] = np.full(n_seg, value)
    v["aud.clip.position"] = np.clip(0.5 * (start + end) / duration, 0, 1)
    v["aud.clip.relative_level"] = np.clip((rms_db - _db(np.sqrt(np.mean(mono_src**2)))) / 30.0, -1, 1)

    # ---- assemble ------------------------------------------------------------------------------
    missing = set(NAMES) - set(v)
    if missing:  # a programming error, never bad input: every declared slot must be computed
        raise AssertionError(f"audio slots not computed: {sorted(missing)}")
    cols = np.empty((len(NAMES), n_seg))
    for i, name in enumerate(NAMES):  # row assignment broadcasts a clip-level value
        cols[i] = v[name]
    attr = np.zeros((n_seg, 384), dtype=np.float64)
    attr[:, _ATTR_INDEX] = cols.T
    attr = np.clip(np.nan_to_num(attr, nan=0.0, posinf=1.0, neginf=-1.0), -1.0, 1.0).astype(np.float32)

    mean_mag = np.einsum("nfk,nf->nk", mag.reshape(n_seg, FRAMES_PER_SEGMENT, -1)[:, :, :512], validf) / nv
    emb = embed(mean_mag, rms)
    return emb, attr, time


def _names(prefix: str) -> list[str]:
    return [n for n in NAMES if n.startswith(prefix) and n != "aud.chroma.peakiness"]


def _harmonic_measures(power: np.ndarray, f0: np.ndarray, voiced: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(harmonic power share, log10 odd/even harmonic power) per frame; 0 for unvoiced frames."""
    hr = np.zeros(power.shape[0])
    oe = np.zeros(power.shape[0])
    idx = np.flatnonzero(voiced)
    if idx.size == 0:
        return hr, oe
    p = power[idx]
    step = sp.FREQS[1]
    ratio = sp.FREQS[None, :] / f0[idx, None]  # bin frequency in harmonics of f0
    near = np.round(ratio)
    dist_bins = np.abs(ratio - near) * f0[idx, None] / step
    mask = (near >= 1) & (dist_bins <= 1.0)
    tot = np.maximum(p.sum(axis=1), 1e-300)
    hr[idx] = (p * mask).sum(axis=1) / tot
    h = np.arange(2, 11)
    bins = np.round(h[None, :] * f0[idx, None] / step).astype(np.int64)
    inside = bins < p.shape[1] - 1
    b = np.clip(bins, 1, p.shape[1] - 2)
    rows = np.arange(idx.size)[:, None]
    hp = (p[rows, b - 1] + p[rows, b] + p[rows, b + 1]) * inside
    odd = hp[:, h % 2 == 1].sum(axis=1)
    even = hp[:, h % 2 == 0].sum(axis=1)
    has_harm = (odd + even) >= 1e-4 * tot  # pure tones: no harmonics, ratio undefined -> 0
    defined = has_harm & (odd > 0) & (even > 0)
    odd, even = np.maximum(odd, 1e-300), np.maximum(even, 1e-300)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        ratio = np.log10(odd / even)
    # a ratio beyond float64's range (harmonics ~1e-300 of the others' power) overflowed to inf or
    # underflowed to 0: the difference of the logarithms is finite there (never inf, nor a NaN mean)
    wide = ~np.isfinite(ratio)
    ratio[wide] = np.log10(odd[wide]) - np.log10(even[wide])
    oe[idx] = np.where(defined, ratio, 0.0)
    return hr, oe
