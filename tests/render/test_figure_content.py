"""What the figures draw, checked on matplotlib's objects (no pixels): quantifier names,
the budgets on the few-shot axis, seeds in numeric order, dodged markers, the paper's
values as hollow "paper" series, and captions filled from the runs drawn."""

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from dfil.config.grid import Grid
from dfil.config.runkey import parse_key
from dfil.config.yamlfile import load_yaml
from dfil.core.quantifiers import FROG_CLASSES
from dfil.render import figures, load_specs
from dfil.render.source import Source

ROOT = Path(__file__).resolve().parents[2]
SPECS = load_specs(ROOT / "config/tables.yaml")
FIGS = figures.load_figures(ROOT / "config/figures.yaml")
SEEDS = [456, 42, 123]  # declared out of order: the figures sort them as numbers


class _Recorder(Source):
    """A source without numbers that remembers every (run key, metric) asked for."""

    def __init__(self, grid):
        super().__init__(grid)
        self.reads = set()

    def sample(self, where):
        out = super().sample(where)
        self.reads |= out.reads
        return out


def _source() -> Source:
    """The smoke grid on three seeds, every number a figure reads set: accuracy 0.1 +
    0.01 * seed index, centers moved by 0.01 * (q + 1) for q < 7 (c_all pinned)."""
    cfg = load_yaml(ROOT / "config/smoke.yaml")
    cfg["seed_sets"] = {**cfg["seed_sets"], "one": SEEDS}
    grid = Grid(cfg)
    probe = _Recorder(grid)
    for name, draw in figures.FIGURES.items():
        plt.close(figures.figure(draw, probe, FIGS[name], "", SPECS)[0])
    rows = []
    for key, metric in probe.reads:
        seed = key.rsplit("/seed", 1)[1]
        k = SEEDS.index(int(seed)) if seed.isdigit() else 0
        if metric.startswith("mf.") and "centers" in metric:
            q = int(metric.rsplit(".", 1)[1])
            value = (0.02 + 0.96 * q / 7) + (0.01 * (q + 1) if q < 7 and
                                               metric.startswith("mf.centers") else 0)
        elif metric.startswith("mf.widths"):
            value = 0.1
        else:
            value = 0.1 + 0.01 * k
        rows.append({**parse_key(key), "metric": metric, "value": value, "run_dir": key})
    return Source(grid, pd.DataFrame(rows))


@pytest.fixture(scope="module")
def drawn():
    source = _source()
    out = {}
    for name, draw in figures.FIGURES.items():
        fig, what = figures.figure(draw, source, FIGS[name], "", SPECS)
        out[name] = (fig.axes[0], what)
    yield out
    plt.close("all")


