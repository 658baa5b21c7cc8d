"""The backbone's attention: which implementation a model gets, and mask-free attention for
batches whose layout the project knows.

Choice (``backbone.attn_implementation: auto``): flash attention where the package is
installed, CUDA is there and the model class supports it; otherwise transformers' own
default, SDPA where the model class supports it and eager where it does not (Gemma-2's
logit soft-capping, for one). :func:`describe` says which one a model got and why.

Layouts. transformers builds attention masks from a 2-D padding mask or from
``position_ids``, and both ways read device values on the host (``.all()`` on the mask or
on the packed-sequence test of the positions), a host synchronisation in every forward.
The project's training and prediction batches have one of two known layouts, so the mask
is not needed:

- right-padded ``[B, T]``: under a causal mask a real token only attends to the tokens
  before it, all real, so the states of real tokens equal those of a masked forward and
  SDPA runs ``is_causal`` (its flash/cuDNN kernels, native GQA) with no mask at all;
- packed ``[1, sum T_i]`` with ``cu_seq_lens`` (flash attention's varlen kernel): the
  boundaries come precomputed from the batch, as ``DataCollatorWithFlattening`` gives
  them.

:func:`known_layout` switches a backbone to the project's mask-free functions for one
forward, registered with transformers' ``AttentionInterface`` under their own names and
without a mask function (transformers then builds none). Families whose modeling code
does not dispatch through ``AttentionInterface`` keep transformers' masked path.
"""

from __future__ import annotations

import contextlib
import os

import torch

#: transformers implementation -> the project's mask-free stand-in for known layouts.
_MASK_FREE = {"sdpa": "dfil_sdpa_causal", "flash_attention_2": "dfil_flash_causal_2",
              "flash_attention_3": "dfil_flash_causal_3"}
#: Implementations whose kernel takes packed batches with ``cu_seq_lens``.
VARLEN = ("flash_attention_2", "flash_attention_3")
_registered = False


def choose(requested: str, model_class) -> str | None:
    """The ``attn_implementation`` to load a model with; None lets transformers choose
    (SDPA where ``model_class`` supports it, else eager)."""
    if requested != "auto":
        return requested
    if model_class is not None and getattr(model_class, "_supports_flash_attn", False):
        from transformers.utils import is_flash_attn_2_available, is_flash_attn_3_available

        if torch.cuda.is_available():
            if is_flash_attn_3_available() and torch.cuda.get_device_capability()[0] >= 9:
                return "flash_attention_3"
            if is_flash_attn_2_available():
                return "flash_attention_2"
    return None


def describe(requested: str, backbone) -> str:
    """One line for the log: the implementation ``backbone`` runs and why."""
    impl = backbone.config._attn_implementation
    cls = type(getattr(backbone, "get_base_model", lambda: backbone)()).__name__
    if requested != "auto":
        why = "set in the backbone config"
    elif impl in VARLEN:
        why = f"auto: flash-attn installed, {cls} supports it"
    elif impl == "sdpa":
        why = f"auto: {cls} supports SDPA; no flash-attn with CUDA here"
    else:
        why = f"auto: {cls} does not support SDPA (nor flash-attn here)"
    fast = "mask-free on known layouts" if mask_free_name(backbone) else (
        "transformers' masks (its modeling code does not dispatch through AttentionInterface)"
        if impl in _MASK_FREE else "transformers' masks")
    return f"attention {impl} ({why}); {fast}"


def takes_varlen(backbone) -> bool:
    """Whether ``backbone`` can run packed batches with ``cu_seq_lens`` and no mask."""
    return (backbone.config._attn_implementation in VARLEN
            and mask_free_name(backbone) is not None)


def mask_free_name(backbone) -> str | None:
    """The project's mask-free stand-in for ``backbone``'s attention, or None."""
    base = backbone.get_base_model() if hasattr(backbone, "get_base_model") else backbone
    if not getattr(type(base), "_supports_attention_backend", False):
        return None
    return _MASK_FREE.get(backbone.config._attn_implementation)


@contextlib.contextmanager
def known_layout(backbone):
    """Run ``backbone`` without transformers' masks for one forward: the batch is
    right-padded (causal attention suffices) or packed with ``cu_seq_lens``."""
    name = mask_free_name(backbone)
    if name is None:
        yield False
        return
    _register()
    config = backbone.config
    base = config._attn_implementation
    config._attn_implementation = name
    try:
        yield True
    finally:
        config._attn_implementation = base


def _register() -> None:
    global _registered
    if _registered:
        return
    from transformers import AttentionInterface

    AttentionInterface.register(_MASK_FREE["sdpa"], sdpa_causal)
    AttentionInterface.register(_MASK_FREE["flash_attention_2"], _flash("flash_attention_2"))
    AttentionInterface.register(_MASK_FREE["flash_attention_3"], _flash("flash_attention_3"))
    _registered = True


def sdpa_causal(module, query, key, value, attention_mask, **kwargs):
    """transformers' SDPA attention with no mask (so ``is_causal``). ``query [B, H, T, D]``.

    A sliding window shorter than the batch would need a mask: refused, never ignored."""
    window = kwargs.get("sliding_window")
    if attention_mask is not None or kwargs.get("cu_seq_lens_q") is not None:
        raise ValueError("SDPA without a mask takes right-padded batches only (no mask, "
                         "no cu_seq_lens)")
    if window is not None and query.shape[2] > window:
        raise ValueError(f"batch of {query.shape[2]} tokens exceeds the sliding window "
                         f"{window}: use batching that keeps transformers' masks")
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    return sdpa_attention_forward(module, query, key, value, None, **kwargs)


def _flash(base: str):
    def flash_causal(module, query, key, value, attention_mask, **kwargs):
        """Flash attention, causal within each example, ``query [B, H, T, D]``: a packed
        batch (``B = 1``) with ``cu_seq_lens_q/k [B' + 1]`` and ``max_length_q/k`` (host
        ints) in ``kwargs`` runs the varlen kernel; a right-padded one the dense kernel.
        ``kwargs`` are what the model's attention passes (transformers'
        ``flash_attention_forward`` takes the same: ``dropout``, ``scaling``, and where the
        family has them ``sliding_window`` and ``softcap``), handed on to the kernel."""
        if attention_mask is not None:
            raise ValueError("mask-free attention was given a mask; this layout needs none")
        from transformers.integrations.flash_attention import get_target_dtype

        kwargs.pop("is_causal", None)  # causal within each example, always
        kwargs["softmax_scale"] = kwargs.pop("scaling", None)
        if kwargs.get("cu_seq_lens_q") is None:
            # no position_ids: transformers would test them for packing, a host sync
            kwargs["position_ids"] = None
        if os.environ.get("FLASH_ATTENTION_DETERMINISTIC") == "1":
            kwargs.setdefault("deterministic", True)
        q, k, v = (x.transpose(1, 2) for x in (query, key, value))  # flash: [B, T, H, D]
        out = varlen_kernel()(q, k, v, None, query_length=q.shape[1], is_causal=True,
                              target_dtype=get_target_dtype(q, module),
                              attn_implementation=base, **kwargs)
        return out, None

    return flash_causal


def varlen_kernel():
    """transformers' flash-attention entry point (patched by the CPU tests)."""
    from transformers.modeling_flash_attention_utils import _flash_attention_forward

    return _flash_attention_forward
