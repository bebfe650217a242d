"""Write a small training set of IMU CSV recordings (still, walking, turning) and its JSONL manifest.

    python examples/make_manifest.py data/imu     # then: v22sdk train --manifest data/imu/manifest.jsonl
"""

import json
import sys
from pathlib import Path

import numpy as np
from v22sdk_imu import synthetic

out = Path(sys.argv[1] if len(sys.argv) > 1 else "imu-data")
out.mkdir(parents=True, exist_ok=True)
rows = []
for i in range(20):
    recordings = {
        "still": synthetic.still(6.0, 100.0, seed=i),
        "walking": synthetic.walking(6.0, 100.0, cadence_spm=95 + 3 * i, seed=i),
        "turning": synthetic.turning(6.0, 100.0, degrees_per_second=20 + 4 * i, seed=i),
    }
    for label, (signal, rate) in recordings.items():
        name = f"{label}{i:02d}.csv"
        with open(out / name, "w") as fh:
            fh.write(f"# sample_rate={rate:g}\nax,ay,az,gx,gy,gz\n")
            np.savetxt(fh, signal, delimiter=",", fmt="%.6f")
        rows.append({"input": name, "modality": "imu", "target": label})
(out / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
print(f"wrote {len(rows)} recordings and {out / 'manifest.jsonl'}")
