"""GPU memory of one LoRA training step, computed from the architecture (not measured).

- weights: the bare decoder in bf16 (2 bytes per parameter), or with 4-bit NF4 QLoRA its
  projections at 4.127 bits each (4 bits + double-quantised constants, 0.127 bits:
  Dettmers et al. 2023, QLoRA, Sec. 3) and the rest (embeddings, norms, biases) in bf16;
- LoRA: fp32 weights, gradients and AdamW's two moments, 16 bytes per LoRA parameter
  (peft keeps adapters in fp32 over a bf16 base); the heads (< 0.1 GiB) are left out;
- activations saved for the backward pass, bf16 per token and layer: the inputs of the
  two norms (2d), of the q/k/v and MLP projections (2d), LoRA dropout's copy of each
  adapted input (d per adapted q/k/v, d_attn for o), what the attention kernel keeps
  (q, k, v and its output: 2 d_attn + 2 d_kv) and the gated MLP's four ff-wide tensors
  (gate and up outputs, the activation, their product): Korthikanti et al. 2022, Sec. 4.1,
  redone for a SwiGLU MLP and a flash/SDPA kernel that stores no n x n scores. With
  gradient checkpointing a layer keeps only its input (d), and one layer's activations
  are rebuilt at a time. One layer's activations more are counted as the backward's
  working set.

A pack of K seeds over one frozen base (:mod:`dfil.cost.packs`) holds the weights once,
K seeds' LoRA state and the activations of K micro-batches side by side.

Checked against the peaks ``benchmarks/train_throughput.py`` measured on an NVIDIA H100
80GB HBM3 on 2026-11-26 (Qwen2.5-7B shapes, LoRA q,v r16, padded batches of prompts
~N(120, 30) tokens, the project's step and the plain loop's model both resident): two
decoders' weights and one step at the expected padded length (the mean longest of 8 and
of 32 prompts: 120 + 30 x 1.4236 and 120 + 30 x 2.0697 tokens) compute to 33.8 GiB at
batch 8 and 59.6 GiB at batch 32, measured 34.7 and 59.1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dfil.cost.flops import FUSED_QKV, Shape, decoder_params, linear_params, lora_params

GIB = 2**30
NF4_BITS = 4.127
#: The share of a GPU's usable memory a planned step may take (the rest for allocator
#: fragmentation, kernels' workspaces and bitsandbytes' dequantised weights).
HEADROOM = 0.85


@dataclass(frozen=True)
class Memory:
    """Bytes of one training step's GPU memory, by part."""

    weights: float
    lora: float
    activations: float

    @property
    def total(self) -> float:
        return self.weights + self.lora + self.activations

    def packed(self, seeds: int) -> Memory:
        """The step of ``seeds`` seeds over one frozen base: the weights once, each seed's
        LoRA state and micro-batch (activations grow linearly with the tokens)."""
        return Memory(self.weights, seeds * self.lora, seeds * self.activations)


def weight_bytes(s: Shape, quantized: bool = False) -> float:
    """The bare decoder's weights in bf16, or NF4 for its projections when quantized."""
    if not quantized:
        return 2.0 * decoder_params(s)
    rest = decoder_params(s) - linear_params(s)
    return linear_params(s) * NF4_BITS / 8 + 2.0 * rest


def activation_bytes_per_token(s: Shape, targets: Sequence[str]) -> float:
    """bf16 bytes one token's activations take in one layer, kept for the backward."""
    adapted_inputs = sum(1 for t in targets if t in ("q", "k", "v"))
    if s.model_type in FUSED_QKV and adapted_inputs:
        adapted_inputs = 1  # one fused projection, one dropout copy of its input
    dropout = adapted_inputs * s.d + (s.q_out if "o" in targets else 0)
    attention = 2 * s.q_out + 2 * s.kv_out
    return 2.0 * (4 * s.d + dropout + attention + 4 * s.ff)


def training_memory(s: Shape, tokens: int, targets: Sequence[str], r: int,
                    quantized: bool = False, checkpointing: bool = False) -> Memory:
    """Memory of a training step over ``tokens`` tokens (batch x padded length)."""
    per_layer = activation_bytes_per_token(s, targets) * tokens
    if checkpointing:
        kept = s.layers * 2.0 * s.d * tokens + per_layer
    else:
        kept = s.layers * per_layer
    return Memory(weight_bytes(s, quantized), 16.0 * lora_params(s, targets, r),
                  kept + per_layer)


def seeds_that_fit(one: Memory, usable_gib: float, most: int = 64) -> int:
    """The most seeds (at most ``most``, at least 1) whose pack of one seed's step ``one``
    (:meth:`Memory.packed`) takes at most :data:`HEADROOM` of ``usable_gib``; 1 also where
    a single seed does not fit (the out-of-memory retry's case, not the pack's)."""
    budget = HEADROOM * usable_gib * GIB
    fits = [k for k in range(1, most + 1) if one.packed(k).total <= budget]
    return max(fits, default=1)
