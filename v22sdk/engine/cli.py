"""``v22sdk train``, ``v22sdk eval`` and ``v22sdk run`` (plain click commands; the main group adds them).

Torch and the engine are imported inside the command bodies, so ``v22sdk --help`` stays fast.
Errors are :class:`~v22sdk.errors.V22Error` subclasses; the main CLI prints them as one line.
"""

from __future__ import annotations

import json
import sys

import click

from .._startup import loading
from ..errors import InputError
from .config import parse_sets  # no torch; scale.ddp's ranks parse --set the same way


def build_config(preset_name: str, engine: str, seed: int, epochs: int | None, sets: tuple[str, ...]):
    """The EngineConfig ``train`` would use; a bad value is an InputError naming the option that set it."""
    from .config import ConfigError, preset

    changes, given = parse_sets(sets)
    given.update(seed="--seed", engine="--engine", preset="--preset")
    if epochs is not None:
        changes["epochs"] = epochs
        given["epochs"] = "--epochs"
    try:
        return preset(preset_name, engine=engine, seed=seed, **changes)
    except ConfigError as exc:
        # the option that set the field, else every override (a clash between fields), else the preset
        source = given.get(exc.field) or " ".join(given[k] for k in changes) or f"--preset {preset_name}"
        raise InputError(source, exc.problem) from None


#: suffixes ``--plot`` writes (matplotlib's own backends, no extra dependency)
PLOT_SUFFIXES = (".png", ".pdf", ".svg")


def _check_outputs(out: str, log_path: str | None, plot: str | None, data: str | None = None) -> None:
    """Every path ``train`` will write, checked before any work (InputError naming the option):
    a folder, a missing folder, two outputs on one file, or an output over the data itself."""
    import os
    from pathlib import Path

    from .._io import check_output_path

    named = {"--out": out, "--log": log_path, "--plot": plot}
    seen: dict = {Path(os.path.realpath(data)): "DATA"} if data else {}
    for option, path in named.items():
        if not path:
            continue
        try:
            target = check_output_path(path)
        except InputError as exc:
            raise InputError(f"{option} {path}", exc.problem) from None
        if target in seen:
            raise InputError(f"{option} {path}", f"is also {seen[target]}; give each output its own file")
        seen[target] = option
    if plot and Path(plot).suffix.lower() not in PLOT_SUFFIXES:
        raise InputError(
            f"--plot {plot}", f"the file name must end in {', '.join(PLOT_SUFFIXES)} (the format is taken from it)"
        )


def _threads(n: int) -> None:
    import torch

    if n > 0:
        torch.set_num_threads(n)


#: symbols that set the thread count of the OpenBLAS builds numpy and scipy ship
_OPENBLAS_SETTERS = (
    "scipy_openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads",
    "openblas_set_num_threads",
    "openblas_set_num_threads64_",
)


def _one_thread() -> None:
    """Every thread pool to one thread, before anything heavy runs (``v22sdk run``: one small input).

    On a shared machine idle-spinning BLAS threads are ruinous: a tokenizer's one-off 768×256 QR
    took 0.05–3.1 s with numpy's default two OpenBLAS threads and 12–19 ms with one. Libraries loaded
    from now on (scipy's OpenBLAS, OpenCV, OpenMP) read the environment; numpy's OpenBLAS is
    already loaded (``v22sdk`` imports numpy), so it is told directly.
    """
    import os

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENCV_FOR_THREADS_NUM"):
        os.environ[var] = "1"
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # threadpoolctl is optional: on Linux, find the loaded OpenBLAS ourselves
        _openblas_one_thread()
    import torch

    torch.set_num_threads(1)


