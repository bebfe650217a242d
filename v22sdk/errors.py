"""Typed errors of v22sdk.

Every error the SDK raises on purpose derives from :class:`V22Error`. Each one says which input
was wrong and what was wrong with it; the CLI turns any :class:`V22Error` into one line on stderr
and a non-zero exit code (``--debug`` shows the traceback).
"""

from __future__ import annotations

from typing import Any


class V22Error(Exception):
    """Base class of every error v22sdk raises deliberately."""

    #: Exit code the CLI uses for this family of error.
    exit_code: int = 1


class ContractViolation(V22Error):
    """A token batch breaks the 640-D token contract.

    ``rule`` names the rule (``"unit_norm_emb"``, ``"attr_bounds"`` ...), ``index`` is the first
    offending token (or ``None`` for batch-level rules) and ``value`` the offending value.
    """

    def __init__(self, rule: str, message: str, *, index: int | None = None, value: Any = None):
        self.rule = rule
        self.index = index
        self.value = value
        where = f" at token {index}" if index is not None else ""
        shown = f" (value: {value!r})" if value is not None else ""
        super().__init__(f"contract rule '{rule}' violated{where}: {message}{shown}")


class InputError(V22Error, ValueError):
    """An input cannot be tokenized: ``source`` names the input, ``problem`` says what is wrong.

    Modality plugins raise this (or a subclass of it) for every bad input they are given: wrong
    dtype or rank, empty, non-finite values, missing or mismatched physical units, unreadable,
    truncated or mislabelled files.
    """

    exit_code = 2

    def __init__(self, source: str, problem: str):
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


class UnitsError(InputError):
    """A physical unit of the input (a sample rate, a pixel pitch ...) is missing or mismatched."""


class InputTooLarge(InputError):
    """An input whose header says it would need more memory to decode than the decode budget
    allows (see :mod:`v22sdk.decoding`); refused before anything large is allocated."""


class PluginError(V22Error):
    """A plugin could not be loaded, registered or found."""

    exit_code = 3


class DuplicateNameError(PluginError):
    """Two plugins registered a modality, engine or memory backend under the same name."""


class UnknownNameError(PluginError, LookupError):
    """A modality, engine or memory backend name that no loaded plugin provides."""

    exit_code = 2


class EngineOutputError(PluginError):
    """An engine's forward pass lacks an output the SDK reads: ``engine`` names the engine,
    ``output`` the missing key, ``needed_for`` what reads it, ``returned`` the keys it did return."""

    def __init__(self, engine: str, output: str, needed_for: str, returned: Any = ()):
        self.engine = engine
        self.output = output
        self.needed_for = needed_for
        self.returned = sorted(returned)
        got = ", ".join(self.returned) or "nothing"
        super().__init__(
            f"engine '{engine}': its forward pass returned no '{output}' (it returned: {got}); {needed_for} reads it"
        )


class OutputError(V22Error):
    """An output cannot be written: ``path`` names it, ``problem`` says why (a missing folder, a
    full disk ...). Whatever was at ``path`` before is left as it was."""

    def __init__(self, path: str, problem: str):
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class CheckpointError(V22Error):
    """A checkpoint is missing, unreadable, or was written for another configuration."""


class MemoryStoreError(V22Error):
    """A memory store operation failed; the turn it concerned was not acknowledged."""


class MemoryCommitInDoubt(MemoryStoreError):
    """The connection broke while a write was COMMITting: the write was not acknowledged and may or
    may not be stored (whole, never partly). Look the turn up before writing it again."""


class MemoryStoreCorrupt(MemoryStoreError):
    """A memory store on disk is damaged. It is never opened as empty; use ``v22sdk memory salvage``."""

    def __init__(self, path: str, problem: str):
        self.path = path
        self.problem = problem
        super().__init__(f"memory store {path} is corrupt: {problem} (try 'v22sdk memory salvage')")


class SalvageIncomplete(MemoryStoreError):
    """``memory salvage`` wrote the turns it recovered, but fewer than the damaged store held:
    ``report`` is :func:`v22sdk.memory.salvage`'s result."""

    exit_code = 5

    def __init__(self, src: str, report: dict[str, Any]):
        self.report = report
        held = report.get("held")
        what = (
            f"{report['lost']} of the {held} turns it held were lost"
            if held is not None
            else f"{report['lost']} turns are known lost, and the file lost pages holding an unknown number more"
        )
        super().__init__(f"salvage of {src} is incomplete: {what}")


class AnswerNotStored(MemoryStoreError):
    """The engine computed its answer (``result``) but writing it to the memory failed (a full
    disk, a damaged store): the answer is valid, the turn was not stored."""

    exit_code = 4

    def __init__(self, result: dict[str, Any], cause: MemoryStoreError):
        self.result = result
        self.cause = cause
        super().__init__(f"the answer was not stored in memory: {cause}")


class MissingDependency(V22Error):
    """A program, data file or Python package that a command needs is not installed: ``what``
    names it, ``hint`` says how to install it (e.g. the Debian package)."""

    def __init__(self, what: str, hint: str):
        self.what = what
        self.hint = hint
        super().__init__(f"{what} is not installed: {hint}")
