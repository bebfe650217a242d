"""Typed errors of the speculative-decoding lab (all derive from :class:`v22sdk.errors.V22Error`)."""

from __future__ import annotations

from v22sdk.errors import V22Error


class SpecDecError(V22Error):
    """Base class of the errors raised by :mod:`v22sdk.specdec`."""


class DistributionError(SpecDecError, ValueError):
    """A probability tensor handed to the sampler is malformed.

    ``name`` names the tensor (``"p"``, ``"q"``, ``"draft_tokens"`` ...) and ``problem`` says what
    is wrong (shape, negative or non-finite entries, a drafted token the draft gave probability 0).
    """

    exit_code = 2

    def __init__(self, name: str, problem: str):
        self.name = name
        self.problem = problem
        super().__init__(f"{name}: {problem}")


class ResultsError(SpecDecError):
    """An experiment results file is missing or unreadable (``path`` names it)."""

    def __init__(self, path: str, problem: str):
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")