def _openblas_one_thread() -> None:
    """Set every OpenBLAS loaded in this process to one thread (Linux; without threadpoolctl).

    The loaded libraries are read from ``/proc/self/maps`` (the path is the sixth field and may hold
    spaces); any mapped library with "blas" in its path that exports an OpenBLAS setter is told,
    whatever it is called (numpy's and scipy's ``scipy_openblas``, a wheel's ``libopenblaso``,
    Debian's ``openblas-pthread/libblas.so.3``). ``RTLD_NOLOAD`` makes sure nothing new is loaded.
    """
    import ctypes
    import os

    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            paths = {fields[5].strip() for fields in (line.split(maxsplit=5) for line in fh) if len(fields) == 6}
    except OSError:
        return
    mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LOCAL", 0)
    for path in sorted(p for p in paths if p.startswith("/") and ".so" in p and "blas" in p.lower()):
        try:
            lib = ctypes.CDLL(path, mode=mode)
        except OSError:
            continue
        for name in _OPENBLAS_SETTERS:
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(1)
                break


def _fraction(ctx, param, value):
    """A split fraction: finite, in [0, 1) (click's FloatRange lets NaN through)."""
    import math

    if value is not None and (not math.isfinite(value) or not 0 <= value < 1):
        raise click.BadParameter(f"must be a number in [0, 1), not {value}")
    return value


#: the main group's help options, set here too: click caches a command's help option, so a command
#: first invoked on its own (tests, ``python -m``) would otherwise lose ``-h`` in the group's help
_CONTEXT = {"help_option_names": ["-h", "--help"]}


