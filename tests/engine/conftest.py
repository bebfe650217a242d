"""A tiny registry of toy modalities, so the engine's tests need none of the built-in plugins."""

from __future__ import annotations

import json
import types

import attrs
import numpy as np
import pytest

from v22sdk import AttributeSchema, Encoding, InputError, InputSpec, Modality, Registry, hookimpl

TOY_SCHEMA = AttributeSchema.build(
    "language",
    [
        ("toy.mood.question", "the character is a question mark"),
        ("toy.mood.exclamation", "the character is an exclamation mark"),
        ("toy.emotion.polarity", "positive (+) or negative (-) character", "±0.5"),
        ("toy.logic.cause", "a causal connective"),
        ("toy.char.code", "code point mod 100 / 100", "x/100"),
    ],
)
BLIP_SCHEMA = AttributeSchema.build("audio", [("blip.pitch", "pitch of the blip", "value itself")])


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(256)
    return (v / np.linalg.norm(v)).astype(np.float32)


@attrs.frozen
class ToyText(Modality):
    name = "toytext"
    extensions = (".toy",)
    schema = TOY_SCHEMA
    input_spec = InputSpec(kind="text")

    def encode(self, data, **units):
        if not isinstance(data, str) or not data:
            raise InputError("<toytext>", "needs a non-empty str")
        emb = np.stack([_unit(ord(c)) for c in data])
        attr = np.zeros((len(data), 384), dtype=np.float32)
        for i, c in enumerate(data):
            attr[i, 0] = c in "?？"
            attr[i, 1] = c in "!！"
            attr[i, 2] = 0.5 if c == "好" else (-0.5 if c == "坏" else 0.0)
            attr[i, 3] = c == "因"
            attr[i, 4] = (ord(c) % 100) / 100
        return Encoding(emb, attr, {"char": np.arange(len(data), dtype=np.int64)})

    def load(self, path):
        from v22sdk import Sample

        return Sample(open(path, encoding="utf-8").read().strip(), {}, str(path))


@attrs.frozen
class Blip(Modality):
    """A 'sound' file: JSON {"pitch": float in [-1, 1]} → 3 tokens."""

    name = "blip"
    extensions = (".blip",)
    schema = BLIP_SCHEMA
    input_spec = InputSpec(kind="array", ndim=(0,))

    def load(self, path):
        from v22sdk import Sample

        try:
            pitch = float(json.load(open(path))["pitch"])
        except Exception:
            raise InputError(str(path), "not a blip file") from None
        return Sample(np.float32(pitch), {}, str(path))

    def encode(self, data, **units):
        pitch = float(data)
        emb = np.stack([_unit(1000 + int(round(pitch * 10)) + k) for k in range(3)])
        attr = np.zeros((3, 384), dtype=np.float32)
        attr[:, 256] = pitch
        return Encoding(emb, attr, {"time": np.array([[0, 1], [1, 2], [2, 3]], dtype=np.float64)})


def toy_registry() -> Registry:
    """A registry of the toy modalities, the built-in engines and the built-in memory backends only."""
    reg = Registry(entry_points=False)
    mod = types.SimpleNamespace(v22sdk_register_modalities=hookimpl(lambda: [ToyText, Blip]))
    mod.__name__ = "toy_plugin"
    reg.register(mod, "toy")
    import v22sdk.engine.plugin as engines
    import v22sdk.memory.plugin as memory  # the Runner finds its persistent memory ("tiered") here

    reg.register(engines, "engines")
    reg.register(memory, "memory")
    return reg


@pytest.fixture
def registry(monkeypatch, tmp_path):
    reg = toy_registry()
    import v22sdk.plugins as plugins

    monkeypatch.setattr(plugins, "_default", reg)
    monkeypatch.setenv("V22SDK_CACHE", str(tmp_path / "cache"))
    return reg


@pytest.fixture(scope="module")
def module_registry(tmp_path_factory):
    """The toy registry as the default for a whole module (for module-scoped trained checkpoints)."""
    import v22sdk.plugins as plugins

    reg = toy_registry()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plugins, "_default", reg)
        mp.setenv("V22SDK_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield reg


PAIRS = [
    ("你好吗?", "我很好"),
    ("因为下雨!", "带伞"),
    ("天坏了", "不好"),
    ("早上好", "早安"),
    ("吃了吗?", "吃了"),
    ("再见!", "再见"),
    ("谢谢", "不客气"),
    ("晚安", "好梦"),
    ("多少钱?", "十块"),
    ("好冷!", "穿衣"),
]


@pytest.fixture
def text_manifest(tmp_path):
    path = tmp_path / "pairs.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for a, b in PAIRS:
            fh.write(json.dumps({"input": a, "modality": "toytext", "target": b}, ensure_ascii=False) + "\n")
    return path


@pytest.fixture
def mixed_manifest(tmp_path):
    path = tmp_path / "mixed.jsonl"
    lines = [{"input": a, "modality": "toytext", "target": b} for a, b in PAIRS[:6]]
    for i, pitch in enumerate([-0.8, -0.7, 0.7, 0.8, -0.75, 0.75]):
        f = tmp_path / f"b{i}.blip"
        f.write_text(json.dumps({"pitch": pitch}))
        lines.append({"input": f.name, "target": "低" if pitch < 0 else "高", **({"split": "test"} if i >= 4 else {})})
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    # two shared cores: intra-op threads fighting other processes made steps ~100× slower
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
