"""Instruments: single notes of eight General MIDI instruments from the FluidR3 soundfont, split by pitch.

FluidR3_GM.sf2 (Debian ``fluid-soundfont-gm``) holds recorded samples of real instruments; the
``fluidsynth`` program renders a generated Standard MIDI File through it: the notes follow one
another in 2.25-second slots (a 0.2 s primer of the same note, then the note for 1 s; "all sound
off" after each, so nothing rings into the next slot; see :func:`midi_file` for why the primer);
reverb and chorus are off, gain 2.0. Each note's clip is the 1.5 s from its onset, mixed to mono, with a 20 ms linear fade-out, written as 16-bit PCM WAV
at 32 kHz. fluidsynth writes float samples (its 16-bit output is dithered with noise that depends on
the position in the run); the builder rounds them to 16 bits. A silent clip is an error, never data.

Every instrument plays the MIDI pitches of its usual range within 48–96 (C3–C7; the violin stops
at 93: FluidR3 renders its 94 silent), at velocities 48, 80 and 112. The split is by pitch: the pitches 48–96 fall in blocks of ten semitones, and in
each block a seeded choice puts 2 pitches in test and 1 in val, so test pitches (10 of 49) are
never played in training by any instrument, and they are spread over the whole range.
"""

from __future__ import annotations

import struct
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ....errors import MissingDependency
from .common import Record, debian_version, find_program, rng_for, run_tool, sha256_file, write_wav

PART = "instruments"
#: (label, General MIDI program (0-based), English name, family, lowest and highest MIDI pitch used)
INSTRUMENTS = (
    ("钢琴", 0, "acoustic grand piano", "piano", 48, 96),
    ("木琴", 13, "xylophone", "chromatic percussion", 65, 96),
    ("管风琴", 19, "church organ", "organ", 48, 96),
    ("吉他", 24, "acoustic guitar (nylon)", "guitar", 48, 83),
    ("小提琴", 40, "violin", "strings", 55, 93),  # FluidR3 renders its pitch 94 silent
    ("小号", 56, "trumpet", "brass", 54, 82),
    ("单簧管", 71, "clarinet", "reed", 50, 91),
    ("长笛", 73, "flute", "pipe", 60, 96),
)
PITCH_RANGE = (48, 96)
BLOCK = 10  # semitones per block of the pitch split
PER_BLOCK = {"test": 2, "val": 1}
VELOCITIES = (48, 80, 112)
GAIN = 2.0  # fluidsynth -g (its default, 0.2, left the softest notes near -70 dBFS)
SILENT_PEAK = 1e-4  # a clip whose peak is below this (-80 dBFS) is an error, not data
#: 32 kHz with 250 ticks per quarter at 120 bpm: one MIDI tick = 2 ms = 64 samples = one fluidsynth
#: block, so every event falls on a block boundary
RATE = 32000
TICKS_PER_QUARTER = 250  # at the default tempo of 120 bpm: 500 ticks per second
#: a slot (seconds): the primer note sounds from 0 to PRIMER_OFF, all sound off at PRIMER_SILENCE;
#: the note itself starts at NOTE_AT, sounds for NOTE_S, all sound off at NOTE_AT + SILENCE_AFTER;
#: the clip is [NOTE_AT, NOTE_AT + CLIP_S)
SLOT_S, PRIMER_OFF, PRIMER_SILENCE, NOTE_AT = 2.25, 0.2, 0.24, 0.25
NOTE_S, SILENCE_AFTER, CLIP_S, FADE_S = 1.0, 1.9, 1.5, 0.02
NOTES_PER_RUN = 128  # notes per fluidsynth run (bounds the temporary float WAV to ~75 MB)
SOUNDFONTS = ("/usr/share/sounds/sf2/FluidR3_GM.sf2", "/usr/share/soundfonts/FluidR3_GM.sf2")
NOTE_NAMES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")


def note_name(pitch: int) -> str:
    return f"{NOTE_NAMES[pitch % 12]}{pitch // 12 - 1}"


def pitch_splits(seed: int) -> dict[int, str]:
    """Each MIDI pitch of ``PITCH_RANGE`` → its split (2 test and 1 val per block of 10)."""
    out = {}
    lo, hi = PITCH_RANGE
    for b, start in enumerate(range(lo, hi + 1, BLOCK)):
        block = list(range(start, min(start + BLOCK, hi + 1)))
        order = [block[i] for i in rng_for(seed, PART, "block", b).permutation(len(block))]
        n_test, n_val = PER_BLOCK["test"], PER_BLOCK["val"]
        for i, p in enumerate(order):
            out[p] = "test" if i < n_test else ("val" if i < n_test + n_val else "train")
    return out


