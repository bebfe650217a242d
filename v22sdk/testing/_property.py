"""Run a check body over examples with hypothesis, under the run's :class:`KitSettings`.

The body raises :class:`CheckFailure` when an example breaks a rule. hypothesis searches (each
check and configuration from its own seed stream, see :mod:`._settings`), shrinks the failure to a
small input, and :func:`for_all` re-raises it with the falsifying example described in the message
and a reproduction (the input inline, or saved to an ``.npz`` file when it is large). A plugin's
own exception stays chained (``__cause__``), so pytest shows the author's traceback; the kit's
frames are hidden from it (``__tracebackhide__``).
"""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import TYPE_CHECKING, Any

from ._format import describe, reproduction
from ._registry import CheckFailure
from ._settings import KitSettings, current, stream_key, stream_seed

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy


class SkipExample(Exception):
    """Raised by a check body for an input it cannot judge (it breaks only rules already reported):
    the example counts as passed."""


def default_max_examples() -> int:
    """Examples per check in force now (``--v22sdk-max-examples``, the author's profile, or 20)."""
    return current().max_examples


def hypothesis_settings(settings: KitSettings, max_examples: int) -> Any:
    from hypothesis import HealthCheck
    from hypothesis import settings as hsettings

    return hsettings(
        max_examples=max_examples,
        deadline=None,
        derandomize=settings.derandomize,
        database=None if settings.derandomize else settings.database,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
    )


def seeded(run: Any, inner: Any, settings: KitSettings, key: bytes) -> Any:
    """Give ``run`` (a ``@given`` test around ``inner``) its own example stream for ``key``."""
    from hypothesis import seed

    # The digest names this stream in hypothesis' example database and, derandomized, seeds it.
    inner._hypothesis_internal_add_digest = key
    if settings.seed is not None:
        return seed(stream_seed(settings.seed, key))(run)
    return run


def for_all(
    strategy: SearchStrategy[Any],
    body: Callable[[Any], None],
    *,
    check: str,
    modality: Any,
    max_examples: int | None = None,
    purpose: str = "",
    already: Container[str] = (),
) -> None:
    """Run ``body(example)`` for examples of ``strategy``; raise :class:`CheckFailure` on the first
    rule broken, after shrinking, with the falsifying example and a reproduction in the message.

    A failure of another check's rule that is in ``already`` (reported earlier in the run) skips
    the example instead: this check goes on testing its own rule."""
    __tracebackhide__ = True
    from hypothesis import given
    from hypothesis.errors import Flaky, HypothesisException

    settings = current(max_examples)
    failing: dict[str, Any] = {}

    def inner(example: Any) -> None:
        __tracebackhide__ = True
        try:
            body(example)
        except SkipExample:
            return
        except CheckFailure as exc:
            if exc.rule and exc.rule != check and exc.rule in already:
                return
            failing["example"] = example
            raise
        except BaseException:
            # hypothesis replays the shrunk example last, so this ends as the minimal failure.
            failing["example"] = example
            raise

    run = hypothesis_settings(settings, settings.max_examples)(given(strategy)(inner))
    run = seeded(run, inner, settings, stream_key(check, modality, purpose))
    try:
        run()
    except CheckFailure as exc:
        raise finish(exc, failing.get("example"), check=check, modality=modality, settings=settings) from exc.__cause__
    except Flaky as exc:
        # The rule broke once but not on replay: the output depends on earlier calls (state).
        if check != "check_determinism" and "check_determinism" in already:
            return
        inner_failures = [e for e in getattr(exc, "exceptions", ()) if isinstance(e, CheckFailure)]
        first = str(inner_failures[0]) if inner_failures else f"{type(exc).__name__}: {exc}"
        raise CheckFailure(
            f"{first}\n  not reproducible on replay: the result depends on earlier calls (hidden state or randomness)",
            rule="check_determinism",
            check=check,
        ) from None
    except HypothesisException as exc:
        raise CheckFailure(
            f"could not generate examples from sample_inputs(): {type(exc).__name__}: {exc}", rule=check, check=check
        ) from None
    except Exception as exc:
        example = failing.get("example")
        raise finish(
            CheckFailure(f"the check crashed with {type(exc).__name__}: {exc}", rule=check),
            example,
            check=check,
            modality=modality,
            settings=settings,
        ) from exc


def finish(
    exc: CheckFailure, example: Any, *, check: str, modality: Any, settings: KitSettings, label: str | None = None
) -> CheckFailure:
    """``exc`` with the example, its reproduction and the finding check filled in."""
    rule = exc.rule or check
    lines = [exc.message]
    if rule != check:
        lines[0] = f"[rule {rule}] {lines[0]}"
    if label:
        lines.append(f"  kit input: {label}")
    if example is not None:
        lines.append(f"  falsifying example: {describe(example)}")
        code, saved = reproduction(example, modality, check=check, settings_dir=settings.failures_dir, label=label)
        if saved:
            lines.append(f"  saved to {saved}")
        lines.append("  reproduce:\n" + "\n".join(f"    {line}" for line in code.splitlines()))
    else:
        code, saved = None, None
    return CheckFailure(
        "\n".join(lines),
        rule=rule,
        check=check,
        example=example,
        reproduction=code,
        saved_to=saved,
        author_traceback=exc.author_traceback,
    )
