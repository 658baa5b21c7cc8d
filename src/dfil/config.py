"""Frozen configuration dataclasses and a strict loader (pure Python, no torch).

Defaults follow the paper's most likely reading; every place where the paper is silent or
contradicts itself is a named field here and a row in ``docs/reproduction-notes.md``.
YAML files hold overrides only; :func:`from_dict` rejects unknown keys with their full path.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin, get_type_hints


class ConfigError(ValueError):
    """A configuration value or key is invalid; the message names its dotted path."""


@dataclass(frozen=True)
class Bound:
    """Limits of a numeric field (``Annotated[int, Bound(minimum=1)]``), named as in JSON
    Schema: :func:`check_bounds` enforces them and the grid schema carries them."""

    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None

    def schema(self) -> dict[str, float]:
        names = {"minimum": "minimum", "maximum": "maximum",
                 "exclusive_minimum": "exclusiveMinimum", "exclusive_maximum": "exclusiveMaximum"}
        return {names[k]: v for k, v in dataclasses.asdict(self).items() if v is not None}

    def violation(self, value: float) -> str | None:
        """What is wrong with ``value`` (``"must be >= 1, got 0"``), or None."""
        checks = ((self.minimum, ">=", value >= (self.minimum or 0)),
                  (self.maximum, "<=", value <= (self.maximum or 0)),
                  (self.exclusive_minimum, ">", value > (self.exclusive_minimum or 0)),
                  (self.exclusive_maximum, "<", value < (self.exclusive_maximum or 0)))
        for limit, op, ok in checks:
            if limit is not None and not ok:
                return f"must be {op} {limit:g}, got {value!r}"
        return None


#: A count of at least one (epochs, batch sizes, layers, ...).
Count = Annotated[int, Bound(minimum=1)]
#: A count that may be zero (0 often meaning "none" or "all", as documented per field).
NonNegative = Annotated[int, Bound(minimum=0)]
#: A real number that may be zero (weight decays).
NonNegativeReal = Annotated[float, Bound(minimum=0)]
#: A share in [0, 1].
Share = Annotated[float, Bound(minimum=0, maximum=1)]


@dataclass(frozen=True)
class BackboneConfig:
    """Which decoder to adapt and how to load it.

    ``model_id`` is a hub id or a local directory. ``arch`` instead builds a randomly
    initialised model from a transformers config dict (tests and benchmarks, no download).
    """

    name: str = "tiny-llama"
    model_id: str = ""
    #: Tokenizer hub id or path; "" uses model_id; "char" is the built-in offline
    #: character-level tokenizer (tests and random-weight benchmarks).
    tokenizer: str = ""
    arch: dict[str, Any] | None = None
    init_seed: int = 0
    quantized: bool = False
    trust_remote_code: bool = False
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    #: ``auto``: flash attention 3/2 where installed (CUDA) and the model class supports
    #: it, else SDPA where it does, else eager (dfil.model.attention; said in the log).
    attn_implementation: Literal["auto", "sdpa", "eager", "flash_attention_2",
                                 "flash_attention_3"] = "auto"
    #: Recompute activations in the backward pass (non-reentrant): less memory for the
    #: largest backbones (72B 4-bit), about a third more compute.
    gradient_checkpointing: bool = False


@dataclass(frozen=True)
class LoraConfig:
    """Paper Sec. 5.1 / App. C.1: r=16, alpha=32, dropout 0.05, on q,v (FRoG) or q,k,v,o."""

    r: Count = 16
    alpha: Count = 32
    dropout: Annotated[float, Bound(minimum=0, exclusive_maximum=1)] = 0.05
    targets: tuple[Literal["q", "k", "v", "o"], ...] = ("q", "v")


@dataclass(frozen=True)
class HeadsConfig:
    """Head shapes and MF initialisation (Sec. 4.2-4.3, App. B.3)."""

    hidden: Count = 256
    #: The paper calls the main classifier linear; Table ablation_detail's counts need
    #: LN -> Linear(d,256) -> GELU -> Linear(256,Q). Reproduction note R-classifier.
    classifier: Literal["mlp", "linear"] = "mlp"
    #: CORAL/CORN heads: share the classifier's LN -> Linear -> GELU trunk (note R-ordinal).
    ordinal_trunk: bool = True
    mf_init: Literal["qure", "uniform"] | tuple[float, ...] = "qure"
    #: How the unreachable QuRe target is inverted (note R-qure-init).
    qure_inversion: Literal["paper", "pin_last"] = "paper"
    #: "zero_raw": delta_raw = 0, centers (.14, .26, ..., .98); "evenly": invert
    #: linspace(.02, .98, Q) as closely as reachable (note R-uniform-init).
    uniform_mode: Literal["zero_raw", "evenly"] = "zero_raw"
    width_init: Annotated[float, Bound(exclusive_minimum=0)] = 0.1
    #: Frozen-backbone mode only: "standardize" divides each feature dimension by its
    #: training-set std after removing its mean, before the heads (note R-feature-norm);
    #: "none" is the paper's (heads read the LoRA backbone's state directly).
    feature_norm: Literal["none", "standardize"] = "none"


@dataclass(frozen=True)
class LossConfig:
    """Eq. (loss): CE(y_hat) + lambda_dfil * CE(mu) + lambda_p * ||p_hat - p||^2."""

    lambda_dfil: float = 0.5
    lambda_p: float = 0.5
    class_weights: Literal["inverse_frequency", "none"] = "inverse_frequency"
    #: Apply the class weights to the membership CE too (note R-weighted-mf-ce).
    weight_mf_ce: bool = True
    #: g = stop-gradient on p_hat before the MF (few-shot and collapse remediation).
    stop_grad_p: bool = False
    distill_tau: float = 2.0
    distill_lambda: float = 0.3
    #: Distillation teacher (MF branch) detached, so only the classifier is pulled.
    distill_detach_teacher: bool = True


@dataclass(frozen=True)
class ModelConfig:
    """Everything needed to rebuild a trained model from its checkpoint."""

    method: str = "dfil"
    num_classes: Annotated[int, Bound(minimum=2)] = 8
    #: "lora": LoRA-adapted backbone (the paper). "none": frozen backbone, heads only
    #: (the embedded default's CPU mode; named as such in every output).
    adapter: Literal["lora", "none"] = "lora"
    backbone: BackboneConfig = field(default_factory=BackboneConfig)
    lora: LoraConfig = field(default_factory=LoraConfig)
    heads: HeadsConfig = field(default_factory=HeadsConfig)
    loss: LossConfig = field(default_factory=LossConfig)


def check_feature_norm(model: ModelConfig) -> None:
    """Feature standardisation is for frozen features: refused with a LoRA adapter, by a
    grid's cells (:func:`dfil.cell.resolve`) and by :func:`dfil.model.build_model`."""
    if model.heads.feature_norm != "none" and model.adapter != "none":
        raise ConfigError(f"model.heads.feature_norm: {model.heads.feature_norm!r} "
                          "standardises frozen features and needs model.adapter: none, got "
                          f"{model.adapter!r} (note R-feature-norm)")


