"""Prompts cut to ``max_length``: how many of a split's were, and the longest one's tokens.

A prompt longer than ``data.max_length`` tokens keeps only its last (or first) tokens
(:func:`dfil.engine.batching.encode`). A cut prompt may lose the words the label depends
on, so each run records it per split (training's in its attempts, evaluation's in
``metrics.json``), says so in one log line per job, and the report lists the cells where any
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


def truncation_line(records: Mapping[str, Mapping]) -> str | None:
    """One log line for the splits (name -> :func:`truncation` record) where prompts
    were cut (None: none was)."""
    cut = {split: r for split, r in records.items() if r.get("cut")}
    if not cut:
        return None
    sizes = sorted({r["max_length"] for r in cut.values()})
    each = ", ".join(f"{split} {r['cut']} of {r['items']} (longest {r['longest']})"
                     for split, r in cut.items())
    return (f"truncation: prompts cut to max_length {'/'.join(map(str, sizes))} tokens: "
            f"{each}; raise data.max_length to keep them whole")
