import json

import pandas as pd
import pytest

from dfil.cli import main
from dfil.contracts.metrics import write_metrics
from dfil.results.aggregate import COLUMNS, aggregate, check_replaceable, metrics_files
from dfil.util.errors import MetricsError, MissingInputError, RefusedError
from records import metrics_record


def write_run(runs, seed, acc, **overrides):
    d = runs / f"frog/tiny/dfil/lam0.5/nfull/qure/seed{seed}"
    d.mkdir(parents=True)
    record = metrics_record(**overrides)
    record["test"]["mf"]["acc"] = acc
    write_metrics(d / "metrics.json", record)
    return d


def test_aggregate_rows_hand_computed(tmp_path):
    runs = tmp_path / "runs"
    for seed, acc in ((42, 0.5), (123, 0.25)):
        write_run(runs, seed, acc)
    table = aggregate(sorted(runs.rglob("metrics.json")), runs)
    acc = table[table.metric == "test.mf.acc"].sort_values("seed")
    assert acc["value"].tolist() == [0.25, 0.5] and acc["seed"].tolist() == ["123", "42"]
    one = table[table.seed == "42"].set_index("metric")["value"].to_dict()
    # Measurements only: the contract's descriptive subtrees (train, provenance, seed,
    # per_pair) are not rows; train.attempts is added as a count.
    assert one == {"alpha": 0.5, "test.mf.acc": 0.5, "test.mf.per_class_acc.0": 1.0,
                   "test.mf.n": 4.0, "val.mf.acc": 0.25, "val.mf.per_class_acc.0": 0.5,
                   "val.mf.per_class_acc.1": 0.0, "val.mf.n": 4.0,
                   "data.counts.train.0": 3.0, "data.counts.train.1": 1.0,
                   "data.counts.val.0": 2.0, "data.counts.val.1": 2.0,
                   "data.counts.test.0": 2.0, "data.counts.test.1": 2.0,
                   "data.total.train": 4.0, "data.total.val": 4.0, "data.total.test": 4.0,
                   "csmc.mf.consistency": 0.9, "csmc.mf.by_domain.finance": 1.0,
                   "train.attempts": 2.0}
    assert (table["git_commit"] == "deadbeef").all()
    assert set(table["variant"]) == {""} and set(table["lam"]) == {"0.5"}


def test_aggregate_refuses_a_file_that_breaks_the_contract(tmp_path):
    runs = tmp_path / "runs"
    d = write_run(runs, 42, 0.5)
    record = json.loads((d / "metrics.json").read_text())
    record["test"]["mf"]["acc"] = 1.5
    (d / "metrics.json").write_text(json.dumps(record))
    with pytest.raises(MetricsError, match=r"seed42/metrics.json: metrics key test.mf.acc"):
        aggregate([d / "metrics.json"], runs)


def test_aggregate_cli(tmp_path, capsys):
    runs = tmp_path / "runs"
    for seed, acc in ((42, 0.5), (123, 0.25)):
        write_run(runs, seed, acc)
    out = tmp_path / "agg" / "metrics.parquet"
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 0
    parquet, csv = pd.read_parquet(out), pd.read_csv(out.with_suffix(".csv"))
    assert len(parquet) == len(csv) == 40
    assert parquet["value"].tolist() == csv["value"].tolist()
    assert "40 rows from 2 runs" in capsys.readouterr().out


def test_metrics_files_refuses_runs_that_match_nothing(tmp_path):
    with pytest.raises(MissingInputError, match=r"smkoe/runs: no such runs directory"):
        metrics_files(tmp_path / "smkoe" / "runs")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingInputError, match=r"empty: no run directory below it has a "
                                                r"metrics\.json"):
        metrics_files(tmp_path / "empty")
    found = write_run(tmp_path / "runs", 42, 0.5) / "metrics.json"
    assert metrics_files(tmp_path / "runs") == [found]
    assert metrics_files(tmp_path / "elsewhere", [found]) == [found]


