"""The paper's figures from the aggregate table (matplotlib, Agg backend; no torch).

Each figure reads its numbers through :class:`dfil.render.source.Source` in the paper's
coordinates, like the tables, and says in its title what it was computed on. Which cells,
series and paper numbers a figure draws is declared in ``config/figures.yaml``
(:mod:`dfil.render.figure_spec`); here is only how each kind of figure is drawn.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dfil.core.quantifiers import FROG_CLASSES  # noqa: E402
from dfil.render.figure_data import Drawn, paper_centers, paper_value, seed_order  # noqa: E402
from dfil.render.figure_spec import KINDS, FigureSpec  # noqa: E402
from dfil.render.figure_spec import load_figures as _load  # noqa: E402
from dfil.render.source import Source  # noqa: E402
from dfil.util.atomic import atomic_path  # noqa: E402

Q = len(FROG_CLASSES)
#: Horizontal distance between neighbouring series at one x (dodge: depth units, or log2
#: units of the budget), so equal values stay visible side by side.
DODGE = 0.06
#: How the paper's own numbers are drawn: hollow markers, "paper" in the legend.
PAPER = {"mfc": "none", "markersize": 7, "mew": 1.2, "linestyle": "none"}


def _per_seed(source: Source, where: dict, metric: str, n: int,
              drawn: Drawn) -> dict[str, np.ndarray]:
    cols = [drawn.add(source.sample({**where, "metric": f"{metric}.{i}"})) for i in range(n)]
    seeds = sorted(set().union(*(c.index for c in cols)), key=seed_order)
    return {s: np.array([c.get(s, np.nan) for c in cols]) for s in seeds}


def membership_functions(source: Source, ax, specs: dict, fig: FigureSpec) -> Drawn:
    """Learned Gaussian MFs per seed (Sec. 4.2): mu_q(p) = exp(-(p - c_q)^2 / 2 sigma_q^2)."""
    drawn = Drawn()
    centers = _per_seed(source, fig.cells(), "mf.centers", Q, drawn)
    widths = _per_seed(source, fig.cells(), "mf.widths", Q, drawn)
    p = np.linspace(0, 1, 501)
    styles = ["-", "--", ":", "-."]
    named = False
    for k, seed in enumerate(centers):
        c, w = centers[seed], widths.get(seed)
        if w is None or np.isnan(c).any() or np.isnan(w).any():
            continue
        for q, colour in enumerate(plt.cm.viridis(np.linspace(0, 1, Q))):
            ax.plot(p, np.exp(-((p - c[q]) ** 2) / (2 * w[q] ** 2)), styles[k % 4],
                    color=colour, lw=1, label=f"seed {seed}" if q == 0 else None)
            if not named:  # each MF named once, at its peak (the first seed's center)
                ax.annotate(FROG_CLASSES[q], (c[q], 1.0), xytext=(0, 4 + 9 * (q % 2)),
                            textcoords="offset points", ha="center", fontsize=6.5,
                            color=colour)
        named = True
    for k, (seed, row) in enumerate(fig.paper_rows.items()):
        paper = paper_centers(specs, fig.paper_table, row)
        if None not in paper:
            ax.plot(paper, [1.0] * Q, marker="os^"[k], color="0.3", **PAPER,
                    label=f"paper centers, seed {seed} (Tab. 22)")
    ax.set(xlabel="proportion p", ylabel="membership mu_q(p)", ylim=(0, 1.22),
           title="Learned MFs per seed, one per quantifier")
    ax.legend(fontsize=6, loc="center right")
    return drawn


def center_drift(source: Source, ax, specs: dict, fig: FigureSpec) -> Drawn:
    """Learned center minus its initialisation, per class and seed (Table centers_detail)."""
    drawn = Drawn()
    centers = _per_seed(source, fig.cells(), "mf.centers", Q, drawn)
    init = _per_seed(source, fig.cells(), "mf.init_centers", Q, drawn)
    seeds = [s for s in centers if s in init]
    width = 0.8 / max(len(seeds), 1)
    x = np.arange(Q)
    drift = {s: centers[s] - init[s] for s in seeds}
    for k, seed in enumerate(seeds):
        ax.bar(x + (k - (len(seeds) - 1) / 2) * width, drift[seed], width,
               label=f"seed {seed}")
    init_paper = paper_centers(specs, fig.paper_table, fig.paper_init)
    for k, (seed, row) in enumerate(fig.paper_rows.items()):
        learned = paper_centers(specs, fig.paper_table, row)
        if None not in learned + init_paper:
            ax.plot(x + (k - 1) * 0.25, np.subtract(learned, init_paper), marker="os^"[k],
                    color="0.3", **PAPER, label=f"paper, seed {seed} (Tab. 22)")
    names = [c.split()[0] for c in FROG_CLASSES]
    if drift:  # a class with no visible bar says why under its name
        top = max(np.nanmax(np.abs(d)) for d in drift.values()) or 1.0
        for q in range(Q):
            moved = max(abs(d[q]) for d in drift.values())
            if moved < 0.01 * top:
                names[q] += ("\n(pinned at\n0.98)" if q == Q - 1
                             else f"\n(|drift|\n< {max(moved, 1e-12):.0e})")
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xticks(x, names, fontsize=7)
    ax.set(ylabel="c learned - c init", title="Center drift from the QuRe init")
    ax.legend(fontsize=6, ncol=2)
    return drawn


def _offset(k: int, n: int) -> float:
    """Series ``k`` of ``n``'s shift from the common x, centred on it."""
    return (k - (n - 1) / 2) * DODGE


