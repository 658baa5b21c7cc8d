"""Membership-function banks: the ordered Gaussian MF of Sec. 4.2 and its ablations.

Shapes: ``p`` is ``[...]`` in [0, 1]; memberships are ``[..., Q]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from dfil.core.quantifiers import CENTER_LOW, CENTER_SPAN, DELTA_EPS, QURE_CENTERS

#: Smallest softmax share given to a target delta of 0 (the QuRe c_0 = 0.02 case), so that
#: delta_raw stays finite and the center can still move (note R-qure-init).
_MIN_SHARE = 1e-6


def gaussian_memberships(p: torch.Tensor, centers: torch.Tensor, widths: torch.Tensor):
    """mu_q(p) = exp(-(p - c_q)^2 / (2 sigma_q^2)), Sec. 4.2. ``[...]`` -> ``[..., Q]``."""
    diff = p.unsqueeze(-1) - centers
    return torch.exp(-(diff**2) / (2 * widths**2))


def centers_from_raw(delta_raw: torch.Tensor, eps: float = DELTA_EPS) -> torch.Tensor:
    """Eq. (ordered_centers): delta = softmax(raw) + eps, renormalised, c = cumsum * .96 + .02.

    ``[Q]`` -> ``[Q]``, strictly increasing, with ``c[-1] == 0.98`` up to rounding.
    """
    delta = torch.softmax(delta_raw, dim=-1) + eps
    delta = delta / delta.sum(dim=-1, keepdim=True)
    # The cumulative sum as a float64 product with a triangle of ones: cumsum has no
    # deterministic CUDA kernel (an error under train.deterministic), and in float64 the
    # result equals the CPU's cumsum (float64 accumulation) after rounding to float32.
    q = delta.shape[-1]
    tri = torch.ones(q, q, dtype=torch.float64, device=delta.device).triu()
    return (delta.double() @ tri).to(delta.dtype) * CENTER_SPAN + CENTER_LOW


def raw_from_centers(
    target: Sequence[float], mode: str = "paper", eps: float = DELTA_EPS
) -> torch.Tensor:
    """Invert Eq. (ordered_centers) onto ``target`` centers as closely as is reachable.

    App. B.3: delta*_q = (c*_q - .02)/.96 - (c*_{q-1} - .02)/.96, delta_raw = log delta*.
    The map pins c_{Q-1} at 0.98 and keeps every delta above eps, so most targets (QuRe's
    .97, its c_0 = .02) are unreachable. ``mode``:

    - ``"paper"``: the deltas are renormalised to sum 1 (what softmax does to log delta*),
      which scales every step by 1 / sum(delta*).
    - ``"pin_last"``: c_0..c_{Q-2} are matched (up to eps) and the last step takes the rest.
    """
    t = torch.as_tensor(target, dtype=torch.float64)
    steps = torch.diff((t - CENTER_LOW) / CENTER_SPAN, prepend=torch.zeros(1, dtype=t.dtype))
    if mode == "paper":
        delta = steps / steps.sum()
    elif mode == "pin_last":
        delta = steps.clone()
        delta[-1] = 1.0 - steps[:-1].sum()
    else:
        raise ValueError(f"unknown inversion mode {mode!r}; expected 'paper' or 'pin_last'")
    q = t.numel()
    # delta = (s + eps) / (1 + Q eps)  =>  s = delta (1 + Q eps) - eps, then floor and renormalise.
    share = (delta * (1 + q * eps) - eps).clamp_min(_MIN_SHARE)
    share = share / share.sum()
    return torch.log(share).to(torch.float32)


def _check_centers(centers: Sequence[float], num_classes: int) -> tuple[float, ...]:
    values = tuple(float(c) for c in centers)
    if len(values) != num_classes:
        raise ValueError(f"expected {num_classes} centers, got {len(values)}: {values}")
    if any(b <= a for a, b in zip(values[:-1], values[1:], strict=True)):
        raise ValueError(f"centers must be strictly increasing, got {values}")
    if values[0] < CENTER_LOW or values[-1] > CENTER_LOW + CENTER_SPAN:
        raise ValueError(f"centers must lie in [0.02, 0.98], got {values}")
    return values


def init_raw(
    init: str | Sequence[float],
    num_classes: int,
    qure_inversion: str = "paper",
    uniform_mode: str = "zero_raw",
) -> torch.Tensor:
    """delta_raw for ``init`` = "qure" | "uniform" | explicit increasing centers."""
    if isinstance(init, str):
        if init == "qure":
            if num_classes != len(QURE_CENTERS):
                raise ValueError(f"init='qure' needs num_classes=8, got {num_classes}")
            return raw_from_centers(QURE_CENTERS, qure_inversion)
        if init == "uniform":
            if uniform_mode == "zero_raw":
                return torch.zeros(num_classes)
            if uniform_mode == "evenly":
                even = torch.linspace(CENTER_LOW, CENTER_LOW + CENTER_SPAN, num_classes)
                return raw_from_centers(even.tolist(), "paper")
            raise ValueError(f"unknown uniform_mode {uniform_mode!r}")
        raise ValueError(f"unknown MF init {init!r}; expected 'qure', 'uniform' or centers")
    return raw_from_centers(_check_centers(init, num_classes), "paper")


class OrderedGaussianMF(nn.Module):
    """Q ordered Gaussian membership functions (Sec. 4.2), 2Q stored parameters.

    Parameters
    ----------
    num_classes : Q.
    init : "qure", "uniform" or an explicit strictly increasing sequence of Q centers.
    width_init : initial sigma (paper: w_q = log 0.1).
    """

    def __init__(
        self,
        num_classes: int = 8,
        init: str | Sequence[float] = "qure",
        width_init: float = 0.1,
        qure_inversion: str = "paper",
        uniform_mode: str = "zero_raw",
        eps: float = DELTA_EPS,
    ):
        super().__init__()
        self.eps = eps
        raw = init_raw(init, num_classes, qure_inversion, uniform_mode)
        self.delta_raw = nn.Parameter(raw)
        self.log_width = nn.Parameter(torch.full((num_classes,), math.log(width_init)))

    def centers(self) -> torch.Tensor:
        """``[Q]`` strictly increasing centers in [0.02, 0.98]."""
        return centers_from_raw(self.delta_raw, self.eps)

    def widths(self) -> torch.Tensor:
        """``[Q]`` sigma_q = exp(w_q)."""
        return torch.exp(self.log_width)

    def forward(self, p: torch.Tensor) -> torch.Tensor:
        """``[...]`` -> memberships ``[..., Q]``."""
        return gaussian_memberships(p, self.centers(), self.widths())


class UnorderedGaussianMF(nn.Module):
    """Ablation "no ordering" (Tables ablation, ablation_detail): free centers, 2Q params."""

    def __init__(self, num_classes: int = 8, init: str | Sequence[float] = "qure",
                 width_init: float = 0.1, **init_kwargs):
        super().__init__()
        start = centers_from_raw(init_raw(init, num_classes, **init_kwargs))
        self.center = nn.Parameter(start.detach().clone())
        self.log_width = nn.Parameter(torch.full((num_classes,), math.log(width_init)))

    def centers(self) -> torch.Tensor:
        """``[Q]`` centers in class-index order, not necessarily increasing."""
        return self.center

    def widths(self) -> torch.Tensor:
        return torch.exp(self.log_width)

    def forward(self, p: torch.Tensor) -> torch.Tensor:
        return gaussian_memberships(p, self.centers(), self.widths())


class ProportionClassifier(nn.Module):
    """Ablation "no MF" (1D linear classifier): p_hat -> Linear(1, Q) logits, 2Q params."""

    def __init__(self, num_classes: int = 8):
        super().__init__()
        self.linear = nn.Linear(1, num_classes)

    def forward(self, p: torch.Tensor) -> torch.Tensor:
        """``[...]`` -> logits ``[..., Q]``."""
        return self.linear(p.unsqueeze(-1))
