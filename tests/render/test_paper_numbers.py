"""The paper's own per-seed numbers pushed through aggregation and rendering reproduce
the mean ± std it printed. Where the paper is inconsistent (inventory section
5), the test says which convention reproduces which entry."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dfil.config.grid import load_grid_files
from dfil.config.runkey import parse_key
from dfil.render import fmt, load_specs
from dfil.render.resolve import Resolver
from dfil.render.source import Source

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def paper():
    return load_specs(ROOT / "config/tables.yaml"), load_grid_files([ROOT / "config/paper.yaml"])


def frame(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    """An aggregate table from (run key, metric, value) triples."""
    return pd.DataFrame([{**parse_key(key), "metric": metric, "value": value,
                          "run_dir": f"runs/{key}"} for key, metric, value in rows])


def one_key(grid, where: dict, seed) -> str:
    keys = Source(grid).keys({**where, "seed": seed})
    assert len(keys) == 1, (where, seed, keys)
    return keys[0]


def resolve(paper, rows, name):
    specs, grid = paper
    return Resolver(specs, Source(grid, frame(rows))).table(name)


# Table comp_perseed (l.1636), per seed: overall and level 1 / level 2, in %.
COMP = {  # column: (method, metric mode, {seed: (overall, L1, L2)})
    "ft": ("finetune", "text_only", {42: (9.2, 7.0, 13.7), 123: (23.9, 34.0, 3.7),
                                     456: (16.1, 9.5, 29.3)}),
    "compose": ("ft_compose", "from_text", {42: (32.0, 25.0, 46.0), 123: (25.9, 19.0, 39.7),
                                            456: (25.6, 22.0, 32.7)}),
    "dfil": ("dfil", "from_text", {42: (31.9, 30.8, 34.0), 123: (31.6, 30.5, 33.7),
                                   456: (31.1, 28.7, 36.0)}),
    "oracle": ("dfil", "oracle", {42: (54.3, 65.7, 31.7), 123: (36.0, 37.0, 34.0),
                                  456: (61.2, 69.3, 45.0)}),
}


def comp_rows(grid):
    base = {"task": "frog", "backbone": "qwen2.5-7b", "budget": "full", "init": "qure",
            "lam": 0.1}
    rows = []
    for method, mode, seeds in COMP.values():
        for seed, (overall, l1, l2) in seeds.items():
            key = one_key(grid, {**base, "method": method}, seed)
            for depth, v in (("all", overall), ("depth2", l1), ("depth3", l2)):
                rows.append((key, f"compositional.{mode}.qure.{depth}", v / 100))
    return list(dict.fromkeys(rows))


def test_comp_perseed_mean_and_std_rows_reproduce_the_paper(paper):
    table = resolve(paper, comp_rows(paper[1]), "comp_perseed")
    for row_id in ("mean", "std"):
        for col, entry in next(r for r in table.rows if r.id == row_id).entries.items():
            printed = float(entry.published)
            got = entry.mean if row_id == "mean" else entry.std
            # "every T24 per-seed Mean/Std re-checks within +-0.1" (inventory section 5)
            assert abs(got - printed) <= 0.1 + 1e-9, (row_id, col, got, printed)
    rendered = {c: table.entry("mean", c).render() for c in ("ft", "dfil", "oracle")}
    assert rendered == {"ft": "16.4", "dfil": "31.5", "oracle": "50.5"}


def test_comp_perseed_overall_is_the_600_300_weighting_of_the_levels():
    for _, _, seeds in COMP.values():
        for overall, l1, l2 in seeds.values():
            assert abs((600 * l1 + 300 * l2) / 900 - overall) <= 0.1


def test_compositional_qure_dfil_std_is_ddof0_in_table_3_and_ddof1_in_table_24(paper):
    dfil = [v[0] for v in COMP["dfil"][2].values()]
    assert f"{np.std(dfil, ddof=0):.1f}" == "0.3"  # Table compositional prints 31.5+-0.3
    assert f"{np.std(dfil, ddof=1):.1f}" == "0.4"  # Table comp_perseed prints 0.4
    table = resolve(paper, comp_rows(paper[1]), "compositional")
    assert table.entry("qure_dfil", "from_text").render() == r"31.5$\pm$0.4"  # ddof=1 here


# Table centers_detail (l.1524).
CENTERS = {
    ("qwen2.5-7b", 42): [.020, .024, .089, .243, .353, .478, .832, .980],
    ("qwen2.5-7b", 123): [.020, .024, .104, .239, .352, .490, .774, .980],
    ("qwen2.5-7b", 456): [.020, .024, .082, .232, .347, .470, .736, .980],
    ("qwen2.5-72b", 42): [.020, .032, .038, .051, .067, .103, .565, .980],
    ("qwen2.5-72b", 123): [.020, .034, .044, .071, .128, .192, .655, .980],
    ("qwen2.5-72b", 456): [.020, .029, .032, .044, .064, .093, .437, .980],
}
WIDTHS = {42: [.001, .047, .085, .078, .066, .054, .102, .004],
          123: [.001, .051, .073, .075, .064, .049, .119, .089],
          456: [.001, .053, .078, .073, .057, .047, .115, .090]}


def test_centers_detail_prints_each_seeds_centers_and_widths(paper):
    grid = paper[1]
    base = {"task": "frog", "method": "dfil", "budget": "full", "init": "qure", "lam": 0.1}
    rows = []
    for (bb, seed), centers in CENTERS.items():
        key = one_key(grid, {**base, "backbone": bb}, seed)
        rows += [(key, f"mf.centers.{i}", c) for i, c in enumerate(centers)]
        if bb == "qwen2.5-7b":
            rows += [(key, f"mf.widths.{i}", w) for i, w in enumerate(WIDTHS[seed])]
    table = resolve(paper, rows, "centers_detail")
    for row in table.rows:
        for entry in row.entries.values():
            if entry.published is not None and entry.n:
                assert entry.render() == f"{float(entry.published):.3f}"[1:]
    # The text's "c_some in [0.347, 0.353]" at 7B holds; its "seed 123 c_some = 0.284"
    # does not (the table prints .352, inventory item 5.9).
    some = [table.entry(f"7b-c-{s}", "some").mean for s in (42, 123, 456)]
    assert min(some) == pytest.approx(0.347) and max(some) == pytest.approx(0.353)


# Table csmc_domains (l.460): per-domain means over 21 seeds.
DOMAINS = {"public health": (94.5, 79.0, 15.5), "education": (94.8, 80.5, 14.3),
           "environment": (98.6, 88.6, 10.0), "governance": (91.2, 86.2, 5.0),
           "election": (99.8, 96.4, 3.3), "clinical trials": (99.5, 97.4, 2.1),
           "manufacturing": (93.1, 91.2, 1.9), "research": (97.9, 96.2, 1.7),
           "finance": (95.7, 94.8, 1.0), "sports": (99.0, 98.8, 0.2)}


def test_csmc_overall_is_the_mean_of_the_domain_means(paper):
    grid = paper[1]
    base = {"task": "frog", "backbone": "qwen2.5-7b", "budget": "full", "init": "qure",
            "lam": 0.5}
    rows = []
    # Per-seed values are not printed: one run per method carrying the domain means
    # (each domain has 20 pairs, so the overall consistency is their mean).
    for method, path, idx in (("dfil", "mf", 0), ("finetune", "main", 1)):
        key = one_key(grid, {**base, "method": method}, 42)
        rows += [(key, f"csmc.{path}.by_domain.{d}", v[idx] / 100) for d, v in DOMAINS.items()]
        rows.append((key, f"csmc.{path}.consistency",
                     np.mean([v[idx] for v in DOMAINS.values()]) / 100))
    table = resolve(paper, rows, "csmc_domains")
    assert abs(table.entry("overall", "dfil").mean - 96.40) <= 0.05  # 96.41 from rounded means
    assert abs(table.entry("overall", "ft").mean - 90.90) <= 0.05   # 90.91
    assert abs(table.entry("overall", "delta").mean - 5.50) <= 0.05
    for domain, (_, _, delta) in DOMAINS.items():
        row = domain.replace(" ", "_")
        got = table.entry(row, "delta").mean
        # Election (99.8 - 96.4 = 3.4, printed +3.3) and finance (95.7 - 94.8 = 0.9,
        # printed +1.0) are differences of the unrounded means; the other eight match the
        # rounded ones exactly.
        off = 0.1 if domain in ("election", "finance") else 0.0
        assert abs(abs(got - delta) - off) <= 1e-9, domain


# Table ipr_full (l.1789): categories of 12/12/8/8 sentences; per-seed counts are not
# printed but are recoverable as integers.
IPR_N = {"linguistic": 12, "approximate": 12, "comparative": 8, "emphatic": 8}
IPR = {"text": {"linguistic": (22.2, 12.7), "approximate": (16.7, 14.4),
                "comparative": (4.2, 7.2), "emphatic": (16.7, 19.1),
                "exact": (15.8, 7.6)},
       "ft": {"linguistic": (30.6, 4.8), "approximate": (13.9, 4.8),
              "comparative": (12.5, 21.7), "emphatic": (0.0, 0.0), "exact": (15.8, 5.8)}}


def _matches(values, mean, std):
    return (abs(np.mean(values) - mean) <= 0.05 + 1e-9
            and abs(np.std(values, ddof=1) - std) <= 0.05 + 1e-9)


def recover_counts(printed: dict) -> list[dict[str, int]]:
    """Per-seed integer counts per category that reproduce every printed category mean
    ± std and the overall exact mean ± std (the overall pools all 40 sentences)."""
    options = {}
    for cat, n in IPR_N.items():
        mean, std = printed[cat]
        options[cat] = [c for c in itertools.combinations_with_replacement(range(n + 1), 3)
                        if _matches([100 * k / n for k in c], mean, std)]
    for choice in itertools.product(*(
            {p for c in options[cat] for p in itertools.permutations(c)} for cat in IPR_N)):
        overall = [100 * sum(ch[s] for ch in choice) / 40 for s in range(3)]
        if _matches(overall, *printed["exact"]):
            return [{cat: choice[i][s] for i, cat in enumerate(IPR_N)} for s in range(3)]
    raise AssertionError("no integer counts reproduce the printed IPR table")


def test_ipr_full_recovered_counts_reproduce_every_printed_cell(paper):
    grid = paper[1]
    base = {"task": "frog", "backbone": "qwen2.5-7b", "budget": "full", "init": "qure",
            "lam": 0.1}
    rows = []
    for col, method, path in (("text", "dfil", "text"), ("ft", "finetune", "main")):
        counts = recover_counts(IPR[col])
        for seed, c in zip((42, 123, 456), counts, strict=True):
            key = one_key(grid, {**base, "method": method}, seed)
            rows += [(key, f"ipr.{path}.{cat}.exact", c[cat] / IPR_N[cat]) for cat in IPR_N]
            rows.append((key, f"ipr.{path}.exact", sum(c.values()) / 40))
    table = resolve(paper, rows, "ipr_full")
    for row in ("linguistic", "approximate", "comparative", "emphatic", "exact"):
        for col in ("text", "ft"):
            mean, std = IPR[col][row]
            entry = table.entry(row, col)
            assert fmt.mean_std(entry.mean, entry.std, entry.n) == f"{mean:.1f}$\\pm${std:.1f}"
