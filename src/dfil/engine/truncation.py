"""Prompts cut to ``max_length``: how many of a split's were, and the longest one's tokens.

A prompt longer than ``data.max_length`` tokens keeps only its last (or first) tokens
(:func:`dfil.engine.batching.encode`). A cut prompt may lose the words the label depends
on, so each run records it per split (training's in its attempts, evaluation's in
``metrics.json``), says so in one log line, and the report lists the cells where any
prompt was cut.
"""

from __future__ import annotations

from collections.abc import Mapping

from dfil.engine.batching import Encoded


def truncation(enc: Encoded, max_length: int) -> dict:
    """``{"items", "cut", "longest", "max_length"}`` of encoded prompts: their number, how
    many were cut to ``max_length`` tokens, and the longest one's tokens before the cut."""
    lengths = enc.source_lengths if enc.source_lengths is not None else enc.lengths
    return {"items": len(enc), "cut": int((lengths > max_length).sum()),
            "longest": int(lengths.max()) if len(lengths) else 0, "max_length": int(max_length)}


def truncation_line(split: str, record: Mapping) -> str | None:
    """One log line for a split where prompts were cut (None: none was)."""
    if not record.get("cut"):
        return None
    return (f"truncation: {record['cut']} of {record['items']} {split} prompts cut to "
            f"max_length {record['max_length']} tokens (the longest has {record['longest']}); "
            "raise data.max_length to keep them whole")
