"""Plans on the paper's grid (config/paper.yaml, config/tables.yaml): coverage by budget,
the whole grid's cost, a claim no budget can settle, and the plan's grid file run as is
(a dry run)."""

import math

import pytest
import yaml
from statsmodels.stats.power import TTestIndPower, TTestPower

from dfil.cli import main
from dfil.config.grid import Grid, load_grid_files
from dfil.cost.archs import ARCHS
from dfil.plan import coordinate_hours, make_plan, paper_claims, seed_order
from dfil.plan.power import MAX_SEEDS
from dfil.render import load_specs
from snakemake_cli import ROOT, snakemake

# Plans over the paper's whole grid, seconds each: `pytest -m "not slow"` skips them.
pytestmark = pytest.mark.slow

#: The distinct claims of the paper's tables (84 places; T26 prints T5's contrasts again, and
#: more: the places `same_as:` declares one claim, as claims.csv's rows count them).
CLAIMS = 67


@pytest.fixture(scope="module")
def paper():
    grid = load_grid_files([ROOT / "config/paper.yaml"])
    claims = paper_claims(grid, load_specs(ROOT / "config/tables.yaml"))
    archs = {name: ARCHS[name] for name in grid.config["backbones"]}  # nothing fetched here
    return grid, claims, coordinate_hours(grid, archs), seed_order(grid.config, MAX_SEEDS)


def test_every_claim_of_the_report_is_read_once(paper):
    """The planner's claims are claims.csv's: one per distinct claim, by its id, each of
    the tables' 84 places in exactly one."""
    _, claims, _, _ = paper
    ids = [c.id for c in claims]
    assert len(ids) == len(set(ids)) == CLAIMS < 84
    places = [p for c in claims for p in c.places]
    assert len(places) == len(set(places)) == 84 and set(ids) <= set(places)
    headline = {c.table for c in claims if c.headline}
    assert headline == {2, 3, 4, 5, 6, 7}


def test_budget_zero_plans_nothing(paper):
    _, claims, hours, order = paper
    plan = make_plan(claims, hours, order, 0.0)
    assert plan.planned == 0 and not plan.runs and plan.projected == 0


def test_a_run_without_gpu_hours_is_never_priced_at_zero(paper):
    """coordinate_hours leaves out the coordinates of a backbone with no architecture;
    a plan that would draw one of their runs names it instead of counting it as 0."""
    grid, claims, _, order = paper
    archs = {name: ARCHS[name] for name in grid.config["backbones"]}
    hours = coordinate_hours(grid, {**archs, "qwen2.5-7b": None})
    assert hours and not any("/qwen2.5-7b/" in k for k in hours)
    with pytest.raises(ValueError, match=r"^claim .*: no GPU-hours for \S+/qwen2\.5-7b/.*"
                                         r"its backbone has no architecture"):
        make_plan(claims, hours, order, 1e9)


def test_coverage_never_shrinks_as_the_budget_grows(paper):
    _, claims, hours, order = paper
    counts = []
    for budget in (0, 2, 5, 10, 25, 40, 60, 100, 150, 250):
        plan = make_plan(claims, hours, order, budget)
        assert plan.projected <= budget
        counts.append(plan.planned)
    assert counts == sorted(counts) and counts[0] == 0 and counts[-1] > counts[1]


def test_the_whole_grids_cost_plans_every_claim_the_grid_can_test(paper):
    grid, claims, hours, order = paper
    whole = sum(hours[k.rsplit("/seed", 1)[0]] for k in grid.cells)
    plan = make_plan(claims, hours, order, whole)
    within = [r for r in plan.rows if r.plannable and r.runs <= set(grid.cells)]
    assert plan.planned >= len(within) >= 20
    # and a budget of every plannable claim's runs plans each of them
    every = frozenset().union(*(r.runs for r in plan.rows if r.plannable))
    plan = make_plan(claims, hours, order, sum(hours[k.rsplit("/seed", 1)[0]] for k in every))
    assert all(r.planned for r in plan.rows if r.plannable)