@click.command("train", context_settings=_CONTEXT)
@click.argument("data", type=click.Path(exists=True))
@click.option("--engine", default="v22", show_default=True, help="engine name (see 'v22sdk plugins list')")
@click.option(
    "--preset", "preset_name", default="small", show_default=True, type=click.Choice(["small", "full", "tiny"])
)
@click.option("--epochs", type=click.IntRange(min=1), default=None, help="maximum epochs (auto-stop may end sooner)")
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    default=None,
    help="use N examples drawn with the seed (upstream's --sample)",
)
@click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1), default=0, show_default=True)
@click.option(
    "--modality",
    default=None,
    help="modality of the files in a folder data set and of manifest lines without one "
    "(default: from each file's extension)",
)
@click.option("--out", "-o", default="v22.pt", show_default=True, type=click.Path(), help="checkpoint to write")
@click.option("--log", "log_path", default=None, type=click.Path(), help="metrics log (JSONL, one line per epoch)")
@click.option("--plot", default=None, type=click.Path(), help="write the loss curves (.png, .pdf or .svg)")
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="override a config field (repeatable; engine, preset, seed and epochs have their own options)",
)
@click.option("--val-frac", default=0.1, show_default=True, callback=_fraction, help="fraction held out for validation")
@click.option("--test-frac", default=0.1, show_default=True, callback=_fraction, help="fraction held out for test")
@click.option(
    "--threads", default=1, show_default=True, type=click.IntRange(min=0), help="torch threads (0: torch's default)"
)
@click.option("--progress/--no-progress", default=True, show_default=True)
@click.option(
    "--nproc",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="processes: N > 1 trains data-parallel through torch.distributed (gloo), rank 0 writes the checkpoint",
)
def train(
    data,
    engine,
    preset_name,
    epochs,
    sample,
    seed,
    modality,
    out,
    log_path,
    plot,
    sets,
    val_frac,
    test_frac,
    threads,
    progress,
    nproc,
):
    """Train an engine on DATA (a .jsonl manifest, a .tsv of text pairs, or a folder of label-named folders)."""
    # Everything is checked before any work: a bad value must not surface after training.
    from ..plugins import get_registry

    if val_frac + test_frac >= 1:
        raise InputError(
            f"--val-frac {val_frac} --test-frac {test_frac}",
            "together they must leave part of the data for training (sum < 1)",
        )
    _check_outputs(out, log_path, plot, data)
    if plot:
        import importlib.util

        if importlib.util.find_spec("matplotlib") is None:  # say so before training, not after
            raise click.UsageError("--plot needs matplotlib: pip install 'v22sdk[plot]'")
    registry = get_registry()
    registry.get_class("engines", engine)  # unknown engine → UnknownNameError naming the installed ones
    if modality is not None:
        registry.get_class("modalities", modality)  # likewise for the modality
    cfg = build_config(preset_name, engine, seed, epochs, sets)
    if cfg.memory and cfg.memory_backend != "fifo" and engine == "v22":
        registry.get_class("memory_backends", cfg.memory_backend)
    if nproc > 1:
        if plot:
            raise click.UsageError("--plot is not available with --nproc > 1 (use --log and plot the JSONL)")
        if modality:
            raise click.UsageError(
                "--modality is not available with --nproc > 1 (give each manifest line its modality)"
            )
        from ..scale.cli import dispatch_train

        dispatch_train(
            nproc,
            data,
            out=out,
            engine=engine,
            preset_name=preset_name,
            epochs=epochs,
            sample=sample,
            seed=seed,
            sets=sets,
            val_frac=val_frac,
            test_frac=test_frac,
            log_path=log_path,
            threads=threads,
        )
        return
    from rich.console import Console
    from rich.table import Table

    from .pipeline import metrics_table, train_engine, write_plot

    _threads(threads)
    result = train_engine(
        data,
        cfg,
        out,
        sample=sample,
        val_frac=val_frac,
        test_frac=test_frac,
        log_path=log_path,
        progress=progress and sys.stderr.isatty(),
        modality=modality,
    )
    m = result["metrics"]
    console = Console(stderr=False)
    loss = "n/a" if m["final_loss"] is None else f"{m['final_loss']:.4g}"
    table = Table(
        title=f"{engine} ({preset_name}), {m['parameters']:,} parameters, {m['epochs']} epochs, final loss {loss}"
    )
    for col in ("split", "modality", "exact match", "char accuracy", "n"):
        table.add_column(col)
    for split, mod, exact, char, n in metrics_table(m):
        table.add_row(split, mod, f"{exact:.3f}", f"{char:.3f}", str(n))
    console.print(table)
    s = m["safeguards"]
    console.print(
        f"safeguards: {s['spikes']} CE spike(s), {s['rollbacks']} NaN rollback(s), {s['ac_alarms']} ac alarm(s)"
        + ("; auto-stopped" if m["stopped_early"] else "")
    )
    for split_name, u in m.get("unreachable", {}).items():
        reasons = (
            (
                [f"{u['unseen_chars']} with a character no training target has (decoded as <unk>)"]
                if u["unseen_chars"]
                else []
            )
            + (
                [
                    f"{u['truncated']} longer than the decoder's {cfg.out_positions - 1} characters (scored on "
                    "that prefix)"
                ]
                if u["truncated"]
                else []
            )
            + (
                [f"{u['in_train']} whose input is identical to a training example's (not held out)"]
                if u.get("in_train")
                else []
            )
        )
        if reasons:
            console.print(f"note: {split_name} split ({u['n']} examples): " + "; ".join(reasons), soft_wrap=True)
    if plot:
        write_plot(result["trainer"].history, plot)
        console.print(f"loss curves: {plot}")
    console.print(f"checkpoint: {out}")


@click.command("eval", context_settings=_CONTEXT)
@click.argument("checkpoint", type=click.Path())
@click.argument("data", required=False, type=click.Path(exists=True))
@click.option(
    "--split",
    type=click.Choice(["train", "val", "test", "all"]),
    default=None,
    help="default: the checkpoint's own test split, or all of DATA",
)
@click.option(
    "--modality",
    default=None,
    help="modality of DATA's files and of manifest lines without one (default: as at training)",
)
@click.option("--json", "as_json", is_flag=True, help="machine-readable output on stdout")
@click.option(
    "--threads", default=1, show_default=True, type=click.IntRange(min=0), help="torch threads (0: torch's default)"
)
def eval_(checkpoint, data, split, modality, as_json, threads):
    """Exact match and character accuracy of CHECKPOINT, per modality, on held-out data."""
    from .pipeline import dumps, evaluate_checkpoint, metrics_table

    if modality is not None:
        from ..plugins import get_registry

        get_registry().get_class("modalities", modality)  # unknown → UnknownNameError naming the installed ones
    _threads(threads)
    result = evaluate_checkpoint(checkpoint, data, split=split, modality=modality)
    if as_json:
        click.echo(dumps(result))
        return
    click.echo(f"{result['engine']} on {result['data']} ({result['split']}):")
    for _, mod, exact, char, n in metrics_table({"all": result["metrics"]}):
        click.echo(f"  {mod:<10} exact {exact:.3f}  char {char:.3f}  n={n}")


