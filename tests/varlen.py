"""A CPU stand-in for flash attention's kernels, for tests of the layouts it runs.

:class:`ReferenceVarlen` takes what transformers' ``_flash_attention_forward`` takes: for a
packed batch ``q, k, v [1, S, H, D]`` with ``cu_seq_lens_q/k [B + 1]`` and
``max_length_q/k`` it runs causal SDPA on each example's own tokens, so attention never
crosses examples and no ``[S, S]`` mask exists; for a right-padded ``[B, T, H, D]`` batch
(no boundaries) it runs causal SDPA over the rows. It reads the boundaries on the host:
it stands in for a kernel that takes them as they are, and is not part of what the sync
tests examine.
"""

import torch
import torch.nn.functional as F


class ReferenceVarlen:
    """The kernel; every call's keyword arguments are kept in ``calls``."""

    def __init__(self):
        self.calls = []

    def __call__(self, q, k, v, attention_mask, query_length, is_causal, **kwargs):
        self.calls.append({"attention_mask": attention_mask, "is_causal": is_causal,
                           **kwargs})
        if kwargs.get("cu_seq_lens_q") is None:  # a right-padded batch: dense causal kernel
            out = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True,
                scale=kwargs.get("softmax_scale"), enable_gqa=True)
            return out.transpose(1, 2)
        cu = kwargs["cu_seq_lens_q"].tolist()
        scale = kwargs.get("softmax_scale")
        outs = []
        for a, b in zip(cu[:-1], cu[1:], strict=True):
            qs, ks, vs = (x[0, a:b].transpose(0, 1)[None] for x in (q, k, v))
            out = F.scaled_dot_product_attention(qs, ks, vs, is_causal=True, scale=scale,
                                                 enable_gqa=True)
            outs.append(out[0].transpose(0, 1))
        return torch.cat(outs)[None]


def pretend_flash(model, monkeypatch) -> ReferenceVarlen:
    """Make ``model``'s backbone look like a flash-attention one whose kernel is the
    reference; returns the kernel (its ``calls`` record what reached it)."""
    kernel = ReferenceVarlen()
    monkeypatch.setattr("dfil.model.attention.varlen_kernel", lambda: kernel)
    model.backbone.config._attn_implementation = "flash_attention_2"
    return kernel