def test_a_claim_no_budget_settles_says_how_many_seeds_it_needs(paper):
    _, claims, hours, order = paper
    rows = {r.claim.id: r for r in make_plan(claims, hours, order, 1000).rows}
    # Qwen2.5-72B: 77.2±1.5 vs 76.5±1.6 on the same 6 seeds, paired: d_z = 0.7 /
    # sqrt(1.5² + 1.6²) = 0.319 at the primary family's 0.05 / 31, two-sided
    n = TTestPower().solve_power(0.7 / math.hypot(1.5, 1.6), None, 0.05 / 31 / 2, 0.8,
                                 alternative="larger")
    r = rows["T5:qwen2.5-72b/delta"]
    assert not r.planned and r.why_not == f"needs {math.ceil(n)} seeds a side: not plannable"
    assert rows["T7:finance/delta"].need.method == "spread unknown"
    # a parity's margin is the paper's seed sd (50.4±1.8 vs 50.5±1.8: ±1.8), so TOST's
    # seeds are finite: 41 a side at the primary family's level, one past the planner's cap
    parity = rows["T5:qwen2.5-7b/delta"]
    assert parity.claim.test == "TOST paired" and parity.claim.margin == pytest.approx(1.8)
    assert parity.need.seeds is None and parity.need.beyond == 41 == MAX_SEEDS + 1
    # T7's overall Δ is T2's CSMC effect, read from the same runs: one claim, T2's id
    assert "T7:overall/delta" not in rows
    assert "T7:overall/delta" in rows["T2:csmc/effect"].claim.places


def test_the_planners_seeds_are_statsmodels_by_hand_from_the_papers_numbers(paper):
    """Three claims planned with the verdict's test (two-sided, counted in the paper's
    direction) at the primary family's Bonferroni level, from the paper's mean ± sd and
    its printed d_z."""
    _, claims, hours, order = paper
    m = sum(c.family == "primary" and not c.why_not for c in claims)
    assert m == 31
    # claims that hold by construction are never tested: no seeds, no place in a level
    built = [c for c in claims if c.why_not.startswith("holds by construction: no test")]
    assert len(built) == 3 and {c.id.split(":")[0] for c in built} == {"T9", "T23"}
    # T17's Δ at N = 16, 32, 64 is T12's claim: 33 exploratory claims carry a p
    assert sum(c.family == "exploratory" and not c.why_not for c in claims) == 33
    alpha = 0.05 / m / 2  # one tail of the two-sided test at alpha / m
    rows = {r.claim.id: r for r in make_plan(claims, hours, order, 1000).rows}
    # T2/T4 uniform init, +23.2: DFIL 41.6±7.3 vs FT+Compose 18.4±6.2 on the same three
    # seeds, paired: d_z = 23.2 / sqrt(7.3² + 6.2²) = 2.4
    n = TTestPower().solve_power(23.2 / math.hypot(7.3, 6.2), None, alpha, 0.8,
                                 alternative="larger")
    assert rows["T2:uniform/effect"].need.seeds == math.ceil(n) == 8
    # T3 Δ vs fine-tune, +14.8: DFIL 31.2±9.2 (20 seeds) vs fine-tune 16.4±7.3 (3 seeds),
    # Welch's: Cohen's d on the root mean square of the stds, equal n a side
    d = 14.8 / math.sqrt((9.2 ** 2 + 7.3 ** 2) / 2)
    n = TTestIndPower().solve_power(d, None, alpha, 0.8, ratio=1.0, alternative="larger")
    assert rows["T3:self_d_ft/from_text"].claim.test == "welch"
    assert rows["T3:self_d_ft/from_text"].need.seeds == math.ceil(n) == 13
    # the headline +5.9 (T2 = T3 = T4's QuRe contrast), paired over 20 seeds: the paper's
    # printed d_z 0.63, not its means' stds
    c = rows["T2:compositional/effect"]
    assert c.claim.dz == 0.63 and c.claim.test == "paired"
    n = TTestPower().solve_power(0.63, None, alpha, 0.8, alternative="larger")
    assert math.ceil(n) == 46 > MAX_SEEDS
    assert c.why_not == "needs 46 seeds a side: not plannable"