@click.command("run", context_settings=_CONTEXT)
@click.argument("input", required=False)
@click.option("--modality", "-m", default=None, help="modality name (default: from the file extension; text otherwise)")
@click.option(
    "--text",
    "as_text",
    is_flag=True,
    help="read INPUT as literal text, never as a file name ('-' reads standard input)",
)
@click.option("--checkpoint", "-c", default=None, type=click.Path(), help="default: the bundled checkpoint")
@click.option(
    "--knows",
    is_flag=True,
    help="print what the checkpoint was trained on (modalities, labels, data sources) and how it "
    "judges its answers, then exit (no INPUT)",
)
@click.option(
    "--top", default=5, show_default=True, type=click.IntRange(min=0), help="how many named attributes to show"
)
@click.option("--json", "as_json", is_flag=True, help="machine-readable output on stdout")
@click.option(
    "--memory",
    "memory_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="memory store (SQLite); default: memory.sqlite3 in the user's data directory ($V22SDK_MEMORY)",
)
@click.option("--no-memory", is_flag=True, help="neither read nor write the persistent memory")
@click.option("--conversation", default="default", show_default=True, help="conversation id stored with the turn")
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="ray: batch inference over a folder or manifest, the model held by Ray actors (needs --out)",
)
@click.option("--out", default=None, type=click.Path(file_okay=False), help="with --backend ray: output folder")
@click.option(
    "--workers", default=2, show_default=True, type=click.IntRange(min=1), help="with --backend ray: Ray actors"
)
@click.option(
    "--why",
    is_flag=True,
    help="explain the answer: its log-probability attributed to each named slot "
    "and each part of the input (docs/explanations.md)",
)
@click.option(
    "--method",
    "why_method",
    type=click.Choice(["ig", "occlusion"]),
    default=None,
    help="with --why: integrated gradients or occlusion (default: the one the deletion test chose)",
)
@click.option(
    "--plot",
    default=None,
    type=click.Path(dir_okay=False),
    help="with --why: draw the explanation (.png, .pdf or .svg; needs matplotlib)",
)
def run(
    input,
    modality,
    as_text,
    checkpoint,
    knows,
    top,
    as_json,
    memory_path,
    no_memory,
    conversation,
    backend,
    out,
    workers,
    why,
    why_method,
    plot,
):
    """Run the engine on INPUT (a file, or a text) and print its answer, confidence and top attributes.

    The confidence is the probability of the answer, calibrated on the checkpoint's validation
    split. An input unlike anything the checkpoint was trained on (a photo for a digit reader, a
    sentence for a word reader) is reported as unfamiliar, with its open-set score, the threshold
    and the nearest label, instead of an answer; so is one recorded with less than any training
    input had (a sound sampled below the lowest rate the checkpoint heard), naming the slot.
    --knows lists what the checkpoint knows.

    An INPUT that looks like a file name but does not exist is an error (--text reads it as text).
    Each run is written to the memory as a turn; an earlier turn is shown as recalled only when
    its score passes the memory's hit threshold ("no similar past turn" otherwise). If the answer
    cannot be stored (a full disk), it is printed and the command exits with code 4. With --why,
    the named slots and the parts of the input (characters, sound segments, image regions) that
    drove the answer, signed.
    """
    if knows:
        if input is not None:
            raise click.UsageError("--knows takes no INPUT")
        if why or why_method or plot:
            raise click.UsageError("--why explains an answer to an INPUT: not with --knows")
        with loading():  # torch and the checkpoint: no collector passes over them (v22sdk._startup)
            _one_thread()
            from .runner import Runner, format_knows

            runner = Runner(checkpoint)
        with runner:
            info = runner.knows()
        click.echo(json.dumps(info, ensure_ascii=False) if as_json else format_knows(info))
        return
    if input is None:
        raise click.UsageError("missing INPUT (a file or a text), or --knows")
    _check_why(input, why, why_method, plot, backend, as_text)
    if backend == "ray":
        if not out:
            raise click.UsageError("--backend ray needs --out FOLDER")
        from ..scale.cli import dispatch_run

        dispatch_run(input, out, checkpoint=checkpoint, modality=modality, workers=workers, top=top)
        return
    from ..errors import AnswerNotStored
    from ..inputs import STDIN, read_stdin_text

    if input == STDIN and not as_text:
        input, as_text = read_stdin_text(64 << 20), True

    memory = False if no_memory else (memory_path or True)
    with loading():  # torch, the plugins and the checkpoint: no collector passes over them (v22sdk._startup)
        _one_thread()
        from .runner import Runner, format_result

        runner = Runner(checkpoint, memory=memory, conversation=conversation)
    with runner:
        # explained first: it reads the memory as the run will, and writes nothing
        explanation = runner.explain_answer(input, modality, method=why_method, text=as_text) if why else None
        try:
            with loading():  # the tokenizer's first use imports what it needs and loads its tables
                result = runner.run(input, modality, top=top, text=as_text)
        except AnswerNotStored as exc:  # print the answer, then the one error line (exit code 4)
            click.echo(json.dumps(exc.result, ensure_ascii=False) if as_json else format_result(exc.result))
            raise
        for notice in runner.notices:  # e.g. which of several readers of the extension was chosen
            click.echo(notice, err=True)
        if plot:
            from .explain_view import write_plot

            data, units = _decoded_input(runner, input, result["modality"], as_text)
            write_plot(explanation, plot, data=data, units=units)
    if explanation is not None:
        result["why"] = explanation
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False))
        return
    click.echo(format_result(result))
    if explanation is not None:
        from .explain_view import print_explanation

        print_explanation(explanation, top=max(top, 10))
        if plot:
            click.echo(f"picture: {plot}")


