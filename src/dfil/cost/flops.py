"""Parameter counts and FLOPs per token of a LoRA-adapted decoder, from its architecture.

The rule (FLOPs per token of a sequence of n tokens; N = the matmul weights a token passes
through, i.e. the attention and MLP projections of every layer; embeddings and norms do
no matmuls, and the bare decoder the heads read has no LM head):

- forward: 2N (one multiply-add per weight; Kaplan et al. 2020, "Scaling laws", Sec. 2.1)
  + the LoRA path 2 N_lora + attention A = 4 L d_attn c: QK^T and the weighted sum of V,
  2 L d_attn c FLOPs each (Hoffmann et al. 2022, App. F), over a mean context c = (n+1)/2
  (a causal kernel skips the masked half, Dao 2023 FlashAttention-2 Sec. 3.1);
- backward: a trained weight costs 4 FLOPs per token (input and weight gradient, each as
  much as the forward: Narayanan et al. 2021, Megatron-LM, Sec. 5.1, whence 6N for full
  training); a frozen weight only passes the input gradient on, 2N (what LoRA saves: Hu et
  al. 2021, Sec. 4.2); LoRA's own weights 4 N_lora; attention 2.5 A (FlashAttention-2
  Sec. 4.1: its backward runs 2.5x the forward's matmul FLOPs);
- gradient checkpointing recomputes the forward once more in the backward pass.

So training is ~4N + 6 N_lora + 3.5 A per token (6N + 3.5 A with every weight trained),
and evaluation 2N + 2 N_lora + A. The heads (an MLP on one token per prompt) are left out:
under 0.01% of a 1.5B backbone's forward at n = 100.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: model_types whose q, k, v are one fused projection (LoRA adapts it whole).
FUSED_QKV = {"phi3", "gpt_neox", "falcon", "bloom", "gpt2"}
#: model_types with biases on q, k and v.
QKV_BIAS = {"qwen2"}


@dataclass(frozen=True)
class Shape:
    """The fields of a decoder config that set its parameter shapes."""

    model_type: str
    d: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    ff: int
    vocab: int
    tied: bool

    @property
    def q_out(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_out(self) -> int:
        return self.kv_heads * self.head_dim


def shape(arch: Mapping) -> Shape:
    """The :class:`Shape` of a transformers config dict (``ValueError`` naming a missing
    field)."""
    try:
        d, heads = int(arch["hidden_size"]), int(arch["num_attention_heads"])
        return Shape(model_type=str(arch.get("model_type", "")), d=d,
                     layers=int(arch["num_hidden_layers"]), heads=heads,
                     kv_heads=int(arch.get("num_key_value_heads") or heads),
                     head_dim=int(arch.get("head_dim") or d // heads),
                     ff=int(arch["intermediate_size"]), vocab=int(arch["vocab_size"]),
                     tied=bool(arch.get("tie_word_embeddings", False)))
    except KeyError as err:
        raise ValueError(f"architecture lacks {err.args[0]!r}: needs hidden_size, "
                         "num_hidden_layers, num_attention_heads, intermediate_size, "
                         "vocab_size") from None


def linear_params(s: Shape) -> int:
    """N: the projection weights of all layers (q, k, v, o; gated MLP's gate, up, down)."""
    attention = s.d * s.q_out + 2 * s.d * s.kv_out + s.q_out * s.d
    return s.layers * (attention + 3 * s.d * s.ff)


def total_params(s: Shape) -> int:
    """Every parameter of the causal LM as published: N, embeddings, an untied LM head,
    the norms (two per layer and a final one) and Qwen2's q/k/v biases."""
    bias = s.layers * (s.q_out + 2 * s.kv_out) if s.model_type in QKV_BIAS else 0
    norms = (2 * s.layers + 1) * s.d
    return linear_params(s) + s.vocab * s.d * (1 if s.tied else 2) + norms + bias


def decoder_params(s: Shape) -> int:
    """The parameters a training job holds: the bare decoder, without the LM head."""
    return total_params(s) - (0 if s.tied else s.vocab * s.d)


def lora_params(s: Shape, targets: Sequence[str], r: int) -> int:
    """LoRA's A and B on ``targets`` (subset of q, k, v, o) of every layer: r x (fan-in +
    fan-out) per adapted projection; a fused q,k,v projection is adapted once, whole."""
    outs = {"q": s.q_out, "k": s.kv_out, "v": s.kv_out, "o": s.d}
    ins = {"q": s.d, "k": s.d, "v": s.d, "o": s.q_out}
    chosen = set(targets)
    per_layer = 0
    if s.model_type in FUSED_QKV and chosen & {"q", "k", "v"}:
        per_layer += r * (s.d + s.q_out + 2 * s.kv_out)
        chosen -= {"q", "k", "v"}
    per_layer += sum(r * (ins[t] + outs[t]) for t in chosen)
    return s.layers * per_layer


def attention_flops(s: Shape, n: float) -> float:
    """A: forward attention FLOPs per token of an n-token causal sequence."""
    return 4 * s.layers * s.q_out * (n + 1) / 2


def forward_flops(s: Shape, n: float, n_lora: int = 0) -> float:
    """FLOPs per token of one forward pass (evaluation)."""
    return 2 * linear_params(s) + 2 * n_lora + attention_flops(s, n)


def train_flops(s: Shape, n: float, n_lora: int, checkpointing: bool = False) -> float:
    """FLOPs per token of one LoRA training step (forward + backward, frozen base)."""
    a, n_lin = attention_flops(s, n), linear_params(s)
    step = (2 * n_lin + 2 * n_lora + a) + (2 * n_lin + 4 * n_lora + 2.5 * a)
    return step + (forward_flops(s, n, n_lora) if checkpointing else 0)