def test_check_replaceable_keeps_a_full_table(tmp_path):
    out = tmp_path / "metrics.parquet"
    empty = pd.DataFrame(columns=COLUMNS)
    assert check_replaceable(empty, out) == []  # nothing to lose
    full = aggregate([write_run(tmp_path / "runs", 42, 0.5) / "metrics.json"],
                     tmp_path / "runs")
    full.to_parquet(out)
    with pytest.raises(RefusedError, match=r"metrics\.parquet: refusing to replace it: it "
                                           r"holds 1 runs and the new table lacks 1 of them "
                                           r"\(frog/tiny/dfil/lam0.5/nfull/qure/seed42\)"):
        check_replaceable(empty, out)
    assert check_replaceable(full, out) == []  # the same runs may replace it


def test_check_replaceable_drops_runs_only_when_told_or_outside_the_grid(tmp_path):
    runs, out = tmp_path / "runs", tmp_path / "metrics.parquet"
    files = [write_run(runs, seed, 0.5) / "metrics.json" for seed in (1, 2, 3)]
    aggregate(files, runs).to_parquet(out)
    one = aggregate(files[:1], runs)
    gone = ["frog/tiny/dfil/lam0.5/nfull/qure/seed2", "frog/tiny/dfil/lam0.5/nfull/qure/seed3"]
    with pytest.raises(RefusedError, match="holds 3 runs and the new table lacks 2 of them"):
        check_replaceable(one, out)
    assert check_replaceable(one, out, drop=True) == gone
    # The grid's own run list: runs it no longer has go without the flag, others do not.
    assert check_replaceable(one, out, grid_keys=["frog/tiny/dfil/lam0.5/nfull/qure/seed1"]) \
        == gone
    with pytest.raises(RefusedError, match=r"lacks 1 of them \(.*seed3\)"):
        check_replaceable(one, out, grid_keys=[f"frog/tiny/dfil/lam0.5/nfull/qure/seed{s}"
                                               for s in (1, 3)])


def test_aggregate_cli_by_hand_never_replaces_a_table_with_fewer_runs(tmp_path, capsys):
    runs = tmp_path / "runs"
    dirs = [write_run(runs, seed, 0.5) for seed in (1, 2, 3)]
    out = tmp_path / "agg" / "metrics.parquet"
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 0
    before = out.read_bytes(), out.with_suffix(".csv").read_bytes()
    one = ["aggregate", "--runs", str(runs), "--metrics", str(dirs[0] / "metrics.json"),
           "--out", str(out)]
    assert main(one) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--drop-unlisted-runs" in err and "lacks 2 of them" in err
    assert (out.read_bytes(), out.with_suffix(".csv").read_bytes()) == before
    assert main([*one, "--drop-unlisted-runs"]) == 0
    said = capsys.readouterr().out
    assert "dropped 2 runs the old table held: frog/tiny/dfil/lam0.5/nfull/qure/seed2, " in said
    assert pd.read_parquet(out)["seed"].unique().tolist() == ["1"]


def test_aggregate_cli_with_the_grid_rebuilds_a_grid_shrunk_on_purpose(tmp_path, capsys):
    """What the aggregate rule does: it passes the grid (its resolved grid.yaml), so runs
    of cells the grid no longer has leave the table without a flag."""
    import yaml

    from dfil.config.grid import Grid

    grid_file = tmp_path / "grid.yaml"
    smoke = yaml.safe_load(open("config/smoke.yaml"))
    smoke["groups"] = {"g": {**smoke["groups"]["all_methods"], "methods": ["dfil"]}}
    del smoke["controls"]  # they name groups this grid no longer has
    grid_file.write_text(yaml.safe_dump(smoke))
    (key,) = Grid(smoke).cells
    runs = tmp_path / "results" / "smoke" / "runs"
    keep = runs / key
    keep.mkdir(parents=True)
    (keep / "metrics.json").write_text((write_run(runs, 7, 0.5) / "metrics.json").read_text())
    out = tmp_path / "metrics.parquet"
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 0  # both runs
    assert main(["aggregate", "--runs", str(runs), "--metrics", str(keep / "metrics.json"),
                 "--config", str(grid_file), "--out", str(out)]) == 0
    assert "dropped 1 runs the old table held: frog/tiny/dfil/lam0.5/nfull/qure/seed7" in \
        capsys.readouterr().out
    assert len(pd.read_parquet(out)["seed"].unique()) == 1


