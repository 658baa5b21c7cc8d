"""Every head kind by name, in one place: the main-path heads (classifier, CORAL, CORN),
each a module of its own owning its layer, loss and decoding, and the MF path's kinds.

A method's :class:`~dfil.core.methods.MethodSpec` names its kinds (``main``, ``mf``); the
dual-path model, the objective and prediction look them up here. A new head is one module
defining a :class:`MainHead` and one :func:`register_head` call (or a line in
:data:`HEADS`); a method using it is one :func:`dfil.core.methods.register_method` call.
"""

from __future__ import annotations

from dfil.model.registry.base import MainHead
from dfil.model.registry.classifier import Classifier
from dfil.model.registry.coral import Coral
from dfil.model.registry.corn import Corn
from dfil.model.registry.mf import MF_KINDS

#: The main-path head kinds by :attr:`MethodSpec.main` name.
HEADS: dict[str, MainHead] = {head.name: head for head in (Classifier(), Coral(), Corn())}


def register_head(head: MainHead) -> MainHead:
    """Add ``head`` under its name; ``ValueError`` if the name is empty or taken."""
    if not head.name or head.name in HEADS:
        raise ValueError(f"head name {head.name!r} is empty or already registered "
                         f"(registered: {sorted(HEADS)})")
    HEADS[head.name] = head
    return head


def main_head(name: str | None) -> MainHead | None:
    """The main-path head kind ``name`` (None for a method without a main path);
    ``ValueError`` naming the registered kinds otherwise."""
    if name is None:
        return None
    try:
        return HEADS[name]
    except KeyError:
        raise ValueError(f"unknown head {name!r}; registered: {sorted(HEADS)}") from None


__all__ = ["HEADS", "MF_KINDS", "MainHead", "main_head", "register_head"]
