"""Every head kind by name, in one place: the main-path heads (classifier, CORAL, CORN)
and the MF path's kinds (ordered and unordered Gaussian MFs, no MF), each owning its
layer, loss and reading.

A method's :class:`~dfil.core.methods.MethodSpec` names its kinds (``main``, ``mf``); the
dual-path model, the objective and prediction look them up here. A new head is one module
defining a :class:`MainHead` (or an :class:`MFKind`) and one :func:`register_head` (or
:func:`register_mf`) call; a method using it is one
:func:`dfil.core.methods.register_method` call.
"""

from __future__ import annotations

from dfil.model.registry.base import MainHead
from dfil.model.registry.classifier import Classifier
from dfil.model.registry.coral import Coral
from dfil.model.registry.corn import Corn
from dfil.model.registry.mf import PAPER_MF_KINDS, MFKind

#: The main-path head kinds by :attr:`MethodSpec.main` name.
HEADS: dict[str, MainHead] = {head.name: head for head in (Classifier(), Coral(), Corn())}

#: The MF path kinds by :attr:`MethodSpec.mf` name.
MF_KINDS: dict[str, MFKind] = {kind.name: kind for kind in PAPER_MF_KINDS}


def _register(table: dict, kind, what: str):
    if not kind.name or kind.name in table:
        raise ValueError(f"{what} name {kind.name!r} is empty or already registered "
                         f"(registered: {sorted(table)})")
    table[kind.name] = kind
    return kind


def _lookup(table: dict, name: str | None, what: str):
    if name is None:
        return None
    try:
        return table[name]
    except KeyError:
        raise ValueError(f"unknown {what} {name!r}; registered: {sorted(table)}") from None


def register_head(head: MainHead) -> MainHead:
    """Add ``head`` under its name; ``ValueError`` if the name is empty or taken."""
    return _register(HEADS, head, "head")


def register_mf(kind: MFKind) -> MFKind:
    """Add the MF path ``kind`` under its name; ``ValueError`` if the name is empty or
    taken."""
    return _register(MF_KINDS, kind, "MF kind")


def main_head(name: str | None) -> MainHead | None:
    """The main-path head kind ``name`` (None for a method without a main path);
    ``ValueError`` naming the registered kinds otherwise."""
    return _lookup(HEADS, name, "head")


def mf_kind(name: str | None) -> MFKind | None:
    """The MF path kind ``name`` (None for a method without an MF path); ``ValueError``
    naming the registered kinds otherwise."""
    return _lookup(MF_KINDS, name, "MF kind")


__all__ = ["HEADS", "MF_KINDS", "MFKind", "MainHead", "main_head", "mf_kind", "register_head",
           "register_mf"]