def test_budget_zero_writes_no_grid_file(tmp_path, capsys):
    out = tmp_path / "plan.yaml"
    assert main(["grid", "plan", "--config", str(ROOT / "config/paper.yaml"), "--tables",
                 str(ROOT / "config/tables.yaml"), "--catalogue", "--gpu-hours", "0", "--out",
                 str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"0 of {CLAIMS} claims planned at power 0.8 for 0 GPU-h" in printed
    assert "no grid file written" in printed and not out.exists()


def test_the_plans_grid_file_runs_as_is(tmp_path, capsys):
    out = tmp_path / "plan.yaml"
    assert main(["grid", "plan", "--config", str(ROOT / "config/paper.yaml"), "--tables",
                 str(ROOT / "config/tables.yaml"), "--catalogue", "--gpu-hours", "25",
                 "--claims", "T2,T12", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "of 6 claims planned at power 0.8 for 25 GPU-h" in printed
    config = yaml.safe_load(out.read_text())
    assert config["name"] == "paper"
    record = config["plan"]
    assert record["budget"] == 25 and record["power"] == 0.8 and record["alpha"] == 0.05
    assert record["end"] == "pessimistic" and record["considered"] == 6
    assert record["claims"] and all(c.split(":")[0] in ("T2", "T12") for c in record["claims"])
    assert f"{len(record['claims'])} of 6 claims planned" in printed
    plan = Grid(config)
    assert plan.spec.plan.claims == tuple(record["claims"])
    paper = load_grid_files([ROOT / "config/paper.yaml"])
    same = [k for k in plan.cells if k in paper.cells]
    assert same and all(plan.cells[k].config == paper.cells[k].config for k in same)
    dry = snakemake("-n", "all_tables", "--configfile", str(out))
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert "train_cell" in dry.stdout and "all_tables" in dry.stdout


def test_a_claim_the_grid_has_no_cell_for_is_not_planned():
    """On the smoke grid (one tiny backbone, no 7B ablations), a claim none of whose
    sides the grid computes is never planned, not even at budget 0 (it costs nothing)."""
    grid = load_grid_files([ROOT / "config/smoke.yaml"])
    claims = paper_claims(grid, load_specs(ROOT / "config/tables.yaml"))
    archs = {name: b["arch"] for name, b in grid.config["backbones"].items()}
    hours = coordinate_hours(grid, archs)
    plan = make_plan(claims, hours, seed_order(grid.config, MAX_SEEDS), 0.0)
    assert plan.planned == 0
    rows = {r.claim.id: r for r in plan.rows}
    assert rows["T6:fine-tune-vs-dfil-7b"].why_not == "the grid has no cell for one side"
    absent = [r for r in plan.rows if not r.claim.sides]
    # T26's Δs are places of T5's claims (declared ``same_as``), whatever the grid has
    assert {r.claim.id.split(":")[0] for r in absent} == {"T3", "T5", "T12", "T17", "T18"}
    assert all(r.why_not == "the grid has no cell for it" and not r.plannable for r in absent)


def test_unknown_claims_are_a_usage_error(capsys):
    code = main(["grid", "plan", "--config", str(ROOT / "config/paper.yaml"), "--tables",
                 str(ROOT / "config/tables.yaml"), "--catalogue", "--gpu-hours", "5", "--claims",
                 "T99"])
    assert code == 2 and "no claim 'T99'" in capsys.readouterr().err


def test_the_planning_page_has_the_section_the_readme_links():
    assert "I have 40 GPU-hours: what can I check?" in (ROOT / "docs/planning.md").read_text()
    assert "(docs/planning.md)" in (ROOT / "README.md").read_text()
