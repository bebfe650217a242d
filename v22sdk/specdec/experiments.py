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

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    Experiment("hook1", "v22sdk.specdec.experiment", "RFC hook 1: spherical normalisation of injected features",
               "specdec-results"),
    Experiment("hook2", "v22sdk.specdec.hook2", "RFC hook 2: an attribute signal for verification",
               "specdec-results-hook2"),
    Experiment("hook5", "v22sdk.specdec.hook5", "RFC hook 5: cold-start-safe feature expansion",
               "specdec-results-hook5"),
    Experiment("hook3", "v22sdk.specdec.hook3", "RFC hook 3: memory retrieval instead of a long context for a draft",
               "specdec-results-hook3"),
    Experiment("hook4", "v22sdk.specdec.hook4", "RFC hook 4 / question 3: cross-modal drafting with the unified 640-D token",
               "specdec-results-hook4"),
)}
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