def _legend_below(ax) -> None:
    """The legend under the axes, clear of the points (filled: this grid; hollow: paper)."""
    ax.legend(fontsize=6, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.2))


def fewshot_curves(source: Source, ax, specs: dict, fig: FigureSpec) -> Drawn:
    """Accuracy by training budget, one curve per series (Table fewshot)."""
    budgets = list(fig.budgets)
    drawn, ran, counts = Drawn(), set(), set()
    n_series = len(fig.series)
    for k, line in enumerate(fig.series):
        colour, label = f"C{k}", line.label
        pts = [(b, drawn.add(source.sample(fig.cells(budget=b, method=line.method,
                                                     metric=line.metric)))) for b in budgets]
        pts = [(b, v.mean(), v.std(ddof=1) if len(v) > 1 else 0.0, len(v))
               for b, v in pts if len(v)]
        if pts:
            b, m, s, n = map(np.array, zip(*pts, strict=True))
            ax.errorbar(b * 2 ** _offset(k, n_series), m, yerr=s, marker="o", capsize=2,
                        color=colour, label=label)
            ran |= set(b.tolist())
            counts |= set(n.tolist())
        paper = [(b, *paper_value(specs, fig.paper_table, line.paper, f"n{b}"))
                 for b in budgets]
        paper = [(b, m, s or 0.0) for b, m, s in paper if m is not None]
        if paper:
            b, m, s = map(np.array, zip(*paper, strict=True))
            ax.errorbar(b * 2 ** (_offset(k, n_series) + DODGE / 2), m, yerr=s, marker="o",
                        capsize=2, color=colour, **PAPER, label=f"{label} (paper)")
    ax.set_xscale("log", base=2)
    ticks, others = sorted(ran), [b for b in budgets if b not in ran]
    ax.set_xticks(ticks, [str(b) for b in ticks])
    ax.set_xticks(others, [str(b) for b in others], minor=True, color="0.6")
    ax.set_xlim(min(budgets) / 1.3, max(budgets) * 1.3)
    n = "/".join(str(c) for c in sorted(counts)) or "0"
    ax.set(xlabel="training examples N (black: budgets run; grey: the paper's only)",
           ylabel="FRoG-Hard acc. (%)",
           title=f"Few-shot accuracy, mean ± std over {n} seed(s) per point")
    _legend_below(ax)
    return drawn


