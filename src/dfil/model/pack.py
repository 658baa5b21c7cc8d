"""A pack: the K seeds of one cell configuration over one frozen base (mLoRA-style).

One decoder's frozen weights serve K seeds at once. Each adapted projection becomes a
:class:`PackedLoraLinear`: the frozen layer runs once over the whole pack's tokens, and
each seed's LoRA ``B_k A_k`` runs over its own span of them, with its own dropout stream.
Each seed has its own heads (:func:`dfil.model.dual_path.build_heads`). A pack's batch is
the K seeds' micro-batches side by side, ``b`` examples each, seed k's at rows
``k b : (k + 1) b`` (:func:`seed_spans`), so one forward and one backward of the base
serve every seed, and seed k's loss reaches only seed k's LoRA and heads.

A pack is built as K solo models would be (:func:`build_pack`): per seed, the global RNG
seeded with it, then its LoRA (peft's initialisation, through peft) and its heads, so
seed k starts from the weights ``build_model(config, seed=k)`` draws. A pack of one
computes what the peft model computes, op for op. Each seed's LoRA is saved in peft's
own format (:func:`save_adapter`) and loads with ``peft.PeftModel.from_pretrained``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from dfil.config.cell import ModelConfig
from dfil.model.backbone import hidden_size, load_backbone
from dfil.model.dual_path import DualPathHeads, DualPathModel, HeadOutputs, build_heads
from dfil.model.lora import apply_lora, lora_target_modules


class Spans:
    """Where each seed's tokens are in the pack's flattened ``[N, in]`` activations: seed
    k's at ``bounds[k]:bounds[k + 1]`` (host ints, set before each forward)."""

    def __init__(self, k: int):
        self.k = k
        self.bounds: list[int] = []

    def set(self, bounds: Sequence[int]) -> None:
        if len(bounds) != self.k + 1:
            raise ValueError(f"a pack of {self.k} seeds needs {self.k + 1} bounds, "
                             f"not {len(bounds)}")
        self.bounds = [int(b) for b in bounds]