def find_soundfont(path: str | None = None) -> Path:
    """FluidR3_GM.sf2: ``path`` when given (InputError when it is not a file), else the Debian locations."""
    if path:
        if not Path(path).is_file():
            from ....errors import InputError

            raise InputError(str(path), "no such soundfont file")
        return Path(path)
    for p in SOUNDFONTS:
        if Path(p).is_file():
            return Path(p)
    raise MissingDependency(
        "the soundfont FluidR3_GM.sf2",
        "install the Debian package 'fluid-soundfont-gm' (apt-get install fluid-soundfont-gm)",
    )


def midi_file(notes: Sequence[tuple[int, int, int]]) -> bytes:
    """A format-0 Standard MIDI File on channel 0 playing ``notes`` (program, pitch, velocity), one
    per slot of ``SLOT_S`` seconds: program change, a short *primer* of the same note, all sound
    off, then the note itself, all sound off.

    Why the primer: a fluidsynth voice carries a little state from the last note it played
    (measured: up to 0.004 of full scale in a note's first 3 ms after a different note), so the
    same note rendered after different notes differed. After the primer, the note's samples are
    identical wherever it falls in a run (tested over permutations), so each clip depends on the
    note alone and a smaller suite's notes are byte-identical to a larger one's."""
    per_s = 2 * TICKS_PER_QUARTER  # 120 bpm

    def vlq(n: int) -> bytes:
        out = [n & 0x7F]
        n >>= 7
        while n:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        return bytes(reversed(out))

    def tick(seconds: float) -> int:
        return round(seconds * per_s)

    events: list[tuple[int, bytes]] = []
    for k, (program, pitch, velocity) in enumerate(notes):
        t0 = k * tick(SLOT_S)
        on, off, silence = bytes([0x90, pitch, velocity]), bytes([0x80, pitch, 0]), bytes([0xB0, 120, 0])
        events += [
            (t0, bytes([0xC0, program])),
            (t0, on),
            (t0 + tick(PRIMER_OFF), off),
            (t0 + tick(PRIMER_SILENCE), silence),
            (t0 + tick(NOTE_AT), on),
            (t0 + tick(NOTE_AT + NOTE_S), off),
            (t0 + tick(NOTE_AT + SILENCE_AFTER), silence),
        ]
    track, last = b"", 0
    for t, ev in events + [(len(notes) * tick(SLOT_S), b"\xff\x2f\x00")]:
        track += vlq(t - last) + ev
        last = t
    return b"MThd" + struct.pack(">IHHH", 6, 0, 1, TICKS_PER_QUARTER) + b"MTrk" + struct.pack(">I", len(track)) + track


def render(exe: str, soundfont: Path, notes: Sequence[tuple[int, int, int]], tmp: Path):
    """Render ``notes`` (see :func:`midi_file`) in fluidsynth runs of ``NOTES_PER_RUN``; yield each
    note's clip, (CLIP_S·RATE,) float64 mono, one at a time."""
    import soundfile

    slot, start, clip = round(SLOT_S * RATE), round(NOTE_AT * RATE), round(CLIP_S * RATE)
    fade = np.ones(clip)
    n_fade = round(FADE_S * RATE)
    fade[-n_fade:] = np.linspace(1.0, 0.0, n_fade)
    mid, wav = tmp / "notes.mid", tmp / "notes.wav"
    for first in range(0, len(notes), NOTES_PER_RUN):
        chunk = notes[first : first + NOTES_PER_RUN]
        mid.write_bytes(midi_file(chunk))
        run_tool(
            [
                exe,
                "-n",
                "-i",
                "-q",
                "-R",
                "0",
                "-C",
                "0",
                "-g",
                str(GAIN),
                "-r",
                str(RATE),
                "-T",
                "wav",
                "-O",
                "float",
                "-F",
                str(wav),
                str(soundfont),
                str(mid),
            ],
            "fluidsynth",
            timeout=3600,
        )
        with soundfile.SoundFile(str(wav)) as fh:
            if fh.samplerate != RATE:  # pragma: no cover - fluidsynth honours -r
                raise RuntimeError(f"fluidsynth wrote {fh.samplerate} Hz, not {RATE}")
            for k in range(len(chunk)):
                fh.seek(min(k * slot + start, fh.frames))
                audio = fh.read(clip, dtype="float64", always_2d=True).mean(1)
                yield np.pad(audio, (0, clip - len(audio))) * fade