def _legend(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_every_mf_is_named_by_its_quantifier(drawn):
    ax, _ = drawn["membership_functions"]
    names = [t.get_text() for t in ax.texts]
    assert names == list(FROG_CLASSES)
    # each name stands at its MF's peak: the first seed's (42's) center
    xs = [t.xy[0] for t in ax.texts]
    assert xs == pytest.approx([0.02 + 0.96 * q / 7 + (0.01 * (q + 1) if q < 7 else 0)
                                for q in range(8)])
    assert any("paper centers" in t for t in _legend(ax))


def test_fewshot_axis_is_ticked_at_the_budgets_run(drawn):
    ax, what = drawn["fewshot_curves"]
    assert list(ax.get_xticks()) == [16]  # the smoke grid runs FRoG at n16 only
    assert [t.get_text() for t in ax.get_xticklabels()] == ["16"]
    # the paper's other budgets: grey minor ticks, no 10^k decades anywhere
    assert list(ax.get_xticks(minor=True)) == [32, 64, 128, 256]
    assert [t.get_text() for t in ax.get_xticklabels(minor=True)] == ["32", "64", "128", "256"]
    assert "over 3 seed(s) per point" in ax.get_title()
    legend = _legend(ax)
    assert "fine-tune" in legend and "fine-tune (paper)" in legend
    # equal accuracies stay visible: the four series at N=16 sit side by side (log2 dodge)
    ours = [ln for ln in ax.get_lines() if ln.get_marker() == "o"
            and ln.get_markerfacecolor() != "none"]
    assert np.log2([ln.get_xdata()[0] for ln in ours]) == pytest.approx(
        4 + figures.DODGE * np.array([-1.5, -0.5, 0.5, 1.5]))


def test_center_drift_orders_seeds_as_numbers_and_explains_the_still_groups(drawn):
    ax, what = drawn["center_drift"]
    assert [c.get_label() for c in ax.containers] == ["seed 42", "seed 123", "seed 456"]
    # the bars of one class sit side by side in that order, centred on the class
    assert [c.patches[0].get_x() + c.patches[0].get_width() / 2 for c in ax.containers] \
        == pytest.approx([-0.8 / 3, 0, 0.8 / 3])
    assert [t for t in _legend(ax) if t.startswith("paper")] == [
        "paper, seed 42 (Tab. 22)", "paper, seed 123 (Tab. 22)", "paper, seed 456 (Tab. 22)"]
    # the synthetic centers all move but c_all: only its group says why it has no bar
    names = [t.get_text() for t in ax.get_xticklabels()]
    assert names[:7] == [c.split()[0] for c in FROG_CLASSES[:7]]
    assert names[7] == "all\n(pinned at\n0.98)"
    assert sorted(what.seeds, key=figures.seed_order) == ["42", "123", "456"]


def test_compositional_series_are_dodged_and_the_paper_is_hollow(drawn):
    ax, _ = drawn["compositional_depth"]
    lines = [ln for ln in ax.get_lines() if ln.get_marker() in ("o", "s")]
    ours = [ln for ln in lines if ln.get_markerfacecolor() != "none"]
    paper = [ln for ln in lines if ln.get_markerfacecolor() == "none"]
    assert len(ours) == 4 and len(paper) == 4
    xs = [ln.get_xdata()[1] for ln in ours]  # depth 3
    assert np.diff(xs) == pytest.approx([figures.DODGE] * 3)
    assert sorted({ln.get_xdata()[1] for ln in lines}) == pytest.approx(
        sorted(xs + [x + figures.DODGE / 2 for x in xs]))
    # the paper's means at depth 3 (comp_perseed, row mean, column *_l2)
    assert [ln.get_ydata()[1] for ln in paper] == [15.6, 39.5, 34.6, 36.9]
    assert sum("(paper)" in t for t in _legend(ax)) == 4


def test_captions_name_the_runs_and_seeds_drawn(drawn, tmp_path):
    _, what = drawn["fewshot_curves"]
    text = figures.caption(FIGS["fewshot_curves"], what)
    assert "3 seed(s): 42, 123, 456" in text
    assert "frog/tiny-llama/finetune+fewshot/lamna/n16/na" in text
    assert "{" not in text
    caps = figures.write_figures(_source(), SPECS, tmp_path, "", FIGS)
    assert {p.name for p in caps} == {f"{n}.png" for n in figures.FIGURES}
    assert caps[tmp_path / "fewshot_curves.png"] == text


def test_paper_values_and_seed_order_by_hand():
    from dfil.render.figure_data import paper_centers, paper_value, seed_order

    assert paper_value(SPECS, "fewshot", "ft", "n64") == (19.4, 5.7)
    assert paper_value(SPECS, "fewshot", "ft", "n512") == (None, None)
    assert paper_centers(SPECS, "centers_detail", "init")[-1] == 0.97
    assert sorted(["456", "na", "42", "123"], key=seed_order) == ["42", "123", "456", "na"]


def test_figures_are_declared_and_their_code_names_no_method(tmp_path):
    """What a figure draws is config/figures.yaml's; figures.py only draws (no method
    name in it); a figure the report does not draw, or one left out, is refused."""
    import re

    from dfil.core.methods import METHODS
    from dfil.util.errors import ConfigError

    code = (ROOT / "src/dfil/render/figures.py").read_text()
    named = [m for m in METHODS if re.search(rf"[\"']{re.escape(m)}[\"']", code)]
    assert not named, named
    assert [s.method for s in FIGS["compositional_depth"].series] == [
        "finetune", "ft_compose", "dfil", "dfil"]
    assert FIGS["membership_functions"].cells() == {
        "task": "frog", "backbone": "qwen2.5-7b", "method": "dfil", "lam": 0.1,
        "budget": "full", "init": "qure", "seeds": "three"}
    text = (ROOT / "config/figures.yaml").read_text()
    bad = tmp_path / "figures.yaml"
    bad.write_text(text.replace("fewshot_curves:", "fewshot_curve:"))
    with pytest.raises(ConfigError, match="figure 'fewshot_curve' is not one the report draws; "
                       "did you mean 'fewshot_curves'"):
        figures.load_figures(bad)
    bad.write_text(text.replace("method: ft_compose", "method: ft_compse"))
    with pytest.raises(ConfigError, match="figure compositional_depth: .*ft_compse"):
        figures.load_figures(bad)


def test_a_figures_cells_and_paper_table_are_checked_against_the_grids(tmp_path):
    """A figure's coordinates are checked as a table's are: a name or a number no grid has
    is a typo, named before anything is drawn; so is a paper table that does not exist."""
    from dfil.render.figure_spec import check_figures
    from dfil.util.errors import ConfigError

    grid = load_yaml(ROOT / "config/smoke.yaml")
    tables = ROOT / "config/tables.yaml"
    assert set(check_figures(ROOT / "config/figures.yaml", SPECS, grid, tables)) == set(
        figures.FIGURES)
    text = (ROOT / "config/figures.yaml").read_text()
    bad = tmp_path / "figures.yaml"
    bad.write_text(text.replace("backbone: qwen2.5-7b, init: qure, lam: 0.5",
                                "backbone: qwen2.5-7bb, init: qure, lam: 0.5"))
    with pytest.raises(ConfigError, match=r"figures.yaml: fewshot_curves.where.backbone: "
                       r"'qwen2.5-7bb' is not a backbone of any grid \(did you mean "
                       r"'qwen2.5-7b'"):
        check_figures(bad, SPECS, grid, tables)
    bad.write_text(text.replace("init: qure, lam: 0.1,\n", "init: qure, lam: 0.15,\n"))
    with pytest.raises(ConfigError, match="compositional_depth.where.lam: 0.15 is a lam no "
                       "cell of any grid has"):
        check_figures(bad, SPECS, grid, tables)
    bad.write_text(text.replace("paper_table: comp_perseed", "paper_table: comp_perseeds"))
    with pytest.raises(ConfigError, match="compositional_depth.paper_table: 'comp_perseeds' "
                       "is not a table of .*did you mean 'comp_perseed'"):
        check_figures(bad, SPECS, grid, tables)
