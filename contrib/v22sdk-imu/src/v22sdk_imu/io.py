"""Reading an IMU CSV file into a :class:`~v22sdk.Sample` of (T, 6) plus its ``sample_rate``.

Format (comma-separated, UTF-8)::

    # sample_rate=100
    # accel_unit=m/s2        (optional: m/s2 (default) or g)
    # gyro_unit=rad/s        (optional: rad/s (default) or deg/s)
    ax,ay,az,gx,gy,gz
    0.01,-0.02,9.81,0.001,0.0,-0.002
    ...

* Comment lines start with ``#``; ``key=value`` pairs in them are read as metadata.
* The header names the six axes, in any order; accepted spellings per axis: ``ax``, ``acc_x``,
  ``accel_x``, ``accx`` (likewise y, z) and ``gx``, ``gyro_x``, ``gyr_x``, ``gyrox``. Other
  columns are ignored, except a time column.
* The sample rate comes from ``# sample_rate=HZ`` or from a time column named ``t``, ``time``
  or ``timestamp`` (seconds; ``time_ms``/``timestamp_ms`` in milliseconds): the rate is
  1 / median interval, and the intervals must be uniform within 10 % (resample first otherwise).
  When both are given they must agree within 1 %.

Every problem raises :class:`~v22sdk.InputError` (or :class:`~v22sdk.UnitsError`) naming the file
and, for bad values, the line.

Memory is bounded before the values are parsed: the file's lines are counted first (in 1 MiB
chunks), and the rows they can hold, at ``8 x columns`` bytes parsed plus ``BYTES_PER_SAMPLE``
for the features, must fit the decode budget (:mod:`v22sdk.decoding`, 512 MiB by default). The
values are parsed line by line into one flat float64 buffer, never into Python lists of rows.
"""

from __future__ import annotations

import csv
import os
from array import array

import numpy as np

from v22sdk import InputError, Sample, UnitsError
from v22sdk.decoding import check_budget, check_regular_file

from .slots import G

#: Peak bytes per sample (row) of the IMU features, measured at 432 on 0.1-1 M samples.
BYTES_PER_SAMPLE = 480
BASE_BYTES = 32 << 20

_AXES = {
    "ax": ("ax", "acc_x", "accel_x", "accx"), "ay": ("ay", "acc_y", "accel_y", "accy"),
    "az": ("az", "acc_z", "accel_z", "accz"), "gx": ("gx", "gyro_x", "gyr_x", "gyrox"),
    "gy": ("gy", "gyro_y", "gyr_y", "gyroy"), "gz": ("gz", "gyro_z", "gyr_z", "gyroz"),
}
_TIME = {"t": 1.0, "time": 1.0, "timestamp": 1.0, "time_ms": 1e-3, "timestamp_ms": 1e-3}
_ACCEL_UNITS = {"m/s2": 1.0, "m/s^2": 1.0, "g": G}
_GYRO_UNITS = {"rad/s": 1.0, "deg/s": np.pi / 180.0}


def _count_lines(path: str) -> int:
    n, last = 0, b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


def load_csv(path: str | os.PathLike[str]) -> Sample:
    src = str(path)
    check_regular_file(src)  # a FIFO would block, /dev/zero never end
    try:
        lines_in_file = _count_lines(src)
        return _parse(src, lines_in_file)
    except UnicodeDecodeError as exc:
        raise InputError(src, f"cannot read the CSV file: {exc}") from None
    except OSError as exc:
        raise InputError(src, f"cannot read the CSV file: {exc.strerror or exc}") from None


def _parse(src: str, lines_in_file: int) -> Sample:
    meta: dict[str, str] = {}
    header: list[str] | None = None
    values = array("d")        # every parsed value, row after row
    numbers = array("q")       # the line number of each row, for messages
    with open(src, encoding="utf-8", newline="") as fh:
        for number, line in enumerate(fh, start=1):
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith("#"):
                for part in stripped.lstrip("#").replace(";", ",").split(","):
                    if "=" in part:
                        key, value = part.split("=", 1)
                        meta[key.strip().lower()] = value.strip()
                continue
            if header is None:
                header = [h.strip().lower() for h in next(csv.reader([stripped]))]
                check_budget(src, BASE_BYTES + lines_in_file * (8 * len(header) + BYTES_PER_SAMPLE),
                             f"a CSV of up to {lines_in_file:,} rows of {len(header)} columns, which")
                continue
            fields = next(csv.reader([stripped]))
            if len(fields) != len(header):
                raise InputError(src, f"line {number} has {len(fields)} fields, the header has {len(header)}")
            try:
                values.extend(float(f) for f in fields)
            except ValueError:
                raise InputError(src, f"line {number} holds a value that is not a number: {stripped[:80]!r}") from None
            numbers.append(number)
    if header is None:
        raise InputError(src, "no header line and no data")
    columns = []
    for axis, spellings in _AXES.items():
        found = [i for i, h in enumerate(header) if h in spellings]
        if len(found) != 1:
            raise InputError(src, f"the header must name axis {axis!r} exactly once (spellings: "
                                  f"{', '.join(spellings)}); header is {','.join(header)}")
        columns.append(found[0])
    time_cols = [(i, _TIME[h]) for i, h in enumerate(header) if h in _TIME]
    if not numbers:
        raise InputError(src, "the CSV has a header but no samples")
    table = np.frombuffer(values, dtype=np.float64).reshape(len(numbers), len(header))
    if not np.isfinite(table).all():
        bad = int(np.argmax(~np.isfinite(table).all(axis=1)))
        raise InputError(src, f"line {numbers[bad]} holds NaN or infinite values")
    data = table[:, columns]
    accel = meta.get("accel_unit", "m/s2").lower()
    gyro = meta.get("gyro_unit", "rad/s").lower()
    if accel not in _ACCEL_UNITS or gyro not in _GYRO_UNITS:
        raise UnitsError(src, f"accel_unit must be one of {', '.join(_ACCEL_UNITS)} and gyro_unit one of "
                              f"{', '.join(_GYRO_UNITS)}; got {accel!r}, {gyro!r}")
    data[:, :3] *= _ACCEL_UNITS[accel]
    data[:, 3:] *= _GYRO_UNITS[gyro]
    rate = _sample_rate(src, meta, table[:, time_cols[0][0]] * time_cols[0][1] if time_cols else None)
    return Sample(data, {"sample_rate": rate}, src)


def _sample_rate(src: str, meta: dict[str, str], time: np.ndarray | None) -> float:
    declared = None
    if "sample_rate" in meta:
        try:
            declared = float(meta["sample_rate"])
        except ValueError:
            raise UnitsError(src, f"sample_rate={meta['sample_rate']!r} is not a number") from None
    measured = None
    if time is not None and time.size >= 2:
        dt = np.diff(time)
        if (dt <= 0).any():
            raise InputError(src, "the time column must increase strictly")
        step = float(np.median(dt))
        if np.abs(dt - step).max() > 0.1 * step:
            raise InputError(src, "the time column is not uniformly sampled (intervals vary > 10 %); resample first")
        measured = 1.0 / step
    if declared is not None and measured is not None and abs(declared - measured) > 0.01 * declared:
        raise UnitsError(src, f"sample_rate={declared:g} Hz disagrees with the time column ({measured:.4g} Hz)")
    rate = declared if declared is not None else measured
    if rate is None:
        raise UnitsError(src, "no sample rate: add a '# sample_rate=HZ' line or a time column (t, time, timestamp)")
    return rate
