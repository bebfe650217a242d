"""Engine configuration: one small dataclass, two presets (no torch import here).

``full`` has upstream's dimensions (spec §5.2); ``small`` trains in minutes on two CPU cores.
Every switch the design asks to measure lives here: spherical normalisation of the injected
representations, the additive injection gain, the gate variant and each auxiliary loss.
A config round-trips through :meth:`EngineConfig.to_dict` / :meth:`EngineConfig.from_dict`
(plain JSON types), which is how checkpoints store it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import CheckpointError, InputError

#: the presets :func:`preset` knows
PRESETS = ("full", "small", "tiny")

#: integer fields and their smallest allowed value (sizes, counts, the batch, the epochs)
_MIN_INT = {
    "max_len": 1,
    "out_positions": 2,
    "p7_heads": 1,
    "p7_head_dim": 1,
    "p7_groups": 1,
    "p3l_max_active": 1,
    "p3l_feat": 1,
    "abc_hidden": 1,
    "a_hidden": 1,
    "a_classes": 1,
    "b_hidden": 1,
    "c_hidden": 1,
    "c_dim": 1,
    "d_relations": 1,
    "gate_hidden": 1,
    "p6_hidden": 1,
    "memory_capacity": 1,
    "base_layers": 1,
    "base_heads": 1,
    "base_ff": 1,
    "batch_size": 1,
    "epochs": 1,
    "seed": 0,
}
#: seeds go to numpy's and torch's generators: non-negative and below 2**63
_MAX_SEED = 2**63 - 1
#: float fields: finite, and either ≥ 0 or > 0
_NON_NEGATIVE = ("inject_gain", "abc_init_gain", "w_a", "w_b", "w_c", "w_d", "clip_grad", "stop_loss")
_POSITIVE = ("lr", "spike_floor")
_BOOLS = ("spherical", "loss_a", "loss_b", "loss_c", "loss_d", "memory")


class ConfigError(InputError):
    """An engine config field has a value the engine cannot use. ``field`` names it; a
    :class:`~v22sdk.errors.InputError` (so also a ``ValueError``): the CLI names the option that
    set it, a checkpoint's loader turns it into a :class:`~v22sdk.errors.CheckpointError`."""

    def __init__(self, field: str, problem: str):
        self.field = field
        super().__init__("engine config", problem)


#: upstream's P3-L head counts: 23 language groups (312 heads) + 6 vision groups (104 heads).
UPSTREAM_P3L_GROUPS = (
    24,
    24,
    20,
    16,
    12,
    16,
    16,
    8,
    16,
    16,
    16,
    16,
    8,
    8,
    12,
    12,
    8,
    12,
    12,
    12,
    8,
    8,
    12,
    16,
    16,
    16,
    12,
    12,
    32,
)

#: per-stage learning-rate multipliers of upstream's code (spec §7.2).
UPSTREAM_LR_MULT = {
    "input": 1.0,
    "p7": 0.05,
    "p6": 1.0,
    "p3l": 0.8,
    "abc": 3.0,
    "gate": 5.0,
    "abc_prime": 0.5,
    "baseline": 1.0,
}


