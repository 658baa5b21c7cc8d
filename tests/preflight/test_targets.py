"""Targets the grid does not make are said in one line each, before Snakemake's error;
a command line whose only target is ``preflight`` gives its profiles."""

from __future__ import annotations

from dfil.preflight.targets import target_notes
from snakemake_cli import ROOT

KEY = "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42"
CELLS = [KEY, "frog/tiny-llama/finetune/lamna/nfull/na/seed42"]
OUTPUTS = ["paper_tables/smoke/T01-relwork-compare.tex", "paper_tables/smoke/diff.md"]


def notes(*targets):
    return target_notes(["snakemake", "--cores", "2", *targets], "smoke", CELLS, OUTPUTS,
                        ["config/smoke.yaml"])


def test_targets_of_the_grid_and_flags_say_nothing():
    assert notes(f"results/smoke/runs/{KEY}/metrics.json", "all_tables",
                 "--configfile=config/smoke.yaml", "paper_tables/smoke/diff.md") == []


def test_a_cell_not_in_the_grid_is_named_with_the_closest_one():
    (line,) = notes("results/smoke/runs/frog/tiny-llama/dfil/lam0.5/nfull/qure/seed43/"
                    "metrics.json")
    assert line.startswith("dfil: target results/smoke/runs/frog/tiny-llama/dfil/lam0.5/"
                           "nfull/qure/seed43/metrics.json: cell ")
    assert line.endswith(f"is not in the grid 'smoke' (config/smoke.yaml; 2 cells); did you "
                         f"mean {KEY!r}? `dfil grid list --config config/smoke.yaml` lists "
                         "them")


def test_another_grids_target_and_an_unknown_table_are_named():
    other, table = notes(f"results/paper/runs/{KEY}/metrics.json", "paper_tables/smoke/T99.tex")
    assert "the loaded grid is 'smoke' (config/smoke.yaml), not 'paper'" in other
    assert table == ("dfil: target paper_tables/smoke/T99.tex: no rule writes it for grid "
                     "'smoke'; the tables and reports are T01-relwork-compare.tex, diff.md")


def test_preflight_profiles_only_for_a_preflight_only_command_line(monkeypatch):
    """The profiles as Snakemake resolves them (a name, a directory, $SNAKEMAKE_PROFILE);
    None where another target is asked for too (that run refuses unlocked branches), or
    in a dry run."""
    from dfil.preflight.targets import preflight_profiles

    monkeypatch.chdir(ROOT)
    both = ["--profile", "slurm", "--profile", "workflow/profiles/slurm-local"]
    assert preflight_profiles(["snakemake", "preflight", *both]) == [
        "slurm/config.yaml", "workflow/profiles/slurm-local/config.yaml"]
    assert preflight_profiles(["snakemake", "preflight", "--cores", "1"]) == []
    assert preflight_profiles(["snakemake", "preflight", "all_tables", *both]) is None
    assert preflight_profiles(["snakemake", "all_tables", *both]) is None
    # a dry run runs no check: it shows the rule
    assert preflight_profiles(["snakemake", "preflight", "-n", *both]) is None
    monkeypatch.setenv("SNAKEMAKE_PROFILE", "slurm")
    assert preflight_profiles(["snakemake", "preflight"]) == ["slurm/config.yaml"]


def test_asks_for_reads_snakemake_command_lines_and_takes_any_other_as_yes():
    from dfil.preflight.targets import asks_for

    report = ("all_tables", "report")
    assert asks_for(["snakemake", "--cores", "2"], report, "all_tables")
    assert asks_for(["snakemake", "report", "-n"], report, "all_tables")
    assert not asks_for(["snakemake", "paper_tables/smoke/T05-scaling.tex"], report,
                        "all_tables")
    # pytest's own command line, when a test loads the Snakefile through the API
    assert asks_for(["pytest", "-q", "--lf", "--no-such-flag=1"], report, "all_tables")