def _check_why(
    source: str, why: bool, method: str | None, plot: str | None, backend: str, as_text: bool = False
) -> None:
    """``--method`` and ``--plot`` need ``--why``; ``--plot`` needs a writable path with a known suffix,
    other than the input, and matplotlib; all checked before the engine is loaded."""
    if not why and (method or plot):
        raise click.UsageError(f"{'--method' if method else '--plot'} explains the answer: add --why")
    if why and backend == "ray":
        raise click.UsageError("--why runs on one input: not available with --backend ray")
    if plot:
        import os
        from pathlib import Path

        from .._io import check_output_path
        from .._paths import is_file

        try:
            target = check_output_path(plot)
        except InputError as exc:
            raise InputError(f"--plot {plot}", exc.problem) from None
        if not as_text and is_file(source) and target == Path(os.path.realpath(source)):
            raise InputError(f"--plot {plot}", "is the input itself; give the picture its own file")
        if Path(plot).suffix.lower() not in PLOT_SUFFIXES:
            raise InputError(
                f"--plot {plot}", f"the file name must end in {', '.join(PLOT_SUFFIXES)} (the format is taken from it)"
            )
        import importlib.util

        if importlib.util.find_spec("matplotlib") is None:
            raise click.UsageError("--plot needs matplotlib: pip install 'v22sdk[plot]'")


def _decoded_input(runner, source: str, modality: str, as_text: bool = False):
    """(data, units) of a file input as its plugin decodes it, for the picture; (None, {}) for a text."""
    from pathlib import Path

    from .._paths import is_file

    if as_text or not is_file(source):
        return None, {}
    sample = runner.registry.modality(modality).load(Path(source))
    return sample.data, dict(sample.units)


commands = [train, eval_, run]