@dataclass
class EngineConfig:
    """Sizes, switches and the training recipe of one engine.

    Dimensions fixed by the token contract and the memory interface are not configurable:
    tokens are 640-D, the model width and ``sent_vec`` are 256-D, B's content vector and the
    memory embedding are 384-D.
    """

    engine: str = "v22"
    preset: str = "small"
    # -- sizes ---------------------------------------------------------------------------
    max_len: int = 128  # input tokens per sample (longer inputs are truncated)
    out_positions: int = 16  # P6 output positions (target chars + <eos>)
    p7_heads: int = 16
    p7_head_dim: int = 16
    p7_groups: int = 4  # group competition: p7_heads / p7_groups heads per group
    p3l_groups: tuple[int, ...] = (8, 8, 8, 8)
    p3l_max_active: int = 48  # active attribute ids per sample kept for P3-L (largest |value|)
    p3l_feat: int = 128  # width of the P3-L feature p3lf
    abc_hidden: int = 192  # ABC' hidden width
    a_hidden: int = 256
    a_classes: int = 20
    b_hidden: int = 256
    c_hidden: int = 96
    c_dim: int = 48
    d_relations: int = 11
    gate_hidden: int = 512
    p6_hidden: int = 256
    memory_capacity: int = 256  # fifo backend entries
    # baseline engine
    base_layers: int = 2
    base_heads: int = 4
    base_ff: int = 512
    # -- switches ------------------------------------------------------------------------
    spherical: bool = True  # unit-normalise rd, me and the recalled prior before injection
    inject_gain: float = 0.1  # additive injection gain of ABC' and E into sent_vec / p3lf
    abc_init_gain: float = 0.01  # near-zero xavier gain of ABC' (upstream)
    gate: str = "vmf"  # "sigmoid" (original TurboMeta) or "vmf" (V22.1)
    loss_a: bool = True
    loss_b: bool = True
    loss_c: bool = True
    loss_d: bool = True
    memory: bool = True  # stage E reads/writes its memory
    memory_backend: str = "fifo"
    # -- training recipe -----------------------------------------------------------------
    lr: float = 3e-3
    lr_mult: dict[str, float] = field(default_factory=lambda: dict(UPSTREAM_LR_MULT))
    w_a: float = 1.0
    w_b: float = 1.0
    w_c: float = 1.0
    w_d: float = 0.01  # upstream's fixed cold-start weight of L_D
    batch_size: int = 32
    epochs: int = 200
    clip_grad: float = 5.0  # 0 disables (upstream had none)
    stop_loss: float = 1e-4  # auto-stop when an epoch's mean loss falls below
    spike_floor: float = 5.0  # CE spike: CE > max(3·EMA, spike_floor)
    seed: int = 0

    def __post_init__(self) -> None:
        self.check()

    # -- (de)serialisation ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["p3l_groups"] = list(self.p3l_groups)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EngineConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise CheckpointError(f"engine config has unknown field(s) {', '.join(unknown)}")
        try:
            return cls(**data)
        except ConfigError as exc:
            raise CheckpointError(f"checkpoint's engine config: {exc.problem}") from None

    def replace(self, **changes: Any) -> EngineConfig:
        return dataclasses.replace(self, **changes)

    @property
    def model_dim(self) -> int:
        return 256

    def check(self) -> EngineConfig:
        """Raise :class:`ConfigError` (a ``ValueError``) on a value out of range or inconsistent
        sizes; run on every construction (``__post_init__``), so no config the engine cannot use
        exists. Returns ``self``."""

        def bad(name: str, problem: str) -> ConfigError:
            return ConfigError(name, f"{name} {problem}, not {getattr(self, name)!r}")

        for name in ("engine", "memory_backend"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise bad(name, "must be a non-empty name")
        if self.preset not in PRESETS:
            raise bad("preset", f"must be one of {', '.join(PRESETS)}")
        for name, low in _MIN_INT.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise bad(name, "must be an integer ≥ 1" if low == 1 else f"must be an integer ≥ {low}")
        if self.seed > _MAX_SEED:
            raise bad("seed", "must be below 2**63")
        for name in _NON_NEGATIVE + _POSITIVE:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise bad(name, "must be a finite number")
            if v < 0 or (v == 0 and name in _POSITIVE):
                raise bad(name, "must be > 0" if name in _POSITIVE else "must be ≥ 0")
        for name in _BOOLS:
            if not isinstance(getattr(self, name), bool):
                raise bad(name, "must be true or false")
        groups = self.p3l_groups
        if (
            not isinstance(groups, (tuple, list))
            or not groups
            or any(isinstance(g, bool) or not isinstance(g, int) or g < 1 for g in groups)
        ):
            raise bad("p3l_groups", "must be a non-empty list of integers ≥ 1")
        self.p3l_groups = tuple(groups)  # a list from JSON or --set: one canonical form
        mult = self.lr_mult
        if not isinstance(mult, dict) or any(
            not isinstance(k, str)
            or isinstance(v, bool)
            or not isinstance(v, (int, float))
            or not math.isfinite(v)
            or v < 0
            for k, v in mult.items()
        ):
            raise bad("lr_mult", "must map stage names to finite numbers ≥ 0")
        if self.gate not in ("sigmoid", "vmf"):
            raise bad("gate", "must be 'sigmoid' or 'vmf'")
        if self.p7_heads * self.p7_head_dim != 256:
            raise ConfigError(
                "p7_heads", f"p7_heads × p7_head_dim must be 256, not {self.p7_heads} × {self.p7_head_dim}"
            )
        if self.p7_heads % self.p7_groups:
            raise ConfigError(
                "p7_groups", f"p7_heads ({self.p7_heads}) must be a multiple of p7_groups ({self.p7_groups})"
            )
        if 3 * len(self.p3l_groups) > self.p3l_feat:
            raise ConfigError(
                "p3l_feat",
                f"3 × number of P3-L groups ({3 * len(self.p3l_groups)}) must fit in p3l_feat ({self.p3l_feat})",
            )
        if 256 % self.base_heads:
            raise bad("base_heads", "must divide the model width 256")
        return self


def preset(name: str, **overrides: Any) -> EngineConfig:
    """The ``full`` or ``small`` preset (``tiny`` is for tests), with overrides applied."""
    if name == "full":
        cfg = EngineConfig(
            preset="full",
            max_len=128,
            out_positions=128,
            p3l_groups=UPSTREAM_P3L_GROUPS,
            p3l_max_active=64,
            abc_hidden=192,
            a_hidden=256,
            b_hidden=256,
            c_hidden=96,
            gate_hidden=512,
            p6_hidden=256,
            memory_capacity=2000,
        )
    elif name == "small":
        cfg = EngineConfig(
            preset="small",
            max_len=64,
            out_positions=12,
            p3l_groups=(8, 8, 8, 8),
            p3l_max_active=32,
            abc_hidden=96,
            a_hidden=128,
            b_hidden=128,
            c_hidden=64,
            gate_hidden=256,
            p6_hidden=256,
            memory_capacity=256,
            batch_size=16,
        )
    elif name == "tiny":
        cfg = EngineConfig(
            preset="tiny",
            max_len=16,
            out_positions=6,
            p3l_groups=(4, 4),
            p3l_max_active=8,
            abc_hidden=32,
            a_hidden=32,
            b_hidden=32,
            c_hidden=32,
            gate_hidden=64,
            p6_hidden=64,
            memory_capacity=32,
            base_layers=1,
            base_ff=64,
            batch_size=8,
            epochs=5,
        )
    else:
        raise ConfigError("preset", f"preset {name!r} is unknown; presets are {', '.join(PRESETS)}")
    return cfg.replace(**overrides).check()


#: config fields with an option of their own: ``--set`` refuses them and names the option
OWN_OPTION = {"engine": "--engine NAME", "preset": "--preset NAME", "seed": "--seed N", "epochs": "--epochs N"}


def set_overrides(pairs: tuple[str, ...]) -> dict:
    """``--set key=value`` pairs, typed after the EngineConfig field they name."""
    return parse_sets(pairs)[0]


def parse_sets(pairs: tuple[str, ...]) -> tuple[dict, dict]:
    """The ``--set`` values by field, and for error messages the ``--set`` text that gave each."""
    fields = {f.name: f for f in dataclasses.fields(EngineConfig)}
    out: dict = {}
    given: dict = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or key not in fields:
            settable = sorted(set(fields) - set(OWN_OPTION))
            raise InputError(f"--set {pair}", f"expected KEY=VALUE with KEY one of {', '.join(settable)}")
        if key in OWN_OPTION:
            raise InputError(f"--set {pair}", f"{key} has its own option: use {OWN_OPTION[key]}")
        default = getattr(EngineConfig(), key)
        value: Any
        try:
            if isinstance(default, bool):
                if raw.lower() not in ("1", "0", "true", "false", "on", "off", "yes", "no"):
                    raise ValueError(raw)
                value = raw.lower() in ("1", "true", "on", "yes")
            elif isinstance(default, (int, float, str)):
                value = type(default)(raw)
            else:
                value = json.loads(raw)
        except (ValueError, json.JSONDecodeError):
            raise InputError(f"--set {pair}", f"{raw!r} is not a valid {type(default).__name__}") from None
        out[key] = value
        given[key] = f"--set {pair}"
    return out, given