def plan(
    seed: int, pitches_per_split: dict[str, int] | None, all_velocities: bool
) -> list[tuple[str, int, str, int, int, str]]:
    """The notes to render: (label, program, name, pitch, velocity, split), in a fixed order.

    ``pitches_per_split``: per instrument, how many of its pitches to keep in each split (chosen
    by a seeded rank; None: all). ``all_velocities``: every pitch at each of ``VELOCITIES``;
    otherwise one velocity per (instrument, pitch), seeded."""
    splits = pitch_splits(seed)
    notes = []
    for label, program, name, _family, lo, hi in INSTRUMENTS:
        pitches = list(range(lo, hi + 1))
        if pitches_per_split is not None:
            keep = []
            for split in ("train", "val", "test"):
                own = [p for p in pitches if splits[p] == split]
                own.sort(key=lambda p: int(rng_for(seed, PART, "rank", program, p).integers(1 << 62)))
                keep += own[: pitches_per_split.get(split, 0)]
            pitches = sorted(keep)
        for p in pitches:
            if all_velocities:
                vels = list(VELOCITIES)
            else:
                vels = [VELOCITIES[int(rng_for(seed, PART, "velocity", program, p).integers(len(VELOCITIES)))]]
            notes += [(label, program, name, p, v, splits[p]) for v in vels]
    return notes


def build(
    out: Path,
    seed: int,
    pitches_per_split: dict[str, int] | None,
    all_velocities: bool,
    log: Callable[[str], None],
    soundfont: str | None = None,
) -> tuple[list[Record], dict]:
    """Render the notes under ``out/instruments/<program>/`` and return their records and the source's record."""
    exe = find_program("fluidsynth", "fluidsynth")
    sf2 = find_soundfont(soundfont)
    version = run_tool([exe, "--version"], "fluidsynth --version", timeout=60).stdout.decode("utf-8", "replace")
    version = next((ln.strip() for ln in version.splitlines() if "version" in ln.lower()), version.strip())
    notes = plan(seed, pitches_per_split, all_velocities)
    log(f"instruments: {len(notes)} notes of {len(INSTRUMENTS)} instruments")
    records = []
    with tempfile.TemporaryDirectory(prefix="v22sdk-suite-") as tmp:
        clips = render(exe, sf2, [(n[1], n[3], n[4]) for n in notes], Path(tmp))
        for (label, program, name, pitch, velocity, split), clip in zip(notes, clips):
            rel = f"{PART}/{program:03d}/{pitch:03d}_v{velocity:03d}.wav"
            if np.abs(clip).max() < SILENT_PEAK:
                from ....errors import V22Error

                raise V22Error(
                    f"fluidsynth rendered silence for the {name} at {note_name(pitch)} (MIDI {pitch}, "
                    f"velocity {velocity}): {sf2} has no sample there"
                )
            digest = write_wav(out / rel, clip, RATE)
            records.append(
                Record(
                    rel,
                    "audio",
                    label,
                    split,
                    PART,
                    f"pitch:{pitch}",
                    {
                        "instrument": name,
                        "program": program,
                        "pitch": pitch,
                        "note": note_name(pitch),
                        "velocity": velocity,
                        "peak": round(float(np.abs(clip).max()), 4),
                        "rms_dbfs": round(float(20 * np.log10(np.sqrt(np.mean(clip**2)) + 1e-12)), 1),
                    },
                    digest,
                )
            )
    splits = pitch_splits(seed)
    source = {
        "name": "FluidR3 General MIDI soundfont (Frank Wen), rendered by FluidSynth",
        "version": f"fluid-soundfont-gm {debian_version('fluid-soundfont-gm') or '?'}; {version}",
        "licence": "FluidR3_GM.sf2: MIT (Debian copyright file of fluid-soundfont-gm); FluidSynth: LGPL-2.1-or-later",
        "soundfont": str(sf2),
        "sha256": {sf2.name: sha256_file(sf2)},
        "instruments": [
            {"label": lab, "program": prog, "name": name, "family": fam, "pitches": [lo, hi]}
            for lab, prog, name, fam, lo, hi in INSTRUMENTS
        ],
        "pitches_by_split": {s: [p for p in sorted(splits) if splits[p] == s] for s in ("train", "val", "test")},
        "rendering": f"fluidsynth -R 0 -C 0 -g {GAIN} -r {RATE} -O float; per {SLOT_S} s slot a {PRIMER_OFF} s primer "
        f"of the same note, then the note for {NOTE_S} s; "
        f"clip {CLIP_S} s, mono, {FADE_S * 1000:.0f} ms fade-out, 16-bit WAV",
        "split_by": "pitch",
        "split": "by MIDI pitch: val and test pitches are never played in training by any instrument",
    }
    return records, source