class PackedLoraLinear(nn.Module):
    """A frozen projection shared by K seeds, each with its own LoRA.

    ``x [..., N, in]`` flattened to ``[N', in]``; ``base(x) + s B_k A_k drop_k(x_k)`` for
    seed k's span ``x_k`` of rows (``spans``). ``a[k] [r, in]``, ``b[k] [out, r]``;
    ``generators[k]`` draws seed k's dropout masks (None: the global generator, as peft's
    ``nn.Dropout`` does)."""

    def __init__(self, base: nn.Module, a: Sequence[torch.Tensor], b: Sequence[torch.Tensor],
                 scaling: float, dropout: float, spans: Spans):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.ParameterList([nn.Parameter(w.detach().clone()) for w in a])
        self.lora_B = nn.ParameterList([nn.Parameter(w.detach().clone()) for w in b])
        self.scaling, self.dropout, self.spans = scaling, dropout, spans
        self.generators: list[torch.Generator | None] = [None] * len(a)

    def _drop(self, x: torch.Tensor, k: int) -> torch.Tensor:
        if not self.training or self.dropout == 0:
            return x
        if self.generators[k] is None:
            return F.dropout(x, self.dropout, True)
        keep = torch.empty_like(x).bernoulli_(1 - self.dropout, generator=self.generators[k])
        return x * keep.div_(1 - self.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        flat = x.reshape(-1, x.shape[-1])
        bounds = self.spans.bounds
        parts = []
        for k, (a, b) in enumerate(zip(self.lora_A, self.lora_B, strict=True)):
            xk = flat[bounds[k]:bounds[k + 1]].to(a.dtype)
            parts.append(F.linear(F.linear(self._drop(xk, k), a), b) * self.scaling)
        lora = parts[0] if len(parts) == 1 else torch.cat(parts)
        return (result + lora.reshape(result.shape)).to(result.dtype)


class PackedModel(nn.Module):
    """K seeds over one frozen decoder: ``trunk`` (a :class:`DualPathModel` whose
    projections are :class:`PackedLoraLinear`, its heads seed 0's) and ``heads[k]``."""

    def __init__(self, trunk: DualPathModel, heads: Sequence[DualPathHeads], spans: Spans,
                 seeds: Sequence[int]):
        super().__init__()
        self.trunk, self.heads, self.spans = trunk, nn.ModuleList(heads), spans
        self.seeds = tuple(seeds)

    @property
    def packed(self) -> list[PackedLoraLinear]:
        return [m for m in self.trunk.modules() if isinstance(m, PackedLoraLinear)]

    def seed_parameters(self, k: int) -> list[nn.Parameter]:
        """Seed k's trainable tensors: its LoRA matrices and its heads."""
        lora = [p for m in self.packed for p in (m.lora_A[k], m.lora_B[k])]
        return lora + [p for p in self.heads[k].parameters() if p.requires_grad]

    def seed_state(self, k: int) -> dict[str, torch.Tensor]:
        """Seed k's trained tensors named as its solo model's
        (:func:`dfil.engine.checkpoint.trained_state`: ``heads.*`` and
        ``backbone.base_model.model.<module>.lora_A.default.weight``), detached, on CPU:
        a run directory's checkpoint in today's schema."""
        state = self.heads[k].state_dict(prefix="heads.")
        for name, module in self.trunk.backbone.named_modules():
            if isinstance(module, PackedLoraLinear):
                for kind, weights in (("lora_A", module.lora_A), ("lora_B", module.lora_B)):
                    state[f"backbone.base_model.model.{name}.{kind}.default.weight"] = weights[k]
        return {name: t.detach().to("cpu").contiguous() for name, t in state.items()}

    def set_dropout_generators(self, generators: Sequence[torch.Generator | None]) -> None:
        """Seed k's LoRA dropout draws from ``generators[k]`` (None: the global RNG)."""
        for m in self.packed:
            m.generators = list(generators)

    def forward_padded(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                       last: torch.Tensor) -> list[HeadOutputs]:
        """A right-padded pack batch ``[K b, T]`` (seed k's rows ``k b : (k + 1) b``,
        ``last [K b]`` flat indices into ``[K b T]``): each seed's head outputs."""
        rows, width = input_ids.shape
        b = rows // len(self.seeds)
        self.spans.set([k * b * width for k in range(len(self.seeds) + 1)])
        states = self.trunk.padded_states(input_ids, attention_mask)
        h = states.flatten(0, 1)[last]
        return [self._heads(k, h[k * b:(k + 1) * b], states[k * b:(k + 1) * b],
                            attention_mask[k * b:(k + 1) * b])
                for k in range(len(self.seeds))]

    def forward_packed(self, input_ids: torch.Tensor, position_ids: torch.Tensor,
                       last: torch.Tensor, cu_seq_lens: torch.Tensor, max_length: int,
                       bounds: Sequence[int]) -> list[HeadOutputs]:
        """A padding-free pack batch ``[1, S]`` (see
        :meth:`DualPathModel.forward_packed`), seed k's tokens at ``bounds[k]:bounds[k +
        1]`` (host ints: :func:`seed_spans`): each seed's head outputs."""
        self.spans.set(bounds)
        h = self.trunk.packed_states(input_ids, position_ids, last, cu_seq_lens, max_length)
        b = len(h) // len(self.seeds)
        return [self._heads(k, h[k * b:(k + 1) * b]) for k in range(len(self.seeds))]

    def _heads(self, k: int, h: torch.Tensor, states: torch.Tensor | None = None,
               attention_mask: torch.Tensor | None = None) -> HeadOutputs:
        heads = self.heads[k]
        dtype = next(heads.parameters()).dtype
        if heads.attn is None:
            return heads(h.to(dtype))
        return heads(h.to(dtype), states.to(dtype), attention_mask)


def seed_spans(lengths: Sequence[int], seeds: int) -> list[int]:
    """Token bounds of each seed's examples in a padding-free pack batch whose examples
    have ``lengths`` (host ints, seed k's the k-th of ``seeds`` equal shares, in order)."""
    b, bounds = len(lengths) // seeds, [0]
    for k in range(seeds):
        bounds.append(bounds[-1] + int(sum(lengths[k * b:(k + 1) * b])))
    return bounds


def build_pack(config: ModelConfig, seeds: Sequence[int]) -> PackedModel:
    """The K seeds of ``config`` over one loaded backbone, each seed's LoRA and heads
    drawn as ``build_model(config, seed=seeds[k])`` draws them (peft's initialisation,
    after ``torch.manual_seed(seeds[k])``). LoRA backbones only; a 4-bit one is placed on
    its GPU by its loader, and the caller moves the heads there."""
    if config.adapter != "lora":
        raise ValueError("a pack shares a LoRA-adapted backbone; frozen-feature seeds "
                         "train on cached features")
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
    weights = {name: ([m.lora_A[n].weight for n in names], [m.lora_B[n].weight for n in names],
                      m.scaling["default"]) for name, m in adapted.items()}
    model = peft_model.base_model.unload()
    spans = Spans(len(seeds))
    for name, (a, b, scaling) in weights.items():
        parent, _, attr = name.rpartition(".")
        layer = model.get_submodule(parent) if parent else model
        setattr(layer, attr, PackedLoraLinear(getattr(layer, attr), a, b, scaling,
                                              config.lora.dropout, spans))
    return PackedModel(DualPathModel(model, heads[0], config.backbone), heads, spans, seeds)


def adapter_state(pack: PackedModel, k: int) -> dict[str, torch.Tensor]:
    """Seed k's LoRA as peft names it in ``adapter_model.safetensors``:
    ``base_model.model.<module>.lora_A.weight [r, in]`` and ``...lora_B.weight [out, r]``."""
    return {name.removeprefix("backbone.").replace(".default.weight", ".weight"): t
            for name, t in pack.seed_state(k).items() if name.startswith("backbone.")}


def save_adapter(pack: PackedModel, k: int, config: ModelConfig, out: str | Path) -> None:
    """Seed k's LoRA in peft's format under ``out`` (``adapter_config.json``,
    ``adapter_model.safetensors``), loadable by ``peft.PeftModel.from_pretrained``."""
    from peft import LoraConfig as PeftLoraConfig
    from safetensors.torch import save_file

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model_type = pack.trunk.backbone.config.model_type
    peft_config = PeftLoraConfig(r=config.lora.r, lora_alpha=config.lora.alpha,
                                 lora_dropout=config.lora.dropout, bias="none",
                                 target_modules=lora_target_modules(model_type,
                                                                    config.lora.targets))
    peft_config.save_pretrained(str(out))
    save_file({k_: v.contiguous() for k_, v in adapter_state(pack, k).items()},
              str(out / "adapter_model.safetensors"), metadata={"format": "pt"})
