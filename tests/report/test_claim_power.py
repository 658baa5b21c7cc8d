"""The claims on the index and in claims.csv with the power their seeds had and their
minimum detectable effect (the claims package's, computed once), and, on a grid a budget
plan wrote, whether the plan took each: a claim it did not take reads "not run", "not
planned at this budget", never as a failure."""

import csv
import math

import pytest
import yaml
from report_tables import stat
from statsmodels.stats.power import TTestPower

from dfil.claims import judge, with_power
from dfil.cli import main
from dfil.config.grid import load_grid_files
from dfil.config.gridfile import PlanRecord
from dfil.plan.achieved import standings
from dfil.plan.claims import paper_claims, ran_claims
from dfil.plan.power import power_at
from dfil.render import load_specs
from dfil.render.entries import Row, Table
from dfil.report import site
from dfil.report.links import dead_links
from report_inputs import synthetic_report_inputs
from snakemake_cli import ROOT

DFIL = "frog/smollm2-135m/dfil/lam0.5/nfull/qure/seed"
FT = "frog/smollm2-135m/finetune/lamna/nfull/na/seed"


def table() -> Table:
    """DFIL and fine-tune on three seeds each, printed 41.0±1.0 and 40.0±1.0; the paper's
    zero-shot row printed but never run."""
    dfil = stat(44.0, 45.0, 46.0, published="41.0±1.0", reads=[DFIL + s for s in "123"])
    ft = stat(40.0, 40.5, 41.0, published="40.0±1.0", reads=[FT + s for s in "123"])
    rows = [Row("dfil", "DFIL", entries={"acc": dfil}), Row("ft", "Fine-tune",
                                                          entries={"acc": ft})]
    effects = [{"label": "DFIL vs fine-tune", "a": "dfil/acc", "b": "ft/acc"},
               {"label": "Fine-tune vs zero-shot", "a": "ft/acc", "b": "zs/acc"}]
    return Table("scaling", 5, "tab:scaling", "Scaling", ["acc"], rows, effects=effects,
                 published={("dfil", "acc"): "41.0±1.0", ("ft", "acc"): "40.0±1.0",
                            ("zs", "acc"): "30.0±2.0"})


RECORD = PlanRecord(budget=25, power=0.8, alpha=0.05, projected=12.5, considered=2,
                    claims=("T5:dfil-vs-fine-tune",))


def _site(tmp_path, record):
    t = table()
    found = standings(ran_claims([t], {"scaling": {}}), record)
    power = found.claims
    context = {"title": "DFIL reproduction", "grid": "paper", "standin": "", "commit": "abc",
               "figures": {}, "failures": {}, "power": power, "plan": found.coverage}
    out = site.write_pages([t], {}, context, tmp_path / "runs", tmp_path / "o")
    for name in ("tables.pdf", "diff.html", "audit.html"):  # written by the other steps
        (tmp_path / "o" / name).write_text("<html></html>")
    assert dead_links(out["index.html"])[0] == []
    rows = {r["claim"]: r for r in csv.DictReader(out["claims.csv"].open())}
    return power, out["index.html"].read_text(), rows


def test_each_claim_shows_the_power_its_seeds_had_and_its_mde(tmp_path):
    power, index, rows = _site(tmp_path, None)
    got = power["T5:dfil-vs-fine-tune"]
    # the paper's Δ 1.0 on the same three seeds a side, paired: d_z = 1 / sqrt(1 + 1),
    # two-sided at alpha 0.05 / 1 (the one claim of its family that can carry a p)
    claim = ran_claims([table()], {"scaling": {}})[0]
    assert claim.test == "paired"
    assert got.n == 3 and got.power == pytest.approx(TTestPower().power(
        1 / math.sqrt(2), 3, 0.025, alternative="larger")) == power_at(claim, 3, 0.05)
    row = rows["T5:dfil-vs-fine-tune"]
    assert float(row["power_at_n"]) == got.power and row["planned"] == ""
    # the MDE is the claims package's, from the seeds' spread: in claims.csv and the index
    assert f"{got.power:.2f} (n=3)" in index and f">{float(row['mde']):.2f}</td>" in index
    assert "Power at n" in index and "MDE" in index
    # no plan wrote this grid: no planned column, no plan line
    assert "Planned" not in index and "not planned at this budget" not in index
    # the claim with a side that never ran has no power, and says why
    assert power["T5:fine-tune-vs-zero-shot"].why == "the grid has no cell for one side"


@pytest.mark.slow
def test_a_claim_the_plan_did_not_take_reads_not_planned_not_as_a_failure(tmp_path):
    power, index, rows = _site(tmp_path, RECORD)
    assert power["T5:dfil-vs-fine-tune"].planned is True
    assert power["T5:fine-tune-vs-zero-shot"].planned is False
    assert "1 of 2 claims planned at power 0.8 for 25 GPU-h (projected 12.5 GPU-h)" in index
    assert rows["T5:dfil-vs-fine-tune"]["planned"] == "planned"
    skipped = rows["T5:fine-tune-vs-zero-shot"]
    assert skipped["planned"] == skipped["reason"] == "not planned at this budget"
    assert skipped["verdict"] == "not run"
    frame = site.claims_frame(with_power(judge([table()]), power, True), True)
    view = frame.set_index("The paper's words")
    assert view.loc["DFIL vs fine-tune", "Planned"] == "planned"
    skipped = view.loc["Fine-tune vs zero-shot"]
    assert skipped["Planned"] == skipped["Why"] == "not planned at this budget"
    assert "not run" in skipped["Verdict"]


@pytest.mark.slow
def test_dfil_report_on_a_planned_grid_shows_each_claims_plan_and_power(tmp_path,
                                                                       monkeypatch):
    """``dfil report`` on the smoke grid with a plan block, from a synthetic aggregate:
    the plan's coverage, each claim planned or not, power and MDE; no dead link."""
    monkeypatch.chdir(tmp_path)
    specs, smoke = load_specs(ROOT / "config/tables.yaml"), ROOT / "config/smoke.yaml"
    grid = load_grid_files([smoke])
    ids = [c.id for c in paper_claims(grid, specs)]
    record = {"budget": 5, "projected": 4.5, "considered": len(ids), "claims": ids[:2]}
    (tmp_path / "plan.yaml").write_text(yaml.safe_dump({"plan": record}))
    tex_dir, aggregate = synthetic_report_inputs(smoke, specs, tmp_path)
    assert main(["report", "--config", str(smoke), str(tmp_path / "plan.yaml"), "--tables",
                 str(ROOT / "config/tables.yaml"), "--aggregate",
                 str(aggregate), "--tex-dir", str(tex_dir),
                 "--no-pdf"]) == 0
    index = (tex_dir / "index.html").read_text()
    assert f"2 of {len(ids)} claims planned at power 0.8 for 5 GPU-h" in index
    assert index.count(">planned</td>") == 2
    assert index.count(">not planned at this budget</td>") > 2
    # one seed a cell on the smoke grid: no power, and the reason
    assert ">n=1: fewer than 2 seeds a side</td>" in index and ">spread unknown</td>" in index
    rows = list(csv.DictReader((tex_dir / "claims.csv").open()))
    assert [r["claim"] for r in rows if r["planned"] == "planned"] == ids[:2]
    assert all(r["reason"] == "not planned at this budget" for r in rows
               if r["verdict"] == "not run" and r["planned"] != "planned")
    (tex_dir / "audit.html").write_text("<html></html>")  # the audit step's
    assert dead_links(tex_dir / "index.html")[0] == []
