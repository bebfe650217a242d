"""Parts of the hook-4 experiment: captions of real handwritten and spoken digits, the inputs' 640-D
tokens and modality-specific features, and a small LM conditioned on a few 640-D feature slots.

Inputs come from the project's data suite (:func:`v22sdk.engine.data.suite.build_suite`, parts
``handwriting`` and ``speech``), built into a temporary folder. Each input gets

- ``unified``: its tokens from the installed ``vision`` / ``audio`` modality (256-D unit embedding
  + 384 attributes = 640-D each), in :data:`SLOTS` slots (token ``i`` goes to slot
  ``i * SLOTS // n``, slots averaged; empty slots are 0);
- ``specific``: modality-specific features of the same shape: the PNG's ink values (4 bands of
  8 x 32 pixels, 256 values, zero-padded to 640) or the recording's MFCCs (librosa, 20
  coefficients x 32 frames per quarter of the clip = 640);
- a caption drawn from templates (:func:`caption`): the digit (word or numeral), a template chosen
  at random per draw, and properties of the input that are not the label (ink weight of the
  handwriting; language, speed and pitch of the voice). The caption is therefore *not* determined
  by the label: the template is random, and the properties vary within a label.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

from v22sdk.specdec.errors import SpecDecError
from v22sdk.specdec.models import _Block

SLOTS = 4
FEAT = 640
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

TEMPLATES = {
    "handwriting": (
        "a {ink} handwritten {word}.",
        "the digit {num}, written by hand in {ink} ink.",
        "handwriting: {word} ({num}).",
    ),
    "speech": (
        "a {pitch} voice says {word} in {lang}.",
        "spoken {lang}: the number {word}, {speed}.",
        "{word} ({num}), said {speed} in {lang}.",
    ),
}


def caption(part: str, props: dict, template: int) -> str:
    """The caption of an input with properties ``props`` (digit and descriptors) under ``template``."""
    d = props["digit"]
    return TEMPLATES[part][template].format(
        word=WORDS[d], num=str(d), **{k: v for k, v in props.items() if k != "digit"}
    )


@dataclass
class Example:
    part: str
    split: str
    props: dict
    unified: np.ndarray  # (SLOTS, 640) float32
    specific: np.ndarray  # (SLOTS, 640) float32
    n_tokens: int


def _slots(rows: np.ndarray) -> np.ndarray:
    out = np.zeros((SLOTS, rows.shape[1]), dtype=np.float32)
    n = len(rows)
    if n == 0:
        return out
    idx = np.arange(n) * SLOTS // n
    for s in range(SLOTS):
        sel = rows[idx == s]
        if len(sel):
            out[s] = sel.mean(axis=0)
    return out


def image_features(path: Path) -> tuple[np.ndarray, float]:
    """Ink (1 - grey/255) of a 32 x 32 PNG as 4 bands of 8 x 32 padded to 640; and its mean ink."""
    import cv2

    img = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    if img is None or img.shape != (32, 32):
        raise SpecDecError(f"{path}: not a 32 x 32 greyscale image")
    ink = 1.0 - img.astype(np.float32) / 255.0
    out = np.zeros((SLOTS, FEAT), dtype=np.float32)
    for s in range(SLOTS):
        out[s, :256] = ink[8 * s : 8 * (s + 1)].reshape(-1)
    return out, float(ink.mean())


def audio_features(path: Path) -> np.ndarray:
    """MFCCs (20 x 128 frames over the whole clip) in 4 quarters of 20 x 32 = 640."""
    import librosa
    import soundfile as sf

    y, sr = sf.read(str(path), dtype="float32", always_2d=True)
    y = y.mean(axis=1)
    m = librosa.feature.mfcc(y=y, sr=sr, n_mfcc=20, n_fft=512, hop_length=160)
    frames = np.linspace(0, m.shape[1] - 1, 128).round().astype(int)
    m = m[:, frames]
    return np.stack([m[:, 32 * s : 32 * (s + 1)].reshape(-1) for s in range(SLOTS)]).astype(np.float32)


def load_examples(size: str = "small", seed: int = 0, limit: int | None = None, log=None) -> tuple[list[Example], dict]:
    """Build the suite's handwriting and speech parts in a temporary folder and featurise them."""
    import tempfile

    from v22sdk.engine.data.suite import build_suite, read_suite_info
    from v22sdk.plugins import get_registry

    reg = get_registry()
    examples: list[Example] = []
    with tempfile.TemporaryDirectory(prefix="v22sdk-hook4-") as tmp:
        manifest = build_suite(Path(tmp) / "suite", size=size, seed=seed, parts=["handwriting", "speech"], log=log)
        info = read_suite_info(manifest.parent)
        # nothing is tuned on validation inputs, so they are not featurised
        lines = [json.loads(s) for s in manifest.read_text().splitlines() if s.strip()]
        lines = [rec for rec in lines if rec["split"] != "val"]
        if limit is not None:  # a balanced subset (quick mode): the first `limit` of each part and split
            keep: list[dict] = []
            count: dict[tuple[str, str], int] = {}
            for rec in lines:
                k = (rec["part"], rec["split"])
                if count.get(k, 0) < limit:
                    keep.append(rec)
                    count[k] = count.get(k, 0) + 1
            lines = keep
        for rec in lines:
            path = manifest.parent / rec["input"]
            batch = reg.modality(rec["modality"]).tokenize_file(path)
            unified = _slots(np.concatenate([batch.emb, batch.attr], axis=1).astype(np.float32))
            meta = rec["meta"]
            props: dict[str, float | str]  # the properties the probes predict: numbers, and the language
            if rec["part"] == "handwriting":
                specific, ink = image_features(path)
                props = {"digit": int(meta["digit"]), "ink_value": ink}
            else:
                specific = audio_features(path)
                props = {
                    "digit": int(meta["digit"]),
                    "lang": "english" if meta["language"] == "en" else "mandarin",
                    "speed_wpm": int(meta["speed_wpm"]),
                    "pitch_value": int(meta["pitch"]),
                }
            examples.append(Example(rec["part"], rec["split"], props, unified, specific, len(batch.emb)))
    # descriptors by the training inputs' medians (a property of the input, not of its label)
    train = [e for e in examples if e.split == "train"]
    ink_med = float(np.median([e.props["ink_value"] for e in train if e.part == "handwriting"]))
    spd_med = float(np.median([e.props["speed_wpm"] for e in train if e.part == "speech"]))
    for e in examples:
        if e.part == "handwriting":
            e.props["ink"] = "bold" if e.props["ink_value"] > ink_med else "light"
        else:
            e.props["speed"] = "fast" if e.props["speed_wpm"] > spd_med else "slowly"
            e.props["pitch"] = "high" if e.props["pitch_value"] > 50 else "low"
    meta = {
        "suite": {k: info.get(k) for k in ("size", "seed", "builder_version") if k in info},
        "ink_median": ink_med,
        "speed_median_wpm": spd_med,
        "counts": {
            f"{p}/{s}": sum(e.part == p and e.split == s for e in examples)
            for p in ("handwriting", "speech")
            for s in ("train", "test")
        },
        "tokens_per_input": {
            p: float(np.mean([e.n_tokens for e in examples if e.part == p])) for p in ("handwriting", "speech")
        },
    }
    return examples, meta


