"""Storage slots: the engine reads a slot that says only how an input was stored at its ceiling
(v22sdk.engine.canonical), so a stereo copy of a sound reaches the engine as its mono original."""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np
import pytest
import soundfile as sf

from v22sdk import AttributeSchema, Encoding, InputSpec, Modality, Registry, hookimpl
from v22sdk.engine.canonical import engine_attr, engine_attr_set, storage_ceilings
from v22sdk.engine.data import to_tensors
from v22sdk.plugins import get_registry

EXAMPLES = Path(__file__).resolve().parents[2] / "v22sdk" / "engine" / "data" / "examples"
SLOT = "aud.clip.channels"


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """seven.wav (a held-out voice saying 七) as it ships, and the same samples on two and on
    three channels."""
    folder = tmp_path_factory.mktemp("stereo")
    x, rate = sf.read(EXAMPLES / "seven.wav", dtype="float32")
    assert x.ndim == 1
    paths = {1: EXAMPLES / "seven.wav"}
    for n in (2, 3):
        paths[n] = folder / f"seven_{n}ch.wav"
        sf.write(paths[n], np.repeat(x[:, None], n, axis=1), rate, subtype="PCM_16")
    return paths


def test_the_audio_plugin_holds_its_channel_count_at_mono_and_vision_holds_nothing():
    reg = get_registry()
    cols, caps = storage_ceilings(reg, "audio")
    assert cols.tolist() == [reg.get_class("modalities", "audio").schema.index(SLOT)] and caps.tolist() == [0.0]
    assert storage_ceilings(reg, "vision") is None and storage_ceilings(reg, "no_such_modality") is None


def test_a_multichannel_copy_reaches_the_engine_bit_for_bit_as_its_original(copies):
    audio = get_registry().modality("audio")
    schema = audio.schema
    mono, stereo, three = (audio.tokenize_file(copies[n]) for n in (1, 2, 3))
    # the tokens keep what the tokenizer measured: two channels read (2 - 1) / 7
    assert float(stereo.attr[0, schema.index(SLOT)]) == pytest.approx(1 / 7)
    assert float(three.attr[0, schema.index(SLOT)]) == pytest.approx(2 / 7)
    assert float(mono.attr[0, schema.index(SLOT)]) == 0.0
    assert SLOT in schema.active_names(stereo) and SLOT not in schema.active_names(mono)
    # the engine reads all three alike, tensors and attribute sets
    ref, ref_mask = to_tensors([mono], 64)
    for b in (stereo, three):
        t, m = to_tensors([b], 64)
        assert np.array_equal(t.numpy(), ref.numpy()) and np.array_equal(m.numpy(), ref_mask.numpy())
        assert engine_attr_set(b) == engine_attr_set(mono) == schema.active_names(mono)
    # the mono token is read as it is, not copied
    assert engine_attr(mono) is mono.attr


def test_run_gives_a_stereo_copy_its_originals_answer_and_confidence(copies):
    from v22sdk.engine.runner import Runner

    runner = Runner()
    a, b = runner.run(str(copies[1])), runner.run(str(copies[2]))
    assert a["decoded"] == b["decoded"] == "七"
    assert a["confidence"] == b["confidence"] and a["open_set"] == b["open_set"]
    # the memory's query: the same vector and attribute set
    (va, sa), (vb, sb) = runner.encode(str(copies[1])), runner.encode(str(copies[2]))
    assert np.array_equal(va, vb) and sa == sb
    ja, jb = runner.judge([runner.tokenize(str(copies[n])) for n in (1, 2)])
    assert ja == jb


# -- a toy modality with a ceiling that is not its lowest value ---------------------------------
HELD = AttributeSchema.build(
    "audio",
    [("held.copies", "how many copies were stored, scaled", "(n - 1) / 7"), ("held.level", "signal level", "x")],
)


@attrs.frozen
class Held(Modality):
    name = "held"
    extensions = (".held",)
    schema = HELD
    input_spec = InputSpec(kind="array", dtypes=("f",), ndim=(1,))
    storage_slots = {"held.copies": 0.25, "held.absent": 0.0}  # an unknown name holds nothing

    def encode(self, data, **units):
        x = np.asarray(data, dtype=np.float32)
        emb = np.zeros((len(x), 256), np.float32)
        emb[:, 0] = 1.0
        attr = np.zeros((len(x), 384), np.float32)
        attr[:, HELD.index("held.copies")] = x
        attr[:, HELD.index("held.level")] = x
        return Encoding(emb, attr)


class _Plugin:
    @hookimpl
    def v22sdk_register_modalities(self):
        return [Held]


def test_values_below_the_ceiling_pass_and_only_the_storage_slot_is_held():
    reg = Registry(entry_points=False)
    reg.register(_Plugin(), "held")
    b = reg.modality("held").tokenize(np.array([0.0, 0.1, 0.25, 0.6, 0.9], np.float32))
    view = engine_attr(b, reg)
    copies, level = HELD.index("held.copies"), HELD.index("held.level")
    assert view[:, copies].tolist() == pytest.approx([0.0, 0.1, 0.25, 0.25, 0.25])
    assert np.array_equal(view[:, level], b.attr[:, level])  # the content slot is untouched
    assert b.attr[3, copies] == pytest.approx(0.6)  # and the batch itself is not written
    t, _ = to_tensors([b], 8, reg)
    assert np.array_equal(t.numpy()[0, :, 256:], view)
    low = reg.modality("held").tokenize(np.array([0.0, 0.2], np.float32))
    assert engine_attr(low, reg) is low.attr
