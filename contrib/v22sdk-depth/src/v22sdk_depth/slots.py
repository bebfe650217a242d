"""The named attribute slots of the depth modality (vision zone, attr 128..144)."""

from __future__ import annotations

from v22sdk import AttributeSchema

#: log10 scaling shared by the distance slots: 1 cm -> -1, 1 m -> 0, 100 m -> +1.
LOG_DEPTH = "log10(depth / 1 m) / 2, clipped to [-1, 1]"

SCHEMA = AttributeSchema.build("vision", [
    ("depth.mean", "mean depth of the valid pixels", LOG_DEPTH),
    ("depth.median", "median depth of the valid pixels", LOG_DEPTH),
    ("depth.p05", "5th percentile of depth (the near end of the scene)", LOG_DEPTH),
    ("depth.p95", "95th percentile of depth (the far end of the scene)", LOG_DEPTH),
    ("depth.spread", "relative spread: std / mean of the valid depths", "x / (1 + x), in [0, 1)"),
    ("depth.planarity", "how well one 3-D plane explains the map (plane fit in inverse depth)",
     "exp(-r / 0.02), r = rms fit residual / mean inverse depth; 1 = exactly planar"),
    ("depth.slant", "angle between the fitted plane's normal and the optical axis",
     "slant / 90°, in [0, 1]; 0 = facing the camera"),
    ("depth.normal_x", "x (right) component of the fitted plane's unit normal, pointing away from the camera",
     "the component itself, in [-1, 1]"),
    ("depth.normal_y", "y (down) component of the fitted plane's unit normal, pointing away from the camera",
     "the component itself, in [-1, 1]"),
    ("depth.convexity", "curvature of inverse depth: > 0 bulges toward the camera (sphere), < 0 a bowl",
     "tanh(k / 4), k = -(w_xx + w_yy) / w_0 of a quadratic fit of inverse depth in ray slopes"),
    ("depth.edge_density", "fraction of neighbouring valid pixel pairs with a depth jump > 5 %",
     "sqrt(fraction), in [0, 1]"),
    ("depth.near_frac", "fraction of valid pixels nearer than near_m (default 1 m)", "fraction in [0, 1]"),
    ("depth.far_frac", "fraction of valid pixels farther than far_m (default 5 m)", "fraction in [0, 1]"),
    ("depth.holes", "fraction of invalid pixels (depth <= 0 or outside [1 µm, 1e9 m]: no measurement)", "fraction in [0, 1]"),
    ("depth.lr_balance", "mean log depth of the left half minus the right half (> 0: left is farther)",
     "tanh(difference in natural-log units)"),
    ("depth.tb_balance", "mean log depth of the top half minus the bottom half (> 0: top is farther)",
     "tanh(difference in natural-log units)"),
    ("depth.valid", "1 when at least one pixel is valid, 0 for a map that is all holes", "0 or 1"),
])
