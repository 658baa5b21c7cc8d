"""Every method of the paper as a declarative head layout (pure Python).

Which heads a method has, which path predicts, and which loss terms it uses. The
ablation layouts follow Table ablation_detail's parameter counts: the three reduced
variants (dfil_only, unordered_mf, no_mf) have no main classifier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dfil.util.errors import ConfigError

#: The built-in main-path head kinds (:mod:`dfil.model.registry` may hold more).
Main = Literal["classifier", "coral", "corn"]
MF = Literal["ordered", "unordered", "linear"]


@dataclass(frozen=True)
class MethodSpec:
    """Head layout of one method.

    main : main-path head kind over h (a name in :mod:`dfil.model.registry`), or None.
    numeric : whether the NumericalHead (p_hat) exists and is supervised by lambda_p.
    mf : what maps p_hat to class scores, or None.
    mf_trainable : False freezes the MF at its init (FT+Compose).
    lambda_dfil : forced lambda_DFIL (FT+Compose 0, DFIL-only 0 per Table ablation_detail);
        None uses the configured value.
    distill : adds tau^2 KL(softmax(logits/tau) || softmax(mu/tau)) (App. E.1).
    attn_pool : attention-pooled NumericalHead input (App. E.2).
    trains : False for zero-shot option scoring (no parameters are trained).
    """

    name: str
    main: Main | None = None
    numeric: bool = False
    mf: MF | None = None
    mf_trainable: bool = True
    lambda_dfil: float | None = None
    distill: bool = False
    attn_pool: bool = False
    trains: bool = True


METHODS: dict[str, MethodSpec] = {
    spec.name: spec
    for spec in (
        MethodSpec("dfil", main="classifier", numeric=True, mf="ordered"),
        MethodSpec("finetune", main="classifier"),
        MethodSpec(
            "ft_compose", main="classifier", numeric=True, mf="ordered",
            mf_trainable=False, lambda_dfil=0.0,
        ),
        MethodSpec("coral", main="coral"),
        MethodSpec("corn", main="corn"),
        MethodSpec("dfil_only", numeric=True, mf="ordered", lambda_dfil=0.0),
        MethodSpec("unordered_mf", numeric=True, mf="unordered"),
        MethodSpec("no_mf", numeric=True, mf="linear"),
        MethodSpec("distill", main="classifier", numeric=True, mf="ordered", distill=True),
        MethodSpec("attn_pool", main="classifier", numeric=True, mf="ordered", attn_pool=True),
        MethodSpec("zero_shot", trains=False),
    )
}


def register_method(spec: MethodSpec) -> MethodSpec:
    """Add ``spec`` to :data:`METHODS` under its name, so a cell may name it; its ``main``
    names a head kind registered in :mod:`dfil.model.registry`. ``ValueError`` if the name
    is empty or taken."""
    if not spec.name or spec.name in METHODS:
        raise ValueError(f"method name {spec.name!r} is empty or already registered "
                         f"(registered: {sorted(METHODS)})")
    METHODS[spec.name] = spec
    return spec


def method_spec(name: str) -> MethodSpec:
    """The spec of method ``name``; ``ValueError`` naming the known methods otherwise."""
    try:
        return METHODS[name]
    except KeyError:
        raise ConfigError(f"unknown method {name!r}; expected one of {sorted(METHODS)}") from None