T = TypeVar("T")


def from_dict(cls: type[T], data: Mapping[str, Any] | None, path: str = "") -> T:
    """Build dataclass ``cls`` from ``data``, strictly.

    Unknown keys, wrong types and values outside a ``Literal`` raise :class:`ConfigError`
    naming the dotted key path (``path`` is the prefix, e.g. ``"model"``).
    """
    data = {} if data is None else data
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path or '<root>'}: expected a mapping, got {type(data).__name__}")
    hints = get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        where = f"{path}.{unknown[0]}" if path else unknown[0]
        raise ConfigError(f"{where}: unknown key; allowed keys are {sorted(names)}")
    kwargs = {}
    for key, value in data.items():
        kwargs[key] = _coerce(hints[key], value, f"{path}.{key}" if path else key)
    return cls(**kwargs)


def _coerce(hint: Any, value: Any, path: str) -> Any:
    origin = get_origin(hint)
    if dataclasses.is_dataclass(hint):
        return from_dict(hint, value, path)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in get_args(hint):
            if option is type(None):
                if value is None:
                    return None
                continue
            try:
                return _coerce(option, value, path)
            except ConfigError as err:
                errors.append(str(err))
        raise ConfigError(errors[-1] if errors else f"{path}: must not be null")
    if origin is Literal:
        if value not in get_args(hint):
            raise ConfigError(f"{path}: {value!r} is not one of {list(get_args(hint))}")
        return value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{path}: expected a list, got {value!r}")
        (item,) = get_args(hint)[:1]
        return tuple(_coerce(item, v, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path}: expected a mapping, got {value!r}")
        return dict(value)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{path}: expected a number, got {value!r}")
        return float(value)
    if hint in (int, bool, str):
        if type(value) is not hint:
            raise ConfigError(f"{path}: expected {hint.__name__}, got {value!r}")
        return value
    raise ConfigError(f"{path}: unsupported type {hint!r}")  # pragma: no cover


def deep_merge(base: Mapping, over: Mapping) -> dict:
    """``base`` with ``over`` laid on top: nested mappings merge key by key, any other
    value (lists included) replaces the base's. Neither input is modified."""
    out = copy.deepcopy(dict(base))
    for k, v in over.items():
        both = isinstance(v, Mapping) and isinstance(out.get(k), Mapping)
        out[k] = deep_merge(out[k], v) if both else copy.deepcopy(v)
    return out


def check_bounds(config: Any, path: str = "") -> None:
    """Every :class:`Bound` of dataclass ``config``'s fields, nested ones included;
    :class:`ConfigError` naming the dotted key path (``train.epochs: must be >= 1, got 0``)."""
    hints = get_type_hints(type(config), include_extras=True)
    for f in dataclasses.fields(config):
        _check_value(hints[f.name], getattr(config, f.name), f"{path}.{f.name}" if path else f.name)


def _check_value(hint: Any, value: Any, path: str) -> None:
    if dataclasses.is_dataclass(value):
        check_bounds(value, path)
        return
    origin = get_origin(hint)
    if origin is Annotated:
        base, *extras = get_args(hint)
        for bound in extras:
            problem = isinstance(bound, Bound) and bound.violation(value)
            if problem:
                raise ConfigError(f"{path}: {problem}")
        _check_value(base, value, path)
    elif origin in (typing.Union, types.UnionType) and value is not None:
        for option in get_args(hint):
            if get_origin(option) is Annotated and isinstance(value, (int, float)):
                _check_value(option, value, path)
            elif get_origin(option) is tuple and isinstance(value, tuple):
                _check_value(option, value, path)
    elif origin is tuple and isinstance(value, tuple):
        item = get_args(hint)[0]
        for i, v in enumerate(value):
            _check_value(item, v, f"{path}[{i}]")


def to_dict(config: Any) -> dict[str, Any]:
    """Plain-dict form of a config dataclass (tuples become lists), the inverse of from_dict."""
    return json.loads(json.dumps(dataclasses.asdict(config)))


def config_hash(config: Any) -> str:
    """Short stable hash of a resolved config, recorded in every metrics file."""
    blob = json.dumps(to_dict(config), sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
