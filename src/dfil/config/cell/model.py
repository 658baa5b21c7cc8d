"""The model's configuration: backbone, LoRA, heads, loss (pure Python, no torch).

Everything needed to rebuild a trained model from its checkpoint. Defaults follow the
paper's most likely reading; every place where the paper is silent or contradicts itself
is a named field here and a row in ``docs/reproduction-notes.md``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Discriminator, Field, Tag, WithJsonSchema, model_serializer
from pydantic_core import PydanticCustomError

from dfil.config.validation import (
    Count,
    NonNegative,
    NonNegativeReal,
    PositiveReal,
    StrictModel,
    TupleOf,
)
from dfil.core.methods import METHODS
from dfil.core.quantifiers import CENTER_LOW, CENTER_SPAN, QURE_CENTERS
from dfil.util.errors import ConfigError

#: The MF initialisations a grid names (``inits:``); a cell may also give its centers.
MfInitName = Literal["qure", "uniform"]


def known_method(name: str) -> str:
    """``name`` if :data:`dfil.core.methods.METHODS` holds it when validated (a method
    registered later, :func:`dfil.core.methods.register_method`, is known from then on)."""
    if name not in METHODS:
        names = [repr(n) for n in METHODS]
        raise PydanticCustomError("literal_error", "Input should be {expected}",
                                  {"expected": f"{', '.join(names[:-1])} or {names[-1]}"})
    return name


#: A method's name (:data:`dfil.core.methods.METHODS`); the JSON Schema lists the paper's.
MethodName = Annotated[str, AfterValidator(known_method),
                       WithJsonSchema({"enum": list(METHODS), "type": "string"})]


#: An MF center as Eq. (ordered_centers) can reach it.
Center = Annotated[float, Field(ge=CENTER_LOW, le=CENTER_LOW + CENTER_SPAN)]


def _mf_init_kind(value: Any) -> str:
    return "name" if isinstance(value, str) else "centers"


class BackboneConfig(StrictModel):
    """Which decoder to adapt and how to load it.

    ``model_id`` is a hub id or a local directory. ``arch`` instead builds a randomly
    initialised model from a transformers config dict (tests and benchmarks, no download).
    A hub backbone is pinned by ``revision``, the commit its jobs load from the fetched
    cache (:mod:`dfil.hub`); the commit is part of the config hash, the cache's location is
    not.
    """

    name: str = "tiny-llama"
    model_id: str = ""
    revision: str = ""
    """The hub commit of ``model_id`` (40 hex digits) a cell loads, fetched once by the
    workflow's fetch rule; "" for a local path, an ``embedded:`` or an ``arch`` backbone. A
    grid's backbone entry may name a branch or tag instead: the grid's lock file
    (``dfil grid lock``) turns it into its commit."""
    tokenizer: str = ""
    """Tokenizer hub id or path; "" uses model_id; "char" is the built-in offline
    character-level tokenizer (tests and random-weight benchmarks)."""
    arch: dict[str, Any] | None = None
    init_seed: NonNegative = 0
    quantized: bool = False
    trust_remote_code: bool = False
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    attn_implementation: Literal["auto", "sdpa", "eager", "flash_attention_2",
                                 "flash_attention_3"] = "auto"
    """``auto``: flash attention 3/2 where installed (CUDA) and the model class supports
    it, else SDPA where it does, else eager (dfil.model.attention; said in the log)."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass (non-reentrant): less memory for the
    largest backbones (72B 4-bit), about a third more compute."""

    @model_serializer(mode="wrap")
    def _unpinned_without_revision(self, handler):
        """An unpinned backbone dumps without ``revision``, so the cells of every grid
        written before revisions existed keep their config hashes."""
        data = handler(self)
        if isinstance(data, dict) and not self.revision:
            data.pop("revision", None)
        return data


class LoraConfig(StrictModel):
    """Paper Sec. 5.1 / App. C.1: r=16, alpha=32, dropout 0.05, on q,v (FRoG) or q,k,v,o."""

    r: Count = 16
    alpha: Count = 32
    dropout: Annotated[float, Field(ge=0, lt=1)] = 0.05
    targets: TupleOf[Literal["q", "k", "v", "o"]] = ("q", "v")


class HeadsConfig(StrictModel):
    """Head shapes and MF initialisation (Sec. 4.2-4.3, App. B.3)."""

    hidden: Count = 256
    classifier: Literal["mlp", "linear"] = "mlp"
    """The paper calls the main classifier linear; Table ablation_detail's counts need
    LN -> Linear(d,256) -> GELU -> Linear(256,Q). Reproduction note R-classifier."""
    ordinal_trunk: bool = True
    """CORAL/CORN heads: share the classifier's LN -> Linear -> GELU trunk (note
    R-ordinal)."""
    mf_init: Annotated[Annotated[MfInitName, Tag("name")]
                       | Annotated[TupleOf[Center], Tag("centers")],
                       Discriminator(_mf_init_kind)] = "qure"
    """A named initialisation, or the Q increasing centers in [0.02, 0.98]."""
    qure_inversion: Literal["paper", "pin_last"] = "paper"
    """How the unreachable QuRe target is inverted (note R-qure-init)."""
    uniform_mode: Literal["zero_raw", "evenly"] = "zero_raw"
    """"zero_raw": delta_raw = 0, centers (.14, .26, ..., .98); "evenly": invert
    linspace(.02, .98, Q) as closely as reachable (note R-uniform-init)."""
    width_init: PositiveReal = 0.1
    feature_norm: Literal["none", "standardize"] = "none"
    """Frozen-backbone mode only: "standardize" divides each feature dimension by its
    training-set std after removing its mean, before the heads (note R-feature-norm);
    "none" is the paper's (heads read the LoRA backbone's state directly)."""
    control_input: Literal["none", "proportion", "proportion_only"] = "none"
    """A positive control's input (frozen-backbone mode only): "proportion" appends each
    item's true proportion to its frozen features as one more dimension ``[N, d+1]``, so
    heads, composing and metrics that work must show the effect a grid's ``controls:``
    declares; "proportion_only" appends it to features set to zero, so the heads (of the
    reference's shapes) read the proportion alone and nothing a text shift can move (a
    control whose ceiling needs p_hat within about 0.01 of the truth on probe texts the
    training texts do not resemble); "none" is every other cell's."""