def compositional_depth(source: Source, ax, specs: dict, fig: FigureSpec) -> Drawn:
    """Compositional accuracy by depth (2-step, 3-step), QuRe-based GT (Table comp_perseed):
    a series' metric at ``{depth}`` 2 and 3, the paper's at ``{level}`` 1 and 2."""
    drawn = Drawn()
    for k, line in enumerate(fig.series):
        label = line.label
        x = np.array([2, 3]) + _offset(k, len(fig.series))
        vals = [drawn.add(source.sample(fig.cells(method=line.method,
                                                  metric=line.metric.format(depth=d))))
                for d in (2, 3)]
        if all(len(v) for v in vals):
            ax.errorbar(x, [v.mean() for v in vals],
                        yerr=[v.std(ddof=1) if len(v) > 1 else 0 for v in vals],
                        marker="o", capsize=2, color=f"C{k}", label=label)
        paper = [(paper_value(specs, fig.paper_table, "mean", line.paper.format(level=lvl))[0],
                  paper_value(specs, fig.paper_table, "std", line.paper.format(level=lvl))[0])
                 for lvl in (1, 2)]
        if all(m is not None for m, _ in paper):
            ax.errorbar(x + DODGE / 2, [m for m, _ in paper], yerr=[s or 0 for _, s in paper],
                        marker="s", capsize=2, color=f"C{k}", **PAPER,
                        label=f"{label} (paper)")
    ax.set(xticks=[2, 3], xlim=(1.6, 3.4), xlabel="composition depth (steps)",
           ylabel="accuracy (%)", title="Compositional accuracy by depth")
    _legend_below(ax)
    return drawn


FIGURES = {"membership_functions": membership_functions, "center_drift": center_drift,
           "fewshot_curves": fewshot_curves, "compositional_depth": compositional_depth}

def load_figures(path: str | Path) -> dict[str, FigureSpec]:
    """The figures ``path`` (``config/figures.yaml``) declares, one of each kind drawn."""
    return _load(path, tuple(FIGURES))


assert tuple(FIGURES) == KINDS, "figure_spec.KINDS names the figures drawn here"


def caption(fig: FigureSpec, drawn: Drawn) -> str:
    """A figure's caption, filled from what it drew."""
    return " ".join(fig.caption.split()).format(**drawn.fields())


#: Figure size (inches) and the suptitle's font size (points).
SIZE, TITLE_PT = (6.0, 4.0), 7


def wrap_title(text: str, width_in: float = SIZE[0], fontsize: float = TITLE_PT) -> str:
    """``text`` broken into lines that fit a canvas ``width_in`` inches wide.

    A sans-serif character averages well under 0.6 em, so lines of
    ``0.9 * width / (0.6 em)`` characters leave a margin on both sides."""
    chars = int(0.9 * width_in * 72 / (0.6 * fontsize))
    return textwrap.fill(" ".join(text.split()), width=max(chars, 20))


def figure(draw, source: Source, fig_spec: FigureSpec, subtitle: str = "",
           specs: dict | None = None):
    """One figure: ``draw(source, ax, specs, fig_spec)`` on a :data:`SIZE` canvas under a
    wrapped ``subtitle`` (tight_layout keeps the suptitle's lines inside the canvas);
    returns the figure and what ``draw`` returned (a :class:`Drawn`)."""
    fig, ax = plt.subplots(figsize=SIZE)
    drawn = draw(source, ax, specs or {}, fig_spec)
    if subtitle:
        fig.suptitle(wrap_title(subtitle), fontsize=TITLE_PT)
    fig.tight_layout()
    return fig, drawn


def write_figures(source: Source, specs: dict, out_dir: Path, subtitle: str,
                  figs: dict[str, FigureSpec]) -> dict[Path, str]:
    """Every figure of ``figs`` (:func:`load_figures`) as ``<out_dir>/<name>.png``; returns
    each path with its caption."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, draw in FIGURES.items():
        fig, drawn = figure(draw, source, figs[name], subtitle, specs)
        path = out_dir / f"{name}.png"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=120, format="png")
        plt.close(fig)
        out[path] = caption(figs[name], drawn)
    return out
