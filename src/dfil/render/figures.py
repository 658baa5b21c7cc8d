"""The paper's figures from the aggregate table (matplotlib, Agg backend; no torch).

Each figure reads its numbers through :class:`dfil.render.source.Source` in the paper's
coordinates, like the tables, and says in its title what it was computed on.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dfil.atomic import atomic_path  # noqa: E402
from dfil.quantifiers import FROG_CLASSES  # noqa: E402
from dfil.render.source import Source  # noqa: E402

#: The DFIL cell of Table centers_detail (7B, lambda 0.1, QuRe init).
MAIN = {"task": "frog", "backbone": "qwen2.5-7b", "method": "dfil", "lam": 0.1,
        "budget": "full", "init": "qure", "seeds": "three"}
Q = len(FROG_CLASSES)


def _per_seed(source: Source, where: dict, metric: str, n: int) -> dict[str, np.ndarray]:
    cols = [source.values({**where, "metric": f"{metric}.{i}"}) for i in range(n)]
    seeds = sorted(set().union(*(c.index for c in cols)), key=str)
    return {s: np.array([c.get(s, np.nan) for c in cols]) for s in seeds}


def membership_functions(source: Source, ax) -> None:
    """Learned Gaussian MFs per seed (Sec. 4.2): mu_q(p) = exp(-(p - c_q)^2 / 2 sigma_q^2)."""
    centers = _per_seed(source, MAIN, "mf.centers", Q)
    widths = _per_seed(source, MAIN, "mf.widths", Q)
    p = np.linspace(0, 1, 501)
    styles = ["-", "--", ":", "-."]
    for k, seed in enumerate(centers):
        c, w = centers[seed], widths.get(seed)
        if w is None or np.isnan(c).any() or np.isnan(w).any():
            continue
        for q in range(Q):
            ax.plot(p, np.exp(-((p - c[q]) ** 2) / (2 * w[q] ** 2)), styles[k % 4],
                    color=plt.cm.viridis(q / (Q - 1)), lw=1,
                    label=f"seed {seed}" if q == 0 else None)
    ax.set(xlabel="proportion p", ylabel="membership", title="Learned MFs per seed")
    ax.legend(fontsize=7)


def center_drift(source: Source, ax) -> None:
    """Learned center minus its initialisation, per class and seed (Table centers_detail)."""
    centers = _per_seed(source, MAIN, "mf.centers", Q)
    init = _per_seed(source, MAIN, "mf.init_centers", Q)
    width = 0.8 / max(len(centers), 1)
    for k, seed in enumerate(centers):
        if seed in init:
            ax.bar(np.arange(Q) + k * width, centers[seed] - init[seed], width,
                   label=f"seed {seed}")
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xticks(np.arange(Q) + 0.4 - width / 2, [c.split()[0] for c in FROG_CLASSES],
                  fontsize=7)
    ax.set(ylabel="c learned - c init", title="Center drift from the QuRe init")
    ax.legend(fontsize=7)


def fewshot_curves(source: Source, ax) -> None:
    """Few-shot accuracy by budget (Table fewshot)."""
    base = {"task": "frog", "backbone": "qwen2.5-7b", "init": "qure", "lam": 0.5,
            "variant": "fewshot", "seeds": "three", "scale": 100}
    budgets = [16, 32, 64, 128, 256]
    for label, method, metric in (("fine-tune", "finetune", "test.main.acc"),
                                  ("DFIL main", "dfil", "test.main.acc"),
                                  ("DFIL MF", "dfil", "test.mf.acc"),
                                  ("DFIL ens", "dfil", "test.ensemble.acc")):
        pts = [(b, source.values({**base, "budget": b, "method": method, "metric": metric}))
               for b in budgets]
        pts = [(b, v.mean(), v.std(ddof=1) if len(v) > 1 else 0.0) for b, v in pts if len(v)]
        if pts:
            b, m, s = map(np.array, zip(*pts, strict=True))
            ax.errorbar(b, m, yerr=s, marker="o", capsize=2, label=label)
    ax.set(xscale="log", xlabel="training examples N", ylabel="FRoG-Hard acc. (%)",
           title="Few-shot accuracy")
    ax.legend(fontsize=7)


def compositional_depth(source: Source, ax) -> None:
    """Compositional accuracy by depth (2-step, 3-step), QuRe-based GT (Table comp_perseed)."""
    base = {"task": "frog", "backbone": "qwen2.5-7b", "budget": "full", "init": "qure",
            "lam": 0.1, "seeds": "three", "scale": 100}
    for label, method, mode in (("fine-tune text", "finetune", "text_only"),
                                ("FT+Compose from-text", "ft_compose", "from_text"),
                                ("DFIL from-text", "dfil", "from_text"),
                                ("DFIL oracle", "dfil", "oracle")):
        vals = [source.values({**base, "method": method,
                               "metric": f"compositional.{mode}.qure.depth{d}"}) for d in (2, 3)]
        if all(len(v) for v in vals):
            ax.errorbar([2, 3], [v.mean() for v in vals],
                        yerr=[v.std(ddof=1) if len(v) > 1 else 0 for v in vals],
                        marker="o", capsize=2, label=label)
    ax.set(xticks=[2, 3], xlabel="composition depth (steps)", ylabel="accuracy (%)",
           title="Compositional accuracy by depth")
    ax.legend(fontsize=7)


FIGURES = {"membership_functions": membership_functions, "center_drift": center_drift,
           "fewshot_curves": fewshot_curves, "compositional_depth": compositional_depth}


#: Figure size (inches) and the suptitle's font size (points).
SIZE, TITLE_PT = (6.0, 4.0), 7


def wrap_title(text: str, width_in: float = SIZE[0], fontsize: float = TITLE_PT) -> str:
    """``text`` broken into lines that fit a canvas ``width_in`` inches wide.

    A sans-serif character averages well under 0.6 em, so lines of
    ``0.9 * width / (0.6 em)`` characters leave a margin on both sides."""
    chars = int(0.9 * width_in * 72 / (0.6 * fontsize))
    return textwrap.fill(" ".join(text.split()), width=max(chars, 20))


def figure(draw, source: Source, subtitle: str = ""):
    """One figure: ``draw(source, ax)`` on a :data:`SIZE` canvas under a wrapped
    ``subtitle`` (tight_layout keeps the suptitle's lines inside the canvas)."""
    fig, ax = plt.subplots(figsize=SIZE)
    draw(source, ax)
    if subtitle:
        fig.suptitle(wrap_title(subtitle), fontsize=TITLE_PT)
    fig.tight_layout()
    return fig


def write_figures(source: Source, out_dir: Path, subtitle: str) -> list[Path]:
    """Every figure as ``<out_dir>/<name>.png``; returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, draw in FIGURES.items():
        fig = figure(draw, source, subtitle)
        path = out_dir / f"{name}.png"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=120, format="png")
        plt.close(fig)
        paths.append(path)
    return paths