class LossConfig(StrictModel):
    """Eq. (loss): CE(y_hat) + lambda_dfil * CE(mu) + lambda_p * ||p_hat - p||^2."""

    lambda_dfil: NonNegativeReal = 0.5
    lambda_p: NonNegativeReal = 0.5
    class_weights: Literal["inverse_frequency", "none"] = "inverse_frequency"
    weight_mf_ce: bool = True
    """Apply the class weights to the membership CE too (note R-weighted-mf-ce)."""
    stop_grad_p: bool = False
    """g = stop-gradient on p_hat before the MF (few-shot and collapse remediation)."""
    distill_tau: PositiveReal = 2.0
    distill_lambda: NonNegativeReal = 0.3
    distill_detach_teacher: bool = True
    """Distillation teacher (MF branch) detached, so only the classifier is pulled."""


class ModelConfig(StrictModel):
    """Everything needed to rebuild a trained model from its checkpoint."""

    method: MethodName = "dfil"
    num_classes: Annotated[int, Field(ge=2)] = 8
    adapter: Literal["lora", "none"] = "lora"
    """"lora": LoRA-adapted backbone (the paper). "none": frozen backbone, heads only
    (the embedded default's CPU mode; named as such in every output)."""
    backbone: BackboneConfig = Field(default_factory=BackboneConfig)
    lora: LoraConfig = Field(default_factory=LoraConfig)
    heads: HeadsConfig = Field(default_factory=HeadsConfig)
    loss: LossConfig = Field(default_factory=LossConfig)


def check_feature_norm(model: ModelConfig) -> None:
    """Feature standardisation is for frozen features: refused with a LoRA adapter, by a
    grid's cells (:func:`dfil.config.cell.resolve`) and by :func:`dfil.model.build_model`."""
    if model.heads.feature_norm != "none" and model.adapter != "none":
        raise ConfigError(f"model.heads.feature_norm: {model.heads.feature_norm!r} "
                          "standardises frozen features and needs model.adapter: none, got "
                          f"{model.adapter!r} (note R-feature-norm)")
    if model.heads.control_input != "none" and model.adapter != "none":
        raise ConfigError(f"model.heads.control_input: {model.heads.control_input!r} is "
                          "appended to frozen features and needs model.adapter: none, got "
                          f"{model.adapter!r}")


def check_revision(backbone: BackboneConfig) -> None:
    """A pinned backbone names a hub repo at a full commit, and reads its own tokenizer
    from the same snapshot (its jobs run with the hub offline)."""
    if not backbone.revision:
        return
    where = f"model.backbone.revision: backbone {backbone.name!r}"
    if not re.fullmatch(r"[0-9a-f]{40}", backbone.revision):
        raise ConfigError(f"{where}: a cell loads a commit (40 hex digits), got "
                          f"{backbone.revision!r}; a grid turns a branch into its commit "
                          "through its lock file (dfil grid lock)")
    if backbone.arch is not None or backbone.model_id.count("/") != 1 or \
            backbone.model_id.startswith(("/", ".", "embedded:")):
        raise ConfigError(f"{where}: a revision pins a hub repo (org/name), but model_id is "
                          f"{backbone.model_id!r}" + (" and arch is set" if backbone.arch else ""))
    if backbone.tokenizer not in ("", backbone.model_id):
        raise ConfigError(f"model.backbone.tokenizer: backbone {backbone.name!r} is pinned at "
                          f"a revision and reads the tokenizer of its own snapshot; got "
                          f"{backbone.tokenizer!r}")


def check_mf_init(model: ModelConfig) -> None:
    """An MF's initial centers fit its classes (App. B.3): "qure" is the 8 QuRe centers,
    explicit centers are ``num_classes`` strictly increasing values. Methods without an MF
    ignore the init."""
    init, q = model.heads.mf_init, model.num_classes
    if METHODS[model.method].mf is None:
        return
    if init == "qure" and q != len(QURE_CENTERS):
        raise ConfigError(f"model.heads.mf_init: 'qure' initialises {len(QURE_CENTERS)} "
                          f"centers, but model.num_classes is {q}; use 'uniform' or give "
                          f"{q} centers")
    if isinstance(init, tuple) and len(init) != q:
        raise ConfigError(f"model.heads.mf_init: {len(init)} centers for model.num_classes "
                          f"{q}")
    if isinstance(init, tuple) and any(b <= a for a, b in zip(init[:-1], init[1:], strict=True)):
        raise ConfigError(f"model.heads.mf_init: centers must increase strictly, got {init}")
