"""Make the contrib packages importable from a fresh clone even before they are pip-installed."""

import importlib.util
import sys
from pathlib import Path

_CONTRIB = Path(__file__).resolve().parents[2] / "contrib"
for _pkg, _dist in (("v22sdk_depth", "v22sdk-depth"), ("v22sdk_imu", "v22sdk-imu")):
    if importlib.util.find_spec(_pkg) is None:
        sys.path.insert(0, str(_CONTRIB / _dist / "src"))
