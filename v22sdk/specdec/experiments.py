"""The lab's experiments, by name, for ``v22sdk specdec run --experiment NAME`` and ``report``.

Adding an experiment is one new module plus one line in :data:`EXPERIMENTS`. The module is
imported only when its experiment runs (so the CLI stays cheap) and provides:

- ``FULL``, ``QUICK``: frozen dataclass configurations with at least ``corpora``, ``seeds`` and
  ``threads`` fields (the CLI's ``--corpus``, ``--seeds``, ``--threads`` override them);
- ``run_experiment(cfg, out_dir, tick=None, say=None) -> dict``: run, write ``out_dir/results.json``
  (and ``report.md``), return the results; ``tick(n)`` advances the progress bar by ``n`` of
  ``total_ticks(cfg)``, ``say(text)`` logs a line;
- ``total_ticks(cfg) -> int``;
- ``render_report(results: dict) -> str``: Markdown of a results file (what ``report`` prints).

A results file names its experiment in ``data.experiment`` (files written with
:func:`v22sdk.evidence.write_result`) or top-level ``experiment``; files without either are hook 1's.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, replace
from types import ModuleType

from v22sdk.specdec.errors import SpecDecError


@dataclass(frozen=True)
class Experiment:
    name: str
    module: str
    title: str
    default_out: str
    #: results written with :func:`v22sdk.evidence.write_result` whose corpora are independent
    #: (own target, own seeds), so per-corpus runs can be joined by :func:`combine`
    combinable: bool = False

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment(
            "hook1",
            "v22sdk.specdec.experiment",
            "RFC hook 1: spherical normalisation of injected features",
            "specdec-results",
        ),
        Experiment(
            "hook2",
            "v22sdk.specdec.hook2",
            "RFC hook 2: an attribute signal for verification",
            "specdec-results-hook2",
            combinable=True,
        ),
        Experiment(
            "hook5",
            "v22sdk.specdec.hook5",
            "RFC hook 5: cold-start-safe feature expansion",
            "specdec-results-hook5",
            combinable=True,
        ),
        Experiment(
            "hook3",
            "v22sdk.specdec.hook3",
            "RFC hook 3: memory retrieval instead of a long context for a draft",
            "specdec-results-hook3",
            combinable=True,
        ),
        Experiment(
            "hook4",
            "v22sdk.specdec.hook4",
            "RFC hook 4 / question 3: cross-modal drafting with the unified 640-D token",
            "specdec-results-hook4",
        ),
    )
}
DEFAULT = "hook1"


def get(name: str) -> Experiment:
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise SpecDecError(f"unknown experiment {name!r}; choose one of {', '.join(EXPERIMENTS)}") from None


def experiment_of(results: dict) -> str:
    """The experiment a loaded results file belongs to."""
    data = results.get("data")
    if isinstance(data, dict) and "experiment" in data:
        return data["experiment"]
    return results.get("experiment", DEFAULT)


def with_overrides(cfg, **kw):
    """``cfg`` with the non-``None`` keyword values replaced."""
    return replace(cfg, **{k: v for k, v in kw.items() if v is not None})


_RUN_ONLY = ("corpora", "threads")  # config fields that may differ between the parts of one experiment


def combine(paths, out_dir):
    """Join results files of one experiment run per corpus (``--corpus``) into ``out_dir/results.json``.

    Every corpus of hooks 2 and 5 is independent (its own target, its seeds derived from the
    corpus's place in the registry), so a corpus run alone measures what the same corpus measures in
    a run of all of them. The parts must name the same experiment, the same criterion and the same
    configuration apart from ``corpora`` and ``threads``, and share no corpus; the verdict is then
    recomputed over all their corpora with the experiment's pre-registered rule. Each part's
    provenance (command, commit, date, machine) is kept under ``data.parts``.
    """
    import json
    from pathlib import Path

    from v22sdk.errors import InputError
    from v22sdk.inputs import check_regular_file
    from v22sdk.specdec.errors import ResultsError

    docs = []
    for p in map(Path, paths):
        if not p.exists():
            raise ResultsError(str(p), "not found")
        try:
            check_regular_file(p)  # a FIFO or device is refused, not read
            doc = json.loads(p.read_bytes().decode("utf-8"))
        except InputError as exc:
            raise ResultsError(str(p), exc.problem) from None
        except OSError as exc:
            raise ResultsError(str(p), f"unreadable: {exc.strerror or exc}") from None
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise ResultsError(str(p), f"unreadable: not a JSON results file ({type(exc).__name__})") from None
        if not (
            isinstance(doc, dict)
            and isinstance(doc.get("data"), dict)
            and "corpora" in doc["data"]
            and "config" in doc["data"]
            and "provenance" in doc
        ):
            raise ResultsError(str(p), "not a results file written by 'v22sdk specdec run'")
        docs.append((p, doc))
    if len(docs) < 2:
        raise SpecDecError("combine needs at least two results files")
    name = experiment_of(docs[0][1])
    exp = get(name)
    if not exp.combinable:
        raise SpecDecError(f"experiment {name!r} cannot be combined (its corpora are not independent runs)")
    mod = exp.load()
    data: dict = {"experiment": name, "corpora": {}, "parts": [], "runtime_s": 0.0}
    base_cfg = {k: v for k, v in docs[0][1]["data"]["config"].items() if k not in _RUN_ONLY}
    for p, doc in docs:
        if experiment_of(doc) != name:
            raise ResultsError(str(p), f"is experiment {experiment_of(doc)!r}, not {name!r}")
        if doc.get("criterion") != mod.CRITERION:
            raise ResultsError(str(p), f"was judged by another criterion than {name}'s pre-registered one")
        cfg = {k: v for k, v in doc["data"]["config"].items() if k not in _RUN_ONLY}
        if cfg != base_cfg:
            diff = sorted(k for k in set(cfg) | set(base_cfg) if cfg.get(k) != base_cfg.get(k))
            raise ResultsError(str(p), f"configuration differs from {docs[0][0]} in {', '.join(diff)}")
        for corpus, res in doc["data"]["corpora"].items():
            if corpus in data["corpora"]:
                raise ResultsError(str(p), f"corpus {corpus!r} is already in another part")
            data["corpora"][corpus] = res
        data["parts"].append(
            {
                "file": str(p),
                "corpora": list(doc["data"]["corpora"]),
                "runtime_s": doc["data"].get("runtime_s", 0.0),
                "cpu_s": doc["data"].get("cpu_s"),
                "provenance": doc["provenance"],
            }
        )
        data["runtime_s"] += doc["data"].get("runtime_s", 0.0)
    data["config"] = {**docs[0][1]["data"]["config"], "corpora": list(data["corpora"])}
    data["verdict"] = mod.verdict(data)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    mod._write(data, Path(out_dir))
    return data
