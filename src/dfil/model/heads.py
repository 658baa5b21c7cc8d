"""Prediction heads on the pooled hidden state ``h`` of shape ``[B, d]`` (Sec. 4.1, 4.3)."""

from __future__ import annotations

import torch
from torch import nn


class MLPHead(nn.Module):
    """LN(d) -> Linear(d, hidden) -> GELU -> Linear(hidden, out). ``[B, d] -> [B, out]``.

    ``raw``: the last ``raw`` input columns skip the LayerNorm and reach the Linear as
    they are (a positive control's appended proportion, :mod:`dfil.engine.control`): a
    per-example LayerNorm divides every column by the example's spread over all of them,
    so a column it normalises carries the proportion only up to noise from the other
    features, and a control's heads could not read it exactly.
    """

    def __init__(self, d: int, out: int, hidden: int = 256, raw: int = 0):
        super().__init__()
        if not 0 <= raw < d:
            raise ValueError(f"MLPHead: raw columns {raw} must lie in [0, {d})")
        self.raw = raw
        self.net = nn.Sequential(
            nn.LayerNorm(d - raw), nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, out)
        )

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if not self.raw:
            return self.net(h)
        h = torch.cat([self.net[0](h[..., :-self.raw]), h[..., -self.raw:]], dim=-1)
        return self.net[1:](h)


def classifier_head(d: int, num_classes: int, kind: str = "mlp", hidden: int = 256,
                    raw: int = 0) -> nn.Module:
    """Main-path classifier ``[B, d] -> [B, Q]`` logits.

    ``kind="mlp"`` is what Table ablation_detail's parameter counts imply (398,600 at
    d=1536, Q=8); ``kind="linear"`` is the text's "standard linear classifier".
    """
    if kind == "mlp":
        return MLPHead(d, num_classes, hidden, raw)
    if kind == "linear":
        return nn.Linear(d, num_classes)
    raise ValueError(f"unknown classifier kind {kind!r}; expected 'mlp' or 'linear'")


#: A feature dimension whose std over the training split is at most this fraction of its
#: largest magnitude (8 float32 ulps) varies only by rounding: it carries no signal and is
#: not scaled up. A dimension of identical values has std 0; a real spread is far above.
CONSTANT_RTOL = 8 * float(torch.finfo(torch.float32).eps)


class FeatureStandardizer(nn.Module):
    """Per-dimension standardisation of frozen features, ``[..., d] -> [..., d]``.

    ``(x - mean) / std`` with the training features' statistics, set once by :meth:`fit`
    and then fixed. Not in the paper (its backbone is LoRA-adapted): a frozen decoder's
    final-layer states carry a few dimensions with large, almost constant values (SmolLM2-
    135M: mean |h_i| up to 22, std < 1), so the per-example LayerNorm at the head's input
    keeps the informative variation small and the heads underfit (note R-feature-norm).
    A dimension constant on the training split (its spread at the level of float32
    rounding, relative to its values) is only centred: dividing its rounding noise by a
    tiny std would turn the features' last bits, which differ between CPUs, into inputs
    of unit size.
    The statistics are persistent buffers, so the state dict (and the checkpoint) carries
    them and no optimizer sees them. Used before :meth:`fit` or a load of its state it
    raises rather than pass the features through.
    """

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("mean", torch.zeros(d))
        self.register_buffer("std", torch.ones(d))
        self.fitted = False
        self.register_load_state_dict_pre_hook(_mark_fitted)

    @torch.no_grad()
    def fit(self, x: torch.Tensor) -> None:
        """Set the statistics from features ``x [N, d]`` (N >= 2)."""
        if x.ndim != 2 or x.shape[1] != self.mean.numel() or x.shape[0] < 2:
            raise ValueError(f"expected features [N >= 2, {self.mean.numel()}], "
                             f"got {tuple(x.shape)}")
        x = x.double()
        std = x.std(0)
        constant = std <= CONSTANT_RTOL * x.abs().amax(0)
        std = torch.where(constant, torch.ones_like(std), std.clamp_min(self.eps))
        self.mean.copy_(x.mean(0).to(self.mean.dtype))
        self.std.copy_(std.to(self.std.dtype))
        self.fitted = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.fitted:
            raise RuntimeError("feature standardisation used before its statistics were set: "
                               "fit it on the training features (fit_feature_norm) or load "
                               "a checkpoint (heads.feature_norm: standardize)")
        return (x - self.mean.to(x.dtype)) / self.std.to(x.dtype)


def _mark_fitted(module: FeatureStandardizer, state_dict, prefix: str, *_) -> None:
    """A state dict holding the statistics sets them: the standardizer counts as fitted."""
    module.fitted = module.fitted or prefix + "mean" in state_dict


class NumericalHead(nn.Module):
    """NumHead, Sec. 4.3: LN -> Linear(d,256) -> GELU -> Linear(256,1) -> sigmoid.

    ``[B, d] -> p_hat [B]`` in (0, 1).
    """

    def __init__(self, d: int, hidden: int = 256, raw: int = 0):
        super().__init__()
        self.mlp = MLPHead(d, 1, hidden, raw)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.mlp(h)).squeeze(-1)


class AttentionPool(nn.Module):
    """App. E.2: alpha = softmax(W_attn^T h_t) over real tokens, h_pool = sum_t alpha_t h_t.

    ``W_attn`` is ``[d, 1]`` without bias (+d parameters). ``[B, T, d], [B, T] -> [B, d]``.
    """

    def __init__(self, d: int):
        super().__init__()
        self.score = nn.Linear(d, 1, bias=False)

    def forward(self, states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        scores = self.score(states).squeeze(-1).float()
        scores = scores.masked_fill(attention_mask == 0, torch.finfo(scores.dtype).min)
        alpha = torch.softmax(scores, dim=-1).to(states.dtype)
        return torch.einsum("bt,btd->bd", alpha, states)


class CoralHead(nn.Module):
    """CORAL (Cao et al. 2020): one shared weight vector and Q-1 biases.

    ``[B, d] -> [B, Q-1]`` logits of P(y > k). With ``trunk`` the input first passes the
    classifier's LN -> Linear -> GELU trunk (the paper leaves the LLM-head details open).
    """

    def __init__(self, d: int, num_classes: int, hidden: int = 256, trunk: bool = True):
        super().__init__()
        self.trunk = _trunk(d, hidden) if trunk else nn.Identity()
        self.fc = nn.Linear(hidden if trunk else d, 1, bias=False)
        # coral-pytorch's CoralLayer default: decreasing biases (Q-1, ..., 1) / (Q-1).
        self.coral_bias = nn.Parameter(
            torch.arange(num_classes - 1, 0, -1, dtype=torch.float32) / (num_classes - 1)
        )

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.fc(self.trunk(h)) + self.coral_bias


class CornHead(nn.Module):
    """CORN (Shi et al. 2023): Q-1 conditional binary tasks. ``[B, d] -> [B, Q-1]`` logits."""

    def __init__(self, d: int, num_classes: int, hidden: int = 256, trunk: bool = True):
        super().__init__()
        self.trunk = _trunk(d, hidden) if trunk else nn.Identity()
        self.fc = nn.Linear(hidden if trunk else d, num_classes - 1)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.fc(self.trunk(h))


def _trunk(d: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.LayerNorm(d), nn.Linear(d, hidden), nn.GELU())
