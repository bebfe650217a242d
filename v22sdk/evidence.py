"""Result files and the documentation tables rendered from them.

Every figure the docs quote comes from a JSON result file committed under ``results/``, written
by the command that measured it. A result file holds what was measured and where it came from:

    {
      "name": "engine-suite-accuracy",
      "provenance": {"command": "...", "commit": "...", "dirty": false, "date": "...",
                     "machine": {...}, "versions": {...}},
      "criterion": {...},            # optional: what was fixed before the run (pre-registration)
      "data": {...},                 # the raw figures, as the script computed them
      "tables": {"accuracy": {"columns": [...], "align": "lrr", "rows": [[...], ...]}},
      "values": {"exact_all": "0.929"},  # optional: single figures that prose quotes
      "values_provenance": {...}     # only when the values were derived later from "data"
    }                                # (add_values: no new measurement; see its docstring)

A doc embeds a table between two markers, and ``python scripts/render_docs.py`` rewrites what
lies between them from the file (``--check`` only reports; ``tests/core/test_evidence.py`` fails
when a doc's table differs from its result file):

    <!-- table: results/engine/suite-accuracy.json#accuracy -->
    | ... rendered table ... |
    <!-- /table -->

A figure quoted in prose is a named value of a result file, marked inline the same way (on one
line; what lies between the markers is rewritten from the file):

    held-out exact match <!-- value: results/engine/default-checkpoint.json#exact_all -->0.929<!-- /value -->

A figure that is a cell of one of the file's tables is quoted by its table, row and column, the
row named by its first cell (or its first cells, ``|``-separated: ``[image|1]``) and the column
by its header, so prose cannot drift from the table:

    <!-- value: results/benchmarks/bench_cold.json#tables.cold[v22sdk --help][CPU median (s)] -->0.089<!-- /value -->

Where a figure was measured is quoted the same way, from the file's provenance: ``#provenance.date``
(the day), ``.commit`` (12 hex digits), ``.command``, ``.loadavg`` (1, 5 and 15 min), ``.cpu``,
``.cores``, ``.torch`` (its version).

Markers inside fenced code blocks (```) are examples, not markers: they are left alone.

The commit a result names is the one its run *started* at. A long run calls :func:`begin` first
(``v22sdk specdec run`` and the ``scripts/`` that write result files do), and
:func:`write_result` records that snapshot: a commit made while the run trains does not pass for
the code it ran. When HEAD (or the tree's dirtiness) changed between the start and the write, the
provenance says so with ``commit_at_write`` / ``dirty_at_write``. Without :func:`begin` the
snapshot is taken at write time, and ``started`` is absent.

Tables and values hold strings formatted by the script that measured them (the script knows the
precision its intervals justify); rendering is plain and the same for every table.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "begin",
    "provenance",
    "write_result",
    "add_values",
    "read_result",
    "markdown_table",
    "render_doc",
    "table_markers",
    "value_markers",
    "ROOT",
]

ROOT = Path(__file__).resolve().parents[1]

_MARKER = re.compile(r"<!-- table: (?P<file>[^#\s]+)#(?P<table>[\w.-]+) -->\n(?P<body>.*?)<!-- /table -->", re.DOTALL)
_VALUE = re.compile(
    r"<!-- value: (?P<file>[^#\s]+)#(?P<value>[\w.-]+(?:\[[^\]\n]+\])*) -->(?P<body>[^\n]*?)<!-- /value -->"
)
_CELL = re.compile(r"tables\.(?P<table>[\w.-]+)\[(?P<row>[^\]\n]+)\]\[(?P<column>[^\]\n]+)\]")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _snapshot() -> dict[str, Any]:
    """The git commit of the working tree now, whether the tree is dirty, and the UTC date."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": _git("rev-parse", "HEAD"), "dirty": bool(status) if status is not None else None, "date": _now()}


_START: dict[str, Any] | None = None


def begin() -> dict[str, Any]:
    """Record the commit and dirtiness the run starts at; :func:`provenance` reports these.

    Call it at the start of a long run, before anything is measured. Calling it again keeps the
    first snapshot (a script may call it in ``main`` and again in a helper)."""
    global _START
    if _START is None:
        _START = _snapshot()
    return dict(_START)