def props_only(props: dict) -> dict:
    """The caption fields of ``props`` (the descriptors, not the raw values behind them)."""
    return {k: v for k, v in props.items() if not k.endswith("_value") and k != "speed_wpm"}


class CondLM(nn.Module):
    """Causal transformer over ``SLOTS`` projected feature slots then text: ``feats (B, SLOTS, 640)``,
    ``idx (B, T)`` -> logits ``(B, T, V)`` for the text positions."""

    def __init__(self, vocab: int, max_len: int, d: int, n_layer: int, n_head: int = 4):
        super().__init__()
        self.vocab = vocab
        self.proj = nn.Linear(FEAT, d)
        self.slot_emb = nn.Embedding(SLOTS, d)
        self.tok_emb = nn.Embedding(vocab, d)
        self.pos_emb = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList(_Block(d, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.max_len = max_len
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
                if isinstance(m, nn.Linear) and m.bias is not None:  # an Embedding has none
                    nn.init.zeros_(m.bias)

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, feats: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        if t > self.max_len:
            raise SpecDecError(f"text of length {t} exceeds the model's {self.max_len} positions")
        pre = self.proj(feats) + self.slot_emb.weight
        x = torch.cat([pre, self.tok_emb(idx) + self.pos_emb(torch.arange(t))], dim=1)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x[:, SLOTS:]))


class CondTarget:
    """:class:`~v22sdk.specdec.sampler.Target` over a frozen :class:`CondLM`; set :attr:`feats`
    (the rows' features) before scoring a batch of contexts."""

    def __init__(self, model: CondLM):
        self.model = model.eval()
        self.vocab_size = model.vocab
        self.feats: torch.Tensor | None = None

    @torch.no_grad()
    def distributions(self, context: torch.Tensor, drafted: torch.Tensor, temperature: float) -> torch.Tensor:
        from v22sdk.specdec.sampler import probs_from_logits

        seq = torch.cat([context, drafted.to(context.dtype)], dim=1)
        logits = self.model(self.feats, seq)
        return probs_from_logits(logits[:, -(drafted.shape[1] + 1) :].double(), temperature)


class CondDraftRunner:
    """:class:`~v22sdk.specdec.sampler.Draft` over a :class:`CondLM` draft; :attr:`feats` as above."""

    def __init__(self, model: CondLM):
        self.model = model.eval()
        self.vocab_size = model.vocab
        self.feats: torch.Tensor | None = None

    @torch.no_grad()
    def begin(self, context: torch.Tensor):
        return context, self.model(self.feats, context)[:, -1]

    def distribution(self, state, temperature: float) -> torch.Tensor:
        from v22sdk.specdec.sampler import probs_from_logits

        return probs_from_logits(state[1].double(), temperature)

    @torch.no_grad()
    def advance(self, state, tokens: torch.Tensor):
        ctx = torch.cat([state[0], tokens.to(state[0].dtype).unsqueeze(1)], dim=1)
        return ctx, self.model(self.feats, ctx)[:, -1]