def test_aggregate_cli_with_a_mistyped_runs_keeps_the_table(tmp_path, capsys):
    runs = tmp_path / "results" / "smoke" / "runs"
    write_run(runs, 42, 0.5)
    out = tmp_path / "results" / "smoke" / "aggregate" / "metrics.parquet"
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 0
    before = out.read_bytes()
    typo = tmp_path / "results" / "smkoe" / "runs"
    assert main(["aggregate", "--runs", str(typo), "--out", str(out)]) == 2
    assert f"{typo}: no such runs directory" in capsys.readouterr().err
    assert out.read_bytes() == before


def test_an_unreadable_old_table_is_unknown_and_never_replaced_without_the_flag(
        tmp_path, capsys):
    runs = tmp_path / "runs"
    dirs = [write_run(runs, seed, 0.5) for seed in (1, 2, 3)]
    out = tmp_path / "agg" / "metrics.parquet"
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 0
    out.write_bytes(out.read_bytes()[:100])  # truncated; the CSV beside it intact
    before = out.read_bytes(), out.with_suffix(".csv").read_bytes()
    one = ["aggregate", "--runs", str(runs), "--metrics", str(dirs[0] / "metrics.json"),
           "--out", str(out)]
    assert main(one) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"dfil aggregate: error: {out}: refusing to replace it: it cannot "
                          "be read (")
    assert "so which runs it and metrics.csv beside it hold is unknown" in err
    assert (out.read_bytes(), out.with_suffix(".csv").read_bytes()) == before
    assert main([*one, "--drop-unlisted-runs"]) == 0
    assert pd.read_csv(out.with_suffix(".csv"))["seed"].unique().tolist() == [1]


def test_aggregating_a_runs_root_skips_the_files_runs_keep_aside(tmp_path, capsys):
    runs = tmp_path / "runs"
    run = write_run(runs, 42, 0.5)
    for aside in ("damaged", "superseded/0123456789abcdef"):
        (run / aside).mkdir(parents=True)
        (run / aside / "metrics.json").write_text("{trunc")
    assert metrics_files(runs) == [run / "metrics.json"]
    out = tmp_path / "metrics.parquet"
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 0
    assert "from 1 runs" in capsys.readouterr().out


def test_a_run_recording_another_cell_than_its_path_is_refused_naming_both(tmp_path):
    """Two run directories swapped: each metrics.json names the cell it was made for,
    never the one its path says, so neither becomes the other's rows."""
    runs = tmp_path / "runs"
    here = "frog_tiny_dfil_lam0.5_nfull_qure_seed42"
    identity = {"config_hash": "0123456789abcdef", "inputs_sha256": "0" * 64, "inputs": {}}
    own = write_run(runs, 42, 0.5, cell=here, identity={"cell": here, **identity})
    assert aggregate([own / "metrics.json"], runs)["value"].notna().all()
    other = "frog_tiny_dfil_lam0.5_nfull_uniform_seed42"
    moved = write_run(runs, 7, 0.5, cell=other, identity={"cell": other, **identity})
    with pytest.raises(RefusedError) as err:
        aggregate([moved / "metrics.json"], runs)
    assert str(err.value).startswith(
        f"{moved / 'metrics.json'} records the run of cell {other}, but its path is the run "
        "of cell frog_tiny_dfil_lam0.5_nfull_qure_seed7; ")


def test_a_run_of_another_config_than_the_grids_is_refused_naming_both(tmp_path):
    runs = tmp_path / "runs"
    here = "frog_tiny_dfil_lam0.5_nfull_qure_seed42"
    identity = {"cell": here, "config_hash": "0123456789abcdef", "inputs_sha256": "0" * 64,
                "inputs": {}}
    run = write_run(runs, 42, 0.5, cell=here, identity=identity)
    key = "frog/tiny/dfil/lam0.5/nfull/qure/seed42"
    assert len(aggregate([run / "metrics.json"], runs, {key: "0123456789abcdef"}))
    with pytest.raises(RefusedError) as err:
        aggregate([run / "metrics.json"], runs, {key: "fedcba9876543210"})
    assert str(err.value).startswith(
        f"{run / 'metrics.json'} records config 0123456789abcdef, but the grid's cell {here} "
        "is config fedcba9876543210; ")
