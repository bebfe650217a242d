"""The decoding tests use every plugin, the contrib ones included, and the bomb generators here."""

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
_CONTRIB = Path(__file__).resolve().parents[2] / "contrib"
for _pkg, _dist in (
    ("v22sdk_depth", "v22sdk-depth/src"),
    ("v22sdk_imu", "v22sdk-imu/src"),
    ("v22sdk_hello", "v22sdk-hello"),
):
    if importlib.util.find_spec(_pkg) is None:
        sys.path.insert(0, str(_CONTRIB / _dist))