def provenance(command: str | Sequence[str] | None = None) -> dict[str, Any]:
    """Where a result came from: the command, the git commit (and whether the tree was dirty),
    the UTC date, the machine and the versions of the libraries that were loaded.

    The commit and dirtiness are those recorded by :func:`begin` when the run called it (with
    ``started``, its date, and ``commit_at_write`` / ``dirty_at_write`` when they changed since);
    otherwise they are read now."""
    if command is None:
        command = [Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python", *sys.argv[1:]]
        if sys.argv and sys.argv[0].endswith(".py"):
            try:
                command[0] = str(Path(sys.argv[0]).resolve().relative_to(ROOT))
            except ValueError:
                command[0] = sys.argv[0]
            command = ["python", *command]
    cmd = command if isinstance(command, str) else " ".join(str(c) for c in command)
    now = _snapshot()
    start = _START or now
    versions = {"python": platform.python_version()}
    for mod in ("numpy", "torch", "scipy", "sklearn", "cv2", "faiss", "librosa", "hypothesis"):
        m = sys.modules.get(mod)
        if m is not None and getattr(m, "__version__", None):
            versions[mod] = str(m.__version__)
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    moved = {}
    if _START is not None:
        moved["started"] = _START["date"]
        if now["commit"] != _START["commit"]:
            moved["commit_at_write"] = now["commit"]
        if now["dirty"] != _START["dirty"]:
            moved["dirty_at_write"] = now["dirty"]
    return {
        "command": cmd,
        "commit": start["commit"],
        "dirty": start["dirty"],
        "date": now["date"],
        **moved,
        "machine": {
            "cpu": _cpu_model(),
            "cores": os.cpu_count(),
            "system": platform.system(),
            "arch": platform.machine(),
            "loadavg": load,
        },
        "versions": versions,
    }


def _check_table(name: str, table: Mapping[str, Any]) -> None:
    cols = table.get("columns")
    rows = table.get("rows")
    if not isinstance(cols, list) or not cols or not isinstance(rows, list):
        raise ValueError(f"table {name!r} needs 'columns' (a non-empty list) and 'rows' (a list)")
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(cols):
            raise ValueError(f"table {name!r}, row {i}: expected {len(cols)} cells, got {row!r}")
    align = table.get("align")
    if align is not None and (len(align) != len(cols) or set(align) - set("lrc")):
        raise ValueError(f"table {name!r}: 'align' must be one of l/r/c per column, got {align!r}")


def write_result(
    path: str | os.PathLike[str],
    data: Any,
    *,
    tables: Mapping[str, Mapping[str, Any]] | None = None,
    name: str | None = None,
    criterion: Any = None,
    command: str | Sequence[str] | None = None,
    extra: Mapping[str, Any] | None = None,
    values: Mapping[str, str] | None = None,
) -> Path:
    """Write a result file (JSON, UTF-8, keys in a stable order) with its provenance.

    ``values`` are single figures that prose quotes (strings, formatted by the script)."""
    tables = dict(tables or {})
    for tname, table in tables.items():
        _check_table(tname, table)
    values = _checked_values(values)
    path = Path(path)
    doc: dict[str, Any] = {"name": name or path.stem, "provenance": provenance(command)}
    if criterion is not None:
        doc["criterion"] = criterion
    doc.update(extra or {})
    doc["data"] = data
    doc["tables"] = {
        k: {
            "columns": [str(c) for c in t["columns"]],
            **({"align": t["align"]} if t.get("align") else {}),
            "rows": [[_cell(c) for c in row] for row in t["rows"]],
        }
        for k, t in tables.items()
    }
    if values:
        doc["values"] = values
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _checked_values(values: Mapping[str, Any] | None) -> dict[str, str]:
    out = {str(k): _cell(v) for k, v in (values or {}).items()}
    for k, v in out.items():
        if not re.fullmatch(r"[\w.-]+", k) or "\n" in v:
            raise ValueError(f"value {k!r}: names are letters, digits, '_', '.', '-'; values are one line")
    return out


def add_values(
    path: str | os.PathLike[str], values: Mapping[str, str], command: str | Sequence[str] | None = None
) -> Path:
    """Give a committed result file the ``values`` its prose quotes, derived from its own ``data``
    without measuring again.

    The file's ``provenance`` (the run that measured) is kept as it is; ``values_provenance``
    records the command, commit and date that derived the values. Values the file already had
    are replaced; ``data`` and ``tables`` are left alone."""
    path = Path(path)
    doc = read_result(path)
    if "provenance" not in doc or "data" not in doc:
        raise ValueError(f"{path}: not a result file (no provenance or data)")
    checked = _checked_values(values)
    prov = provenance(command)
    out = {k: v for k, v in doc.items() if k not in ("values", "values_provenance")}
    out["values"] = checked
    out["values_provenance"] = {k: prov[k] for k in ("command", "commit", "dirty", "date")}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(out, ensure_ascii=False, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _cell(c: Any) -> str:
    if isinstance(c, float):
        raise ValueError(f"table cells are strings formatted by the measuring script, not floats ({c!r})")
    return str(c)


def read_result(path: str | os.PathLike[str]) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def markdown_table(table: Mapping[str, Any]) -> str:
    """A table of a result file as GitHub Markdown (pipes in cells escaped)."""
    _check_table("?", table)
    cols = [str(c) for c in table["columns"]]
    align = table.get("align") or "l" * len(cols)
    rule = {"l": "---", "r": "---:", "c": ":---:"}

    def line(cells: Iterable[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    out = [line(cols), "|" + "|".join(rule[a] for a in align) + "|"]
    out += [line(r) for r in table["rows"]]
    return "\n".join(out) + "\n"


_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)


def _prose(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into (is prose, piece): fenced code blocks are not prose."""
    out, pos = [], 0
    for m in _FENCE.finditer(text):
        out += [(True, text[pos : m.start()]), (False, m.group(0))]
        pos = m.end()
    return out + [(True, text[pos:])]


def table_markers(text: str) -> list[tuple[str, str]]:
    """The ``(result file, table name)`` pairs a doc embeds, in order (code blocks excluded)."""
    return [(m["file"], m["table"]) for prose, piece in _prose(text) if prose for m in _MARKER.finditer(piece)]


def _provenance_values(prov: Mapping[str, Any]) -> dict[str, str]:
    machine = prov.get("machine") or {}
    load = machine.get("loadavg")
    out = {
        "provenance.date": str(prov.get("date", ""))[:10],
        "provenance.commit": str(prov.get("commit") or "")[:12],
        "provenance.command": str(prov.get("command", "")),
        "provenance.loadavg": " / ".join(f"{x:.1f}" for x in load) if load else "unknown",
        "provenance.cpu": str(machine.get("cpu", "")),
        "provenance.cores": str(machine.get("cores", "")),
        "provenance.torch": str((prov.get("versions") or {}).get("torch", "not loaded")),
    }
    return out


def _table_cell(file: str, doc: Mapping[str, Any], table: str, row: str, column: str) -> str:
    """The cell of ``table`` in the row whose first cell is ``row`` (or whose first cells are the
    ``|``-separated parts of ``row``), under the header ``column``."""
    tables = doc.get("tables", {})
    if table not in tables:
        raise ValueError(f"{file} has no table {table!r} (it has: {', '.join(tables) or 'none'})")
    t = tables[table]
    if column not in t["columns"]:
        raise ValueError(f"{file}, table {table!r}: no column {column!r} (it has: {', '.join(t['columns'])})")
    rows = [r for r in t["rows"] if r and r[0] == row]
    if not rows and "|" in row:  # several leading cells: "image|1" is the row starting image, 1
        key = row.split("|")
        rows = [r for r in t["rows"] if r[: len(key)] == key]
    if len(rows) != 1:
        have = "; ".join(r[0] for r in t["rows"] if r)
        raise ValueError(f"{file}, table {table!r}: {'no' if not rows else 'more than one'} row {row!r} (rows: {have})")
    return str(rows[0][t["columns"].index(column)])


def value_markers(text: str) -> list[tuple[str, str]]:
    """The ``(result file, value name)`` pairs a doc quotes inline, in order (code blocks excluded)."""
    return [(m["file"], m["value"]) for prose, piece in _prose(text) if prose for m in _VALUE.finditer(piece)]


def render_doc(text: str, root: str | os.PathLike[str] = ROOT) -> str:
    """``text`` with every marked table and value rewritten from its result file (paths relative
    to ``root``).

    A marker naming a missing file, table or value raises ``ValueError`` naming it."""
    root = Path(root)
    cache: dict[Path, dict[str, Any]] = {}

    def load(name: str, kind: str) -> dict[str, Any]:
        f = root / name
        if f not in cache:
            if not f.is_file():
                raise ValueError(f"{kind} marker names {name}, which does not exist")
            cache[f] = read_result(f)
        return cache[f]

    def sub(m: re.Match[str]) -> str:
        tables = load(m["file"], "table").get("tables", {})
        if m["table"] not in tables:
            raise ValueError(f"{m['file']} has no table {m['table']!r} (it has: {', '.join(tables) or 'none'})")
        return f"<!-- table: {m['file']}#{m['table']} -->\n{markdown_table(tables[m['table']])}<!-- /table -->"

    def sub_value(m: re.Match[str]) -> str:
        doc = load(m["file"], "value")
        cell = _CELL.fullmatch(m["value"])
        if cell:
            return f"<!-- value: {m['file']}#{m['value']} -->{_table_cell(m['file'], doc, **cell.groupdict())}<!-- /value -->"
        values = dict(doc.get("values", {}))
        values.update(_provenance_values(doc.get("provenance", {})))
        if m["value"] not in values:
            raise ValueError(f"{m['file']} has no value {m['value']!r} (it has: {', '.join(values) or 'none'})")
        return f"<!-- value: {m['file']}#{m['value']} -->{values[m['value']]}<!-- /value -->"

    def render_prose(piece: str) -> str:
        for m in re.finditer(r"<!-- (?:table|value): ", piece):
            if not (_MARKER.match(piece, m.start()) or _VALUE.match(piece, m.start())):
                # left as it is, such a marker would keep a hand-written figure that no file backs
                line = piece[m.start() :].split("\n", 1)[0]
                raise ValueError(f"a marker does not parse (a space in its name, or no closing marker?): {line[:160]}")
        return _VALUE.sub(sub_value, _MARKER.sub(sub, piece))

    return "".join(render_prose(piece) if prose else piece for prose, piece in _prose(text))
