"""The dual-path model of Sec. 4.1: backbone -> h -> {main classifier, NumHead -> MF}.

The heads are a module of their own (:class:`DualPathHeads`) so that a frozen-backbone run
can train them on cached features; :class:`DualPathModel` puts them on a LoRA backbone.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from dfil.config.cell import BackboneConfig, HeadsConfig, ModelConfig, check_feature_norm
from dfil.core.methods import MethodSpec, method_spec
from dfil.model.attention import known_layout, takes_varlen
from dfil.model.backbone import (
    backbone_hidden_size,
    hidden_size,
    last_token_pool,
    load_backbone,
    position_ids_from_mask,
)
from dfil.model.heads import AttentionPool, FeatureStandardizer, NumericalHead
from dfil.model.lora import apply_lora
from dfil.model.registry import main_head, mf_kind
from dfil.model.registry.base import raw_columns


@dataclass
class HeadOutputs:
    """What the heads produce for a batch of B examples; absent paths are None.

    main_logits : the main head's logits, ``[B, Q]`` (classifier) or ``[B, Q-1]``
        (CORAL/CORN): its kind's own (:mod:`dfil.model.registry`).
    p : ``[B]`` p_hat in (0, 1), before any stop-gradient.
    mf_scores : ``[B, Q]`` memberships mu (Gaussian MFs) or logits (no_mf's Linear(1, Q)).
    """

    main_logits: torch.Tensor | None = None
    p: torch.Tensor | None = None
    mf_scores: torch.Tensor | None = None


class DualPathHeads(nn.Module):
    """All trainable heads of one method over pooled states ``h [B, d]``."""

    def __init__(self, d: int, num_classes: int, spec: MethodSpec, heads: HeadsConfig,
                 stop_grad_p: bool = False):
        super().__init__()
        self.spec = spec
        self.num_classes = num_classes
        self.stop_grad_p = stop_grad_p
        q, hidden = num_classes, heads.hidden
        #: The main path's kind (:mod:`dfil.model.registry`), None without a main path.
        self.kind = main_head(spec.main)
        self.main = None if self.kind is None else self.kind.build(d, q, heads)
        self.numeric = NumericalHead(d, hidden, raw_columns(heads)) if spec.numeric else None
        self.attn = AttentionPool(d) if spec.attn_pool else None
        # Frozen features only (note R-feature-norm): statistics set by fit_feature_norm.
        standardize = heads.feature_norm == "standardize"
        self.norm = FeatureStandardizer(d) if standardize else None
        self.state_norm = FeatureStandardizer(d) if standardize and spec.attn_pool else None
        #: The MF path's kind (:mod:`dfil.model.registry`), None without an MF path.
        self.mf_kind = mf_kind(spec.mf)
        self.mf = None if self.mf_kind is None else self.mf_kind.build(q, heads)
        if self.mf is not None and not spec.mf_trainable:
            self.mf.requires_grad_(False)

    def forward(self, h: torch.Tensor, states: torch.Tensor | None = None,
                attention_mask: torch.Tensor | None = None) -> HeadOutputs:
        """``h [B, d]``; ``states [B, T, d]`` and ``attention_mask [B, T]`` for attn_pool."""
        out = HeadOutputs()
        if self.norm is not None:
            h = self.norm(h)
        if self.state_norm is not None and states is not None:
            states = self.state_norm(states)
        if self.main is not None:
            out.main_logits = self.main(h)
        if self.numeric is not None:
            h_num = self.attn(states, attention_mask) if self.attn is not None else h
            out.p = self.numeric(h_num)
            if self.mf is not None:
                p_in = out.p.detach() if self.stop_grad_p else out.p
                out.mf_scores = self.mf(p_in.float())
        return out

    def fit_feature_norm(self, features: torch.Tensor,
                         states: torch.Tensor | None = None) -> None:
        """Set the feature standardisation from the training split's frozen features
        ``[N, d]`` (and token states ``[sum_i T_i, d]`` for attention pooling); a no-op
        unless ``heads.feature_norm`` is "standardize"."""
        if self.norm is not None:
            self.norm.fit(features.float())
        if self.state_norm is not None:
            if states is None:
                raise ValueError("attention pooling with feature_norm needs the token states")
            self.state_norm.fit(states.float())

    def centers(self) -> torch.Tensor | None:
        """``[Q]`` MF centers, or None where the MF path has none (its kind's)."""
        return None if self.mf_kind is None else self.mf_kind.centers(self.mf)

    def widths(self) -> torch.Tensor | None:
        """``[Q]`` MF widths, or None where the MF path has none (its kind's)."""
        return None if self.mf_kind is None else self.mf_kind.widths(self.mf)


class DualPathModel(nn.Module):
    """LoRA-adapted decoder plus :class:`DualPathHeads` (Sec. 4.1, Fig. architecture).

    A frozen-backbone model may start without its backbone (``backbone=None``): its heads
    train and predict on cached features, and :meth:`attach_backbone` loads the frozen
    decoder only when features must be computed.
    """

    def __init__(self, backbone: nn.Module | None, heads: DualPathHeads,
                 backbone_spec: BackboneConfig | None = None):
        super().__init__()
        self.backbone = backbone
        self.heads = heads
        self.backbone_spec = backbone_spec

    def attach_backbone(self) -> nn.Module:
        """The backbone, loading the frozen one now if the model was built without it.

        Loading does not touch the global RNG (a random-weight backbone seeds its own
        initialisation), so training draws the same numbers either way."""
        if self.backbone is None:
            if self.backbone_spec is None:
                raise ValueError("model was built without a backbone and without its spec")
            device = next(self.heads.parameters()).device
            with torch.random.fork_rng(devices=[]):
                backbone = load_backbone(self.backbone_spec).requires_grad_(False)
                self.backbone = backbone.to(device).train(self.training)
        return self.backbone

    def encode(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Final-layer states ``[B, T, d]`` of a batch padded on either side (transformers'
        masks); positions count real tokens only."""
        out = self.attach_backbone()(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids_from_mask(attention_mask),
            use_cache=False,
        )
        return out.last_hidden_state

    def padded_states(self, input_ids: torch.Tensor,
                      attention_mask: torch.Tensor) -> torch.Tensor:
        """Final-layer states ``[B, T, d]`` of a right-padded batch; the rows of pads are
        not meaningful. Causal attention keeps each real token from the pads after it,
        so the backbone runs without a mask where its family allows
        (:func:`dfil.model.attention.known_layout`); ``attention_mask [B, T]`` is used
        only by the families that keep transformers' masks."""
        backbone = self.attach_backbone()
        with known_layout(backbone) as mask_free:
            if mask_free:
                return backbone(input_ids=input_ids, use_cache=False).last_hidden_state
        return self.encode(input_ids, attention_mask)

    def forward_padded(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                       last: torch.Tensor) -> HeadOutputs:
        """Right-padded batch ``input_ids, attention_mask [B, T]`` whose example b ends at
        flat position ``last[b]`` of ``[B * T]``: the heads on each example's final state
        (and, for attention pooling, on every real token's)."""
        states = self.padded_states(input_ids, attention_mask)
        h = states.flatten(0, 1)[last]
        return self._heads(h, states, attention_mask)

    def forward_packed(self, input_ids: torch.Tensor, position_ids: torch.Tensor,
                       last: torch.Tensor, cu_seq_lens: torch.Tensor,
                       max_length: int) -> HeadOutputs:
        """Padding-free forward: ``input_ids, position_ids [1, S]`` hold B examples, the
        b-th at ``cu_seq_lens[b]:cu_seq_lens[b + 1]`` (``[B + 1]`` int32, positions
        restarting at 0), ``max_length`` the longest (host int), ``last [B]`` each one's
        final token. Flash attention's varlen kernel takes the boundaries as they are:
        no mask is built. Not for attention pooling, which needs padded token states."""
        if self.pools_attention:
            raise ValueError("attention pooling needs padded batches, not packed ones")
        return self._heads(self.packed_states(input_ids, position_ids, last, cu_seq_lens,
                                              max_length))

    def packed_states(self, input_ids: torch.Tensor, position_ids: torch.Tensor,
                      last: torch.Tensor, cu_seq_lens: torch.Tensor,
                      max_length: int) -> torch.Tensor:
        """Each example's final state ``[B, d]`` of a padding-free batch (arguments as
        :meth:`forward_packed`'s)."""
        backbone = self.attach_backbone()
        if not takes_varlen(backbone):
            raise ValueError("packed batches need flash attention (cu_seq_lens); this "
                             f"backbone runs {backbone.config._attn_implementation}")
        with known_layout(backbone):
            out = backbone(input_ids=input_ids, position_ids=position_ids,
                           cu_seq_lens_q=cu_seq_lens, cu_seq_lens_k=cu_seq_lens,
                           max_length_q=max_length, max_length_k=max_length, use_cache=False)
        return out.last_hidden_state[0][last]

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> HeadOutputs:
        """Any padding (left or right): transformers' masks, last-token pooling."""
        states = self.encode(input_ids, attention_mask)
        return self._heads(last_token_pool(states, attention_mask), states, attention_mask)

    @property
    def pools_attention(self) -> bool:
        """Whether the heads pool every token's state (attention pooling), which needs
        padded batches."""
        return self.heads.attn is not None

    def _heads(self, h: torch.Tensor, states: torch.Tensor | None = None,
               attention_mask: torch.Tensor | None = None) -> HeadOutputs:
        return apply_heads(self.heads, h, states, attention_mask)


def apply_heads(heads: DualPathHeads, h: torch.Tensor, states: torch.Tensor | None = None,
                attention_mask: torch.Tensor | None = None) -> HeadOutputs:
    """``heads`` on ``h [B, d]``; token ``states [B, T, d]`` only reach attention pooling,
    and only then are they cast to the heads' dtype."""
    head_dtype = next(heads.parameters()).dtype
    if heads.attn is None:
        return heads(h.to(head_dtype))
    return heads(h.to(head_dtype), states.to(head_dtype), attention_mask)


def build_heads(config: ModelConfig, d: int) -> DualPathHeads:
    """The heads over the backbone's ``d`` features, plus one input dimension for a
    positive control's appended proportion (``heads.control_input``)."""
    spec = method_spec(config.method)
    d += config.heads.control_input != "none"
    return DualPathHeads(d, config.num_classes, spec, config.heads, config.loss.stop_grad_p)


def build_model(config: ModelConfig, seed: int | None = None,
                backbone: bool = True) -> DualPathModel:
    """Backbone (LoRA-wrapped) + heads for ``config``; heads in float32.

    ``seed`` seeds the LoRA and head initialisation (after a random-weight backbone has
    been built from its own ``init_seed``), so each training seed starts elsewhere.
    ``backbone=False`` (frozen backbone only) builds the heads alone, with the same
    initialisation; the backbone is loaded by :meth:`DualPathModel.attach_backbone` if
    features must be computed.
    """
    spec = method_spec(config.method)
    if not spec.trains:
        raise ValueError(f"method {config.method!r} trains nothing; use dfil.model.zero_shot")
    check_feature_norm(config)
    if not backbone:
        if config.adapter != "none":
            raise ValueError("only a frozen backbone (model.adapter: none) can be left out")
        d = backbone_hidden_size(config.backbone)
        if seed is not None:
            torch.manual_seed(seed)
        return DualPathModel(None, build_heads(config, d), config.backbone)
    model = load_backbone(config.backbone)
    if seed is not None:
        torch.manual_seed(seed)
    if config.adapter == "lora":
        model = apply_lora(model, config.lora, quantized=config.backbone.quantized)
    else:
        model.requires_grad_(False)
    return DualPathModel(model, build_heads(config, hidden_size(model)), config.backbone)


def count_trainable(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
