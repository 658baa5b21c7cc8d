"""Errors the ``dfil`` command reports as one line, kept free of heavy imports.

``dfil.cli`` catches these around every subcommand, so this module must not import torch,
scipy or transformers: a CPU-only subcommand such as ``dfil grid cell`` starts in well under
a second only if catching its errors does not load them.
"""

from __future__ import annotations


class CheckpointError(RuntimeError):
    """A checkpoint file is missing, truncated, corrupt or does not fit its model."""


class LatexError(RuntimeError):
    """pdflatex is missing or failed; the message names the log's first error."""
