"""A positive control's input: each item's true proportion appended to its frozen
features (``model.heads.control_input: proportion``), so the control's heads read what the
family's cells read plus the quantity their effect depends on."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from dfil.util.errors import ConfigError


def proportion_column(columns: Sequence[str], text: str, given: str | None = None) -> str:
    """The column holding the true proportion of the items whose text is in ``text``:
    ``given`` where the frame has it, ``p_<x>`` for a pair's ``text_<x>`` (CSMC's
    ``text_a``/``p_a``, entailment's ``text_i``/``p_i``), else ``p``, else ``p_base`` (a
    composed sentence states its base proportion: the one the p head reads)."""
    suffix = text.removeprefix("text")
    names = [given] if given else []
    names += [f"p{suffix}"] if suffix.startswith("_") else ["p", "p_base"]
    for name in names:
        if name in columns:
            return name
    raise ConfigError(f"model.heads.control_input: proportion needs the items' true "
                      f"proportion beside {text!r}, but the frame has none of {names} "
                      f"(columns {sorted(columns)}); use control_input: none for this set")


def append_proportion(features: torch.Tensor, p) -> torch.Tensor:
    """``features [N, d]`` with ``p [N]`` (in [0, 1]) appended: ``[N, d+1]``, in the
    features' dtype."""
    p = torch.as_tensor(np.asarray(p, dtype=np.float64)).to(features.dtype)
    if p.shape != (features.shape[0],):
        raise ValueError(f"append_proportion: {p.numel()} proportions for "
                         f"{features.shape[0]} feature rows")
    if bool(((p < 0) | (p > 1) | torch.isnan(p)).any()):
        raise ValueError("append_proportion: proportions must lie in [0, 1]")
    return torch.cat([features, p[:, None]], dim=1)


def control_features(features: torch.Tensor, p, kind: str) -> torch.Tensor:
    """A control's input ``[N, d+1]`` from frozen ``features [N, d]`` and the items' true
    proportions ``p [N]`` (``model.heads.control_input``): "proportion" appends ``p`` to
    the features; "proportion_only" appends it to features set to zero, so the heads
    (of the reference's shapes) read the proportion alone."""
    if kind not in ("proportion", "proportion_only"):
        raise ValueError(f"control_features: unknown control input {kind!r}")
    if kind == "proportion_only":
        features = torch.zeros_like(features)
    return append_proportion(features, p)
