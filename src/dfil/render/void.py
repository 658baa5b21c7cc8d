"""Comparisons void by construction on a frozen-backbone grid (pure).

The paper's claim that the dual path helps DFIL's main classifier goes through the LoRA
backbone both heads share (Sec. 4.1): the MF loss reaches the main classifier only
through it. A grid whose cells train no adapter (``model.adapter: none``: heads on
cached frozen features) leaves DFIL's main classifier and fine-tune's the same linear
head on the same features with the same loss, so DFIL (main) against fine-tune compares
a model with itself. Which cells are frozen comes from the grid's resolved cell configs
(:func:`frozen_keys`), never from the numbers.
"""

from __future__ import annotations

from collections.abc import Iterable

from dfil.render.source import Read

#: The methods whose main classifier is the same head trained by the same loss when no
#: adapter is trained (DFIL's MF loss reaches it only through the backbone).
SAME_MAIN = frozenset({"dfil", "finetune"})
REASON = ("the backbone is frozen on this grid (model.adapter: none), so DFIL's main "
          "classifier and fine-tune are the same linear head trained the same way on the "
          "same features: their comparison is void by construction (the paper's effect "
          "goes through the shared LoRA backbone)")


def frozen_keys(cells: dict) -> frozenset[str]:
    """The run keys of ``cells`` (key -> :class:`dfil.grid.Cell`) that train no adapter."""
    return frozenset(k for k, c in cells.items()
                     if c.config.get("model", {}).get("adapter") == "none")


def _main_of(read: Read) -> str | None:
    """The method of a read of a main-classifier metric (``test.main.acc``), else None."""
    key, metric = read
    parts = key.split("/")
    main = len(parts) > 2 and ".main." in f".{metric}."
    return parts[2].split("+")[0] if main else None  # method+variant: the method


def same_model(reads: Iterable[Read], frozen: frozenset[str]) -> bool:
    """Whether ``reads`` compare DFIL's main classifier with fine-tune's on frozen cells
    only: every read a main-classifier metric of :data:`SAME_MAIN` on a frozen cell, and
    both methods among them."""
    reads = list(reads)
    methods = {_main_of(r) for r in reads}
    return (methods == SAME_MAIN
            and all(key in frozen for key, _ in reads))


def void_note(reads: Iterable[Read], frozen: frozenset[str]) -> str:
    """The table's note when it sets DFIL's main classifier beside fine-tune on frozen
    cells (``reads``: every single-cell read of its entries), else ""."""
    main = [r for r in reads if _main_of(r) in SAME_MAIN]
    return f"DFIL (main) vs fine-tune: {REASON}." if same_model(main, frozen) else ""
