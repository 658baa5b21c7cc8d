"""A pack: the K seeds of one cell configuration over one frozen base (mLoRA-style).

One decoder's frozen weights serve K seeds at once. Each adapted projection becomes a
:class:`PackedLoraLinear`: the frozen layer runs once over the whole pack's tokens, and
each seed's LoRA ``B_k A_k`` runs over its own span of them, with its own dropout stream.
Each seed has its own heads (:func:`dfil.model.dual_path.build_heads`). A pack's batch is
the K seeds' micro-batches side by side, ``b`` examples each, seed k's at rows
``k b : (k + 1) b`` (a padding-free one's tokens bounded by :func:`seed_spans`), so one
forward and one backward of the base serve every seed, and seed k's loss reaches only
seed k's LoRA and heads.

A pack is built as K solo models would be (:func:`build_pack`): per seed, the global RNG
seeded with it, then its LoRA (peft's initialisation, through peft) and its heads, so
seed k starts from the weights ``build_model(config, seed=k)`` draws. A pack of one
computes what the peft model computes, op for op (a 4-bit layer's LoRA output is added
in float32, then cast, where peft casts it first: the same under bf16 autocast). Each
seed's checkpoint is its solo model's (:meth:`PackedModel.seed_state`), so its LoRA is
saved in peft's own format as a solo run's is (:func:`dfil.model.adapter.save_adapter`).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from dfil.config.cell import LoraConfig, ModelConfig
from dfil.model.backbone import backbone_hidden_size, hidden_size, load_backbone
from dfil.model.dual_path import (
    DualPathHeads,
    DualPathModel,
    HeadOutputs,
    apply_heads,
    build_heads,
)
from dfil.model.lora import apply_lora


class PackStep:
    """What one forward of a pack tells its packed layers: where each seed's tokens are in
    the flattened ``[N, in]`` activations (seed k's at ``bounds[k]:bounds[k + 1]``) and,
    in a pack of several seeds, each seed's dropout seed for this forward (host ints)."""

    def __init__(self, k: int):
        self.k = k
        self.bounds: list[int] = []
        self.dropout_seeds: list[int] | None = None

    def set(self, bounds: Sequence[int], dropout_seeds: Sequence[int] | None) -> None:
        if len(bounds) != self.k + 1:
            raise ValueError(f"a pack of {self.k} seeds needs {self.k + 1} bounds, "
                             f"not {len(bounds)}")
        self.bounds = [int(b) for b in bounds]
        self.dropout_seeds = None if dropout_seeds is None else list(dropout_seeds)


class PackedLoraLinear(nn.Module):
    """A frozen projection shared by K seeds, each with its own LoRA.

    ``x [..., in]`` flattened to ``[N, in]``; ``base(x) + s B_k A_k drop_k(x_k)`` for seed
    k's rows ``x_k`` (``step.bounds``). ``a[k] [r, in]``, ``b[k] [out, r]``; ``s`` is
    alpha / r (peft's scaling). Seed k's dropout mask is a function of its seed for this
    forward and the layer's ``index`` (a generator made for it), so a recomputed forward
    (gradient checkpointing) draws the same mask; with no such seeds (a pack of one), the
    global RNG, as peft's ``nn.Dropout``, which checkpointing replays."""

    def __init__(self, base: nn.Module, a: Sequence[torch.Tensor], b: Sequence[torch.Tensor],
                 lora: LoraConfig, step: PackStep, index: int):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.ParameterList([nn.Parameter(w.detach().clone()) for w in a])
        self.lora_B = nn.ParameterList([nn.Parameter(w.detach().clone()) for w in b])
        self.scaling, self.dropout = lora.alpha / lora.r, lora.dropout
        self.step, self.index = step, index

    def _drop(self, x: torch.Tensor, k: int) -> torch.Tensor:
        if not self.training or self.dropout == 0:
            return x
        if self.step.dropout_seeds is None:
            return F.dropout(x, self.dropout, True)
        mine = torch.Generator(x.device).manual_seed(
            (self.step.dropout_seeds[k] * 1_000_003 + self.index) % 2**63)
        keep = torch.empty_like(x, dtype=torch.bool).bernoulli_(1 - self.dropout,
                                                                 generator=mine)
        return x * keep / (1 - self.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        flat = x.reshape(-1, x.shape[-1])
        bounds = self.step.bounds
        if bounds[-1] != flat.shape[0]:
            raise ValueError(f"a packed layer got {flat.shape[0]} rows; the pack's forward "
                             f"set {bounds[-1]} (run the pack through PackedModel)")
        parts = []
        for k, (a, b) in enumerate(zip(self.lora_A, self.lora_B, strict=True)):
            xk = flat[bounds[k]:bounds[k + 1]].to(a.dtype)
            parts.append(F.linear(F.linear(self._drop(xk, k), a), b) * self.scaling)
        lora = parts[0] if len(parts) == 1 else torch.cat(parts)
        return (result + lora.reshape(result.shape)).to(result.dtype)


class PackedModel(DualPathModel):
    """K seeds over one frozen decoder: ``backbone``'s adapted projections are
    :class:`PackedLoraLinear`, ``heads[k]`` seed k's heads. In a pack of several seeds,
    seed k's dropout seeds come from its own stream, a host ``random.Random(seeds[k])``
    (no tensor, so no device read); a frozen backbone's pack has none (no LoRA)."""

    def __init__(self, backbone: nn.Module, heads: Sequence[DualPathHeads], step: PackStep,
                 seeds: Sequence[int], backbone_spec=None):
        super().__init__(backbone, nn.ModuleList(heads), backbone_spec)
        self.step, self.seeds = step, tuple(seeds)
        own = len(seeds) > 1 and backbone is not None  # a frozen pack has no LoRA dropout
        self.dropout_streams = [random.Random(s) for s in seeds] if own else None

    @property
    def packed(self) -> list[PackedLoraLinear]:
        return [module for _, module in self.packed_names()]

    def packed_names(self) -> list[tuple[str, PackedLoraLinear]]:
        """The adapted projections and their names in the backbone, in module order (none
        in a frozen backbone's pack, whose heads train on cached features)."""
        if self.backbone is None:
            return []
        return [(name, m) for name, m in self.backbone.named_modules()
                if isinstance(m, PackedLoraLinear)]

    @property
    def pools_attention(self) -> bool:
        return any(heads.attn is not None for heads in self.heads)

    def seed_parameters(self, k: int) -> list[nn.Parameter]:
        """Seed k's trainable tensors, in its solo model's order: its LoRA matrices, then
        its heads."""
        lora = [p for m in self.packed for p in (m.lora_A[k], m.lora_B[k])]
        return lora + [p for p in self.heads[k].parameters() if p.requires_grad]

    def seed_state(self, k: int) -> dict[str, torch.Tensor]:
        """Seed k's trained tensors named as its solo model's
        (:func:`dfil.engine.checkpoint.trained_state`: ``heads.*`` and
        ``backbone.base_model.model.<module>.lora_A.default.weight``), detached, on CPU:
        a run directory's checkpoint in today's schema."""
        state = self.heads[k].state_dict(prefix="heads.")
        for name, module in self.packed_names():
            for kind, weights in (("lora_A", module.lora_A), ("lora_B", module.lora_B)):
                state[f"backbone.base_model.model.{name}.{kind}.default.weight"] = weights[k]
        return {name: t.detach().to("cpu").contiguous() for name, t in state.items()}

    def forward(self, *args, **kwargs):
        raise TypeError("a pack runs through forward_padded or forward_packed, which "
                        "return each seed's head outputs")

    def _begin(self, sizes: Sequence[int] | None,
               rows: int) -> tuple[list[int], list[int] | None]:
        """Check this forward's seed ``sizes`` (None: ``rows`` split equally); each seed's
        first row and the end (``[K + 1]``), and this forward's dropout seeds."""
        k_seeds = len(self.seeds)
        if sizes is None:
            if rows % k_seeds:
                raise ValueError(f"a pack batch of {rows} examples does not split into "
                                 f"{k_seeds} seeds' equal micro-batches")
            sizes = [rows // k_seeds] * k_seeds
        if len(sizes) != k_seeds or sum(sizes) != rows:
            raise ValueError(f"seed sizes {list(sizes)} do not split a pack batch of {rows} "
                             f"examples into {k_seeds} seeds' rows")
        draws = None
        if self.training and self.dropout_streams is not None:
            draws = [stream.getrandbits(62) for stream in self.dropout_streams]
        return seed_rows(sizes), draws

    def forward_padded(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                       last: torch.Tensor, sizes: Sequence[int] | None = None
                       ) -> list[HeadOutputs]:
        """A right-padded pack batch ``[sum_k b_k, T]`` (seed k's ``sizes[k]`` rows after
        the seeds before it; None: equal shares), ``last`` flat indices into its ``[rows
        T]``: each seed's head outputs."""
        rows, width = input_ids.shape
        starts, draws = self._begin(sizes, rows)
        self.step.set([r * width for r in starts], draws)
        states = self.padded_states(input_ids, attention_mask)
        h = states.flatten(0, 1)[last]
        return [apply_heads(self.heads[k], h[a:b], states[a:b], attention_mask[a:b])
                for k, (a, b) in enumerate(itertools.pairwise(starts))]

    def forward_features(self, features: torch.Tensor, states: torch.Tensor | None = None,
                         attention_mask: torch.Tensor | None = None,
                         sizes: Sequence[int] | None = None,
                         widths: Sequence[int] | None = None) -> list[HeadOutputs]:
        """A batch of cached features ``[sum_k b_k, d]`` (and, for attention pooling, token
        ``states [rows, T, d]`` with ``attention_mask [rows, T]``), seed k's ``sizes[k]``
        rows after the seeds before it: each seed's heads on its rows. Seed k's states are
        cut to ``widths[k]`` tokens (host ints, :func:`seed_widths`; None: all ``T``), its
        rows' longest prompt, so its heads pool over the shape its solo batch has and
        compute its solo numbers bit for bit."""
        starts, _ = self._begin(sizes, len(features))
        if states is None:
            return [self.heads[k](features[a:b])
                    for k, (a, b) in enumerate(itertools.pairwise(starts))]
        widths = widths or [states.shape[1]] * len(self.seeds)
        return [self.heads[k](features[a:b], states[a:b, :w].contiguous(),
                              attention_mask[a:b, :w].contiguous())
                for k, ((a, b), w) in enumerate(zip(itertools.pairwise(starts), widths,
                                                    strict=True))]

    def forward_packed(self, input_ids: torch.Tensor, position_ids: torch.Tensor,  # noqa: PLR0913
                       last: torch.Tensor, cu_seq_lens: torch.Tensor, max_length: int,
                       bounds: Sequence[int], sizes: Sequence[int] | None = None
                       ) -> list[HeadOutputs]:
        """A padding-free pack batch ``[1, S]`` (see
        :meth:`DualPathModel.forward_packed`), seed k's ``sizes[k]`` examples (None: equal
        shares) with their tokens at ``bounds[k]:bounds[k + 1]`` (host ints:
        :func:`seed_spans`): each seed's head outputs."""
        if self.pools_attention:
            raise ValueError("attention pooling needs padded batches, not packed ones")
        starts, draws = self._begin(sizes, len(last))
        self.step.set(bounds, draws)
        h = self.packed_states(input_ids, position_ids, last, cu_seq_lens, max_length)
        return [apply_heads(self.heads[k], h[a:b])
                for k, (a, b) in enumerate(itertools.pairwise(starts))]


class SeedView(nn.Module):
    """Seed k of a pack as its solo model's module tree, over the same tensors: ``heads``
    (the pack's ``heads[k]``) and its LoRA matrices named as the solo model names them
    (``backbone.base_model.model.<module>.lora_A.default.weight``), in the solo model's
    order. So :func:`dfil.engine.checkpoint.trained_state`, ``load_into``,
    ``save_checkpoint``, the optimizer's parameter groups and a resume state see seed k
    as they see a solo run; loading into the view writes into the pack. It has no
    forward: the pack runs all seeds at once."""

    def __init__(self, pack: PackedModel, k: int):
        super().__init__()
        self.backbone = nn.Module()
        for name, module in pack.packed_names():
            for kind, weights in (("lora_A", module.lora_A), ("lora_B", module.lora_B)):
                _holder(self.backbone, f"base_model.model.{name}.{kind}.default"
                        ).register_parameter("weight", weights[k])
        self.heads = pack.heads[k]


def _holder(root: nn.Module, path: str) -> nn.Module:
    """The empty module at dotted ``path`` under ``root``, made where missing."""
    for part in path.split("."):
        child = getattr(root, part, None)
        if child is None:
            child = nn.Module()
            root.add_module(part, child)
        root = child
    return root


def seed_spans(lengths: Sequence[int], sizes: int | Sequence[int]) -> list[int]:
    """Token bounds of each seed's examples in a padding-free pack batch whose examples
    have ``lengths`` (host ints): seed k's are the ``sizes[k]`` after the seeds before it
    (an int: that many seeds' equal shares)."""
    if isinstance(sizes, int):
        sizes = [len(lengths) // sizes] * sizes
    tokens = seed_rows(lengths)
    return [tokens[end] for end in seed_rows(sizes)]


def seed_widths(lengths: np.ndarray, sizes: Sequence[int]) -> list[int]:
    """``[K]`` host ints: each seed's longest prompt in a pack batch whose examples have
    ``lengths [B]``, seed k's the ``sizes[k]`` after the seeds before it. That is the
    token width its solo batch of the same rows has: a features batch's states are as
    wide as its longest prompt, unrounded (:class:`dfil.engine.loader.Loader` builds them
    with :func:`dfil.engine.batching.token_rows` and no multiple)."""
    bounds = list(itertools.pairwise(seed_rows(sizes)))
    if any(a == b for a, b in bounds):
        raise ValueError(f"seed sizes {list(sizes)}: every seed of a pack batch has rows")
    return [int(lengths[a:b].max()) for a, b in bounds]


def seed_rows(sizes: Sequence[int]) -> list[int]:
    """``[K + 1]`` where each of K consecutive shares of ``sizes`` starts, and the end:
    seed k's rows of a pack batch are ``[out[k], out[k + 1])`` (host ints)."""
    return [0, *itertools.accumulate(int(n) for n in sizes)]


def build_pack(config: ModelConfig, seeds: Sequence[int]) -> PackedModel:
    """The K seeds of ``config`` over one loaded backbone, each seed's LoRA and heads
    drawn as ``build_model(config, seed=seeds[k])`` draws them (peft's initialisation,
    after ``torch.manual_seed(seeds[k])``). A 4-bit backbone is placed on its GPU by its
    loader, and the caller moves the heads there. A frozen backbone's pack
    (``model.adapter: none``) is its seeds' heads alone, which train on cached features
    (the backbone loads only if features must be computed)."""
    if config.adapter == "none":
        d = backbone_hidden_size(config.backbone)
        heads = []
        for seed in seeds:
            torch.manual_seed(seed)
            heads.append(build_heads(config, d))
        return PackedModel(None, heads, PackStep(len(seeds)), seeds, config.backbone)
    base = load_backbone(config.backbone)
    if base.config.model_type == "gpt2":
        raise ValueError("packs adapt nn.Linear projections; GPT-2's Conv1D is not one")
    names = ["default", *(f"s{k}" for k in range(1, len(seeds)))]
    heads = []
    for k, seed in enumerate(seeds):
        torch.manual_seed(seed)
        if k == 0:
            peft_model = apply_lora(base, config.lora, quantized=config.backbone.quantized)
        else:
            peft_model.add_adapter(names[k], peft_model.peft_config["default"])
        heads.append(build_heads(config, hidden_size(base)))
    adapted = {name: module for name, module in peft_model.base_model.model.named_modules()
               if hasattr(module, "lora_A") and "default" in module.lora_A}
    weights = {name: ([m.lora_A[n].weight for n in names], [m.lora_B[n].weight for n in names])
               for name, m in adapted.items()}
    model = peft_model.base_model.unload()
    step = PackStep(len(seeds))
    for index, (name, (a, b)) in enumerate(weights.items()):
        parent, _, attr = name.rpartition(".")
        layer = model.get_submodule(parent) if parent else model
        setattr(layer, attr, PackedLoraLinear(getattr(layer, attr), a, b, config.lora, step,
                                              index))
    return PackedModel(model, heads, step, seeds, config.backbone)
