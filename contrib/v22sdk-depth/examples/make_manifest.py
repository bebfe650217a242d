"""Write a small training set of 16-bit depth PNGs (balls, walls, steps) and its JSONL manifest.

    python examples/make_manifest.py data/depth     # then: v22sdk train --manifest data/depth/manifest.jsonl
"""

import json
import sys
from pathlib import Path

import cv2
import numpy as np
from v22sdk_depth import synthetic

out = Path(sys.argv[1] if len(sys.argv) > 1 else "depth-data")
out.mkdir(parents=True, exist_ok=True)
rows = []
for i in range(20):
    scenes = {
        "ball": synthetic.sphere(48, 64, centre_m=2.5 + 0.1 * i, radius_m=1.0, background_m=5.0),
        "wall": synthetic.plane(48, 64, normal=(0.05 * (i - 10), 0.02 * i, 1.0), distance=1.5 + 0.1 * i),
        "step": synthetic.step(48, 64, near_m=1.0 + 0.05 * i, far_m=3.0),
    }
    for label, depth_m in scenes.items():
        name = f"{label}{i:02d}.png"
        cv2.imwrite(str(out / name), np.clip(depth_m * 1000, 0, 65535).astype(np.uint16))  # millimetres
        rows.append({"input": name, "modality": "depth", "target": label})
(out / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
print(f"wrote {len(rows)} depth maps and {out / 'manifest.jsonl'}")
