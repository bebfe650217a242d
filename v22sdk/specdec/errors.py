"""Typed errors of the speculative-decoding lab (all derive from :class:`v22sdk.errors.V22Error`)."""

from __future__ import annotations

from v22sdk.errors import InputError, V22Error


class SpecDecError(V22Error):
    """Base class of the errors raised by :mod:`v22sdk.specdec`."""


class DistributionError(SpecDecError, InputError):
    """A probability tensor handed to the sampler is malformed.

    ``name`` (= ``source``) names the tensor (``"p"``, ``"q"``, ``"draft_tokens"`` ...) and
    ``problem`` says what is wrong (shape, negative or non-finite entries, a drafted token the
    draft gave probability 0).
    """

    @property
    def name(self) -> str:
        return self.source


class ResultsError(SpecDecError, InputError):
    """An experiment results file is missing or unreadable (``path`` = ``source`` names it)."""

    @property
    def path(self) -> str:
        return self.source
