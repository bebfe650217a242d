"""``v22sdk new-plugin``: generate a complete, installable modality plugin package.

:func:`generate` writes the package (pyproject with the ``v22sdk`` entry point, the modality
class with its schema and ``sample_inputs()``, a README, a test file that runs the contract
kit and ``examples/make_manifest.py``, which writes a toy training set in the plugin's format); :mod:`v22sdk.scaffold.cli` is the click command. Templates are Python strings in
:mod:`v22sdk.scaffold.templates`, so they ship inside the wheel with no package-data rules.
"""

from __future__ import annotations

from .generate import ZONES, ScaffoldError, generate, names_for

__all__ = ["ZONES", "ScaffoldError", "generate", "names_for"]
