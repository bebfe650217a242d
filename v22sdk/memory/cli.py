"""``v22sdk memory ...``: inspect, search, export, import and salvage the memory store.

Import is light: no torch, no engine. ``search`` takes a query file (``.json`` with a
``sent_vec`` list and optional ``attrs`` list, or ``.npy`` with a (256,) or (B, 256) array) or,
when the CLI was built with ``make_memory_group(encode_query=...)``, any input the engine can
encode (the lead wires the engine's encoder there; this package never imports the engine).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
from collections.abc import Callable

import click
import numpy as np

from v22sdk._io import atomic_output
from v22sdk.errors import InputError, V22Error

#: ``encode_query(input) -> (sent_vec, attrs)``; called with ``text=True`` (``search --text``) it
#: must read ``input`` as a text, never as a file name.
EncodeQuery = Callable[..., "tuple[np.ndarray, frozenset[str]]"]


@contextlib.contextmanager
def _errors():
    """Let typed errors through to the entry point; turn OS errors into one-line click errors."""
    try:
        yield
    except (V22Error, BrokenPipeError):
        raise  # the entry point prints it on one line (a closed pipe: quietly) with its exit code
    except OSError as e:
        raise click.ClickException(f"{e.filename or ''}: {e.strerror}".lstrip(": ")) from e


def _same_file(a: str, b: str) -> bool:
    """True when ``a`` is the store ``b`` or one of its companion files (-wal, -shm, -ack)."""
    ra = os.path.realpath(a)
    return any(ra == os.path.realpath(b + suffix) for suffix in ("", "-wal", "-shm", "-journal", "-ack"))


def _open(ctx: click.Context, check: str = "quick"):
    from v22sdk.memory.sqlite_tier import SQLiteTier

    path = ctx.obj["memory"]
    if not os.path.exists(path):
        raise click.ClickException(f"memory store {path} does not exist (nothing written yet)")
    return SQLiteTier(path, check=check)


def load_query_file(path: str) -> tuple[np.ndarray, list[frozenset[str]]]:
    """Query rows (B, 256) float32 and their attribute sets from a .json or .npy file."""
    from v22sdk.decoding import load_npy
    from v22sdk.inputs import check_regular_file

    check_regular_file(path)
    if path.endswith(".npy"):
        arr = load_npy(path)
        attrs_list: list[str] = []
    else:
        try:
            with open(path, encoding="utf-8") as f:
                obj = json.load(f)
        except (OSError, ValueError, RecursionError) as e:
            raise InputError(path, f"not a readable JSON query ({e})") from e
        if not isinstance(obj, dict) or "sent_vec" not in obj:
            raise InputError(path, "expected a JSON object with a 'sent_vec' list (and optional 'attrs')")
        arr, attrs = obj["sent_vec"], obj.get("attrs", [])
        if not isinstance(attrs, list) or not all(isinstance(a, str) for a in attrs):
            raise InputError(path, "'attrs' must be a list of slot names")
        attrs_list = attrs
    try:  # in float64 first: 1e308 is reported, not cast to inf with a numpy warning
        wide = np.atleast_2d(np.asarray(arr, np.float64))
    except (TypeError, ValueError, OverflowError):
        raise InputError(
            path,
            "sent_vec must be 256 finite numbers per row, not "
            f"{type(arr).__name__} {getattr(arr, 'dtype', '')}".rstrip(),
        ) from None
    if wide.ndim != 2 or wide.shape[1] != 256 or not (np.abs(wide) <= np.finfo(np.float32).max).all():
        raise InputError(path, f"sent_vec must be 256 finite numbers per row, got shape {wide.shape}")
    arr = wide.astype(np.float32)
    return arr, [frozenset(attrs_list)] * len(arr)


def _when(t: float | None) -> str:
    """A stored time as local date and time; any stored value is shown (never an error)."""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))
    except (OverflowError, OSError, ValueError, TypeError):
        return f"{t!r} (not a valid time)"


def _age(t: float) -> str:
    s = max(0.0, time.time() - t)
    if not s < 1e12:  # a stored time far in the past (or not a number): no unit makes sense
        return "long ago"
    for unit, n in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= n:
            return f"{s / n:.1f} {unit} ago"
    return f"{s:.0f} s ago"


def salvage_summary(r: dict, dst: str) -> str:
    """One line saying what :func:`~v22sdk.memory.salvage` recovered and what was lost."""
    of = f" of {r['held']}" if r["held"] is not None else ""
    parts = [f"recovered {r['recovered']}{of} turns into {dst}"]
    skipped = r["skipped_ids"]
    if r["lost"]:
        shown = ", ".join(map(str, skipped[:10])) + (", ..." if len(skipped) > 10 else "")
        parts.append(f"{r['lost']} lost" + (f" (ids {shown})" if skipped else ""))
    elif r["held"] is not None:
        parts.append("none lost")
    if r["missing_pages"]:
        parts.append(f"the file is cut short ({r['missing_pages']} of its pages are gone)")
    if r["header"] != "ok":
        parts.append("its header was unreadable and was rebuilt from the known schema")
    if r["damaged_rows"]:
        parts.append(f"{r['damaged_rows']} rows failed their checksum")
    return "; ".join(parts)


def make_memory_group(encode_query: EncodeQuery | None = None) -> click.Group:
    """Build the ``memory`` click group. ``encode_query(input) -> (sent_vec (256,), attrs)`` lets
    ``search`` accept raw inputs (text, image, sound) through the engine."""

    @click.group("memory")
    @click.option(
        "--memory",
        "memory_path",
        type=click.Path(dir_okay=False),
        default=None,
        help="Memory store file (default: the user's data directory, or $V22SDK_MEMORY).",
    )
    @click.pass_context
    def memory(ctx: click.Context, memory_path: str | None) -> None:
        """Inspect and maintain the durable 3-tier memory."""
        from v22sdk.memory.paths import default_memory_path

        ctx.ensure_object(dict)
        ctx.obj["memory"] = memory_path or str(default_memory_path())

    @memory.command()
    @click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
    @click.option(
        "--full",
        is_flag=True,
        help="Verify every row's checksum and run SQLite's full integrity_check "
        "(reads the whole store) instead of the quick structural check.",
    )
    @click.pass_context
    def stats(ctx, as_json: bool, full: bool) -> None:
        """Turn count, time span, size on disk and integrity of the store."""
        from v22sdk.errors import MemoryStoreCorrupt

        with _errors():
            store = _open(ctx, check="none" if full else "quick")
            with store:
                s = store.stats()
                if full:
                    from v22sdk.memory.recovery import full_check

                    r = full_check(store)
                    if r["integrity_check"] != ["ok"]:
                        raise MemoryStoreCorrupt(store.path, "integrity_check: " + "; ".join(r["integrity_check"][:3]))
                    if r["bad_ids"]:
                        shown = ", ".join(map(str, r["bad_ids"][:10])) + (", ..." if len(r["bad_ids"]) > 10 else "")
                        raise MemoryStoreCorrupt(
                            store.path,
                            f"{len(r['bad_ids'])} of {r['rows_checked']} turns fail their checksum (ids {shown})",
                        )
                    s["check"] = f"full: integrity_check ok, {r['rows_checked']} row checksums ok"
                else:  # opening ran it; a failure would have raised
                    s["check"] = "quick: quick_check ok (row checksums not verified; --full verifies them)"
        if as_json:
            click.echo(json.dumps(s, indent=2))
            return
        for k, v in s.items():
            if k.endswith("_time") and v is not None:
                v = _when(v)
            click.echo(f"{k:17} {v}")

    @memory.command()
    @click.argument("query_input")
    @click.option("-k", "--top", "k", default=5, show_default=True, type=click.IntRange(1, 1000))
    @click.option(
        "--index",
        "index",
        type=click.Choice(["exhaustive", "ivf"]),
        default="exhaustive",
        show_default=True,
        help="exhaustive: exact scan of every turn; ivf: approximate candidate index (built "
        "from the store first; needs faiss-cpu) re-ranked by the exact score.",
    )
    @click.option(
        "--text",
        "as_text",
        is_flag=True,
        help="Read QUERY_INPUT as literal text, never as a file name ('-' reads standard input).",
    )
    @click.pass_context
    def search(ctx, query_input: str, k: int, index: str, as_text: bool) -> None:
        """Top-k turns (0.6 cos + 0.4 Jaccard) for QUERY_INPUT over every stored turn."""
        from v22sdk.inputs import STDIN, read_stdin_text
        from v22sdk.memory.scoring import unit_rows

        with _errors():
            if query_input == STDIN and not as_text and encode_query is not None:
                query_input, as_text = read_stdin_text(64 << 20), True
            if not as_text and (query_input.endswith((".json", ".npy")) or encode_query is None):
                vecs, attrs = load_query_file(query_input)
            elif encode_query is None:
                raise InputError(query_input, "text queries need the engine: run 'v22sdk memory search'")
            else:
                vec, aset = encode_query(query_input, text=True) if as_text else encode_query(query_input)
                vecs, attrs = np.asarray(vec, np.float32).reshape(1, -1), [frozenset(aset)]
            store = _open(ctx)
            with store:
                qm = np.stack([store.vocab.mask(a) for a in attrs])
                qc = np.array([len(a) for a in attrs], np.int32)
                from v22sdk.memory.index import make_index

                t0 = time.perf_counter()
                ann = make_index(index)  # None for "exhaustive": an exact scan of the store
                if ann is None:
                    ids, scores = store.search(unit_rows(vecs), qm, qc, k)
                else:
                    ann.build_from(store)
                    click.echo(
                        f"(approximate search: {index} index over {len(ann)} turns, built in "
                        f"{time.perf_counter() - t0:.2f} s)",
                        err=True,
                    )
                    ids, scores = ann.search(unit_rows(vecs), qm, qc, k)
                for row in range(len(vecs)):
                    if len(vecs) > 1:
                        click.echo(f"query {row}:")
                    hits = [(int(i), float(s)) for i, s in zip(ids[row], scores[row]) if i >= 0]
                    if not hits:
                        click.echo("  (memory is empty)")
                    for rank, (i, s) in enumerate(hits, 1):
                        t = store.get(i)
                        what = t.summary or t.digest[:16] or "-"
                        click.echo(
                            f"  {rank}. turn {i}  score {s:.4f}  {_age(t.time)}  "
                            f"[{t.conversation}/{t.modality or '?'}]  {what}"
                        )

    @memory.command("export")
    @click.option("--jsonl", is_flag=True, default=True, help="One JSON record per turn (the format).")
    @click.option(
        "--out",
        type=click.Path(dir_okay=False),
        default=None,
        help="Write to FILE atomically (default: standard output).",
    )
    @click.pass_context
    def export_cmd(ctx, jsonl: bool, out: str | None) -> None:
        """Export every turn as JSONL."""
        from v22sdk.memory.jsonl import export_jsonl

        with _errors():
            store = _open(ctx)
            with store:
                if out is None:  # JSONL is UTF-8 whatever the terminal's encoding
                    sys.stdout.flush()
                    f = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n")
                    try:
                        n = export_jsonl(store, f)
                        f.flush()
                    finally:
                        f.detach()
                else:
                    if _same_file(out, store.path):
                        raise InputError(out, "is the memory store itself; choose another file")
                    with atomic_output(out, "w", encoding="utf-8") as dest:
                        n = export_jsonl(store, dest)
                    click.echo(f"exported {n} turns to {out}", err=True)

    @memory.command("import")
    @click.argument("file", type=click.Path(exists=True, dir_okay=False))
    @click.pass_context
    def import_cmd(ctx, file: str) -> None:
        """Append the turns of FILE.jsonl (validated first; new ids)."""
        from v22sdk.inputs import check_regular_file
        from v22sdk.memory.jsonl import import_jsonl
        from v22sdk.memory.sqlite_tier import SQLiteTier

        with _errors():
            check_regular_file(file)  # a FIFO or /dev/zero would be read for ever
            with SQLiteTier(ctx.obj["memory"]) as store:
                n = import_jsonl(store, file)
        click.echo(f"imported {n} turns into {ctx.obj['memory']}")

    @memory.command("salvage")
    @click.argument("src", type=click.Path(exists=True, dir_okay=False))
    @click.argument("dst", type=click.Path(dir_okay=False))
    def salvage_cmd(src: str, dst: str) -> None:
        """Copy the readable turns of a damaged store SRC into a new store DST (SRC untouched).

        Exit 0 when every turn SRC held was recovered; 5 when some were lost (DST holds the rest).
        """
        from v22sdk.errors import SalvageIncomplete
        from v22sdk.memory.recovery import salvage

        with _errors():
            r = salvage(src, dst)
        click.echo(salvage_summary(r, dst))
        if not r["complete"]:
            raise SalvageIncomplete(src, r)

    return memory


#: The group as registered by default (search reads .json/.npy query files).
memory = make_memory_group()
