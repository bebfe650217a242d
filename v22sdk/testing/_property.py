"""Run a check body over a plugin's own ``sample_inputs()`` with hypothesis.

The body raises :class:`CheckFailure` when an example breaks the rule. hypothesis searches
(derandomized, no example database, no deadline: the same run gives the same verdict everywhere),
shrinks the failure to a small input, and :func:`for_all` re-raises it with the falsifying
example described in the message, so a report line says *which* input broke *what*.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

from ._registry import CheckFailure

#: Examples per check when neither the caller nor the pytest option says otherwise.
DEFAULT_MAX_EXAMPLES = 20


def default_max_examples() -> int:
    """``--v22sdk-max-examples`` of the running pytest session if given, else the kit default."""
    plugin = sys.modules.get("v22sdk.testing.pytest_plugin")
    chosen = getattr(plugin, "active_max_examples", None) if plugin else None
    return int(chosen) if chosen else DEFAULT_MAX_EXAMPLES


def describe(value: Any, limit: int = 300) -> str:
    """A short, readable description of an example (arrays by dtype, shape, range and edges)."""
    from ..modality import Sample

    if isinstance(value, Sample):
        return (f"Sample(data={describe(value.data, limit)}, units={dict(value.units)!r}, "
                f"source={value.source!r})")
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe(v, limit) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, np.ndarray):
        head = f"array(dtype={value.dtype}, shape={value.shape}"
        if value.size and value.dtype.kind in "biuf":
            with np.errstate(all="ignore"):
                head += f", min={np.nanmin(value) if not np.isnan(value).all() else 'nan'!s}"
                head += f", max={np.nanmax(value) if not np.isnan(value).all() else 'nan'!s}"
        body = np.array2string(value.ravel(), threshold=8, edgeitems=3, precision=4)
        return f"{head}, values={body})"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def for_all(strategy: Any, body: Callable[[Any], None], *, max_examples: int | None) -> None:
    """Run ``body(example)`` for examples of ``strategy``; raise :class:`CheckFailure` on the first
    rule broken, after shrinking, with the falsifying example in the message."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Flaky, HypothesisException

    failing: dict[str, Any] = {}

    @settings(max_examples=max_examples or default_max_examples(), deadline=None, derandomize=True,
              database=None, suppress_health_check=list(HealthCheck), print_blob=False,
              report_multiple_bugs=False)
    @given(strategy)
    def run(example: Any) -> None:
        try:
            body(example)
        except BaseException:
            # hypothesis replays the shrunk example last, so this ends as the minimal failure.
            failing["example"] = example
            raise

    try:
        run()
    except CheckFailure as exc:
        raise CheckFailure(f"{exc}\n  falsifying example: {describe(failing.get('example'))}") from None
    except Flaky as exc:
        # The rule broke once but not on replay: the output depends on earlier calls (state).
        inner = [e for e in getattr(exc, "exceptions", ()) if isinstance(e, CheckFailure)]
        first = str(inner[0]) if inner else f"{type(exc).__name__}: {exc}"
        raise CheckFailure(f"{first}\n  not reproducible on replay: the result depends on earlier calls "
                           f"(hidden state or randomness)") from None
    except HypothesisException as exc:
        raise CheckFailure(f"could not generate examples from sample_inputs(): "
                           f"{type(exc).__name__}: {exc}") from None
    except Exception as exc:
        raise CheckFailure(f"the check crashed with {type(exc).__name__}: {exc}\n  falsifying example: "
                           f"{describe(failing.get('example'))}") from exc
