"""Every name config/tables.yaml uses is checked where it is loaded: metrics against
metrics.json's schema, a ``delta`` (and every other column or row reference) against the
table's own columns and rows, backbones, tasks, variants and seed sets against the
grids. An error names the file, the table, the dotted key and the closest known name; a
typo never reads as a row of "---" or a row with no runs."""

import re
import shutil
from pathlib import Path

import pytest
import yaml

from dfil.config.yamlfile import load_yaml
from dfil.render import load_specs
from dfil.render.coordinates import check_coordinates
from dfil.util.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config"
GRIDS = ("config.yaml", "smoke.yaml", "paper.yaml", "hub-smoke.yaml")


def edited(tmp_path: Path, edit) -> Path:
    """A copy of the real tables file with ``edit`` applied, beside the paper's grid."""
    specs = yaml.safe_load((CONFIG / "tables.yaml").read_text())
    edit(specs)
    shutil.copy(CONFIG / "paper.yaml", tmp_path / "paper.yaml")
    path = tmp_path / "tables.yaml"
    path.write_text(yaml.safe_dump(specs, sort_keys=False))
    return path


def scaling_column(specs: dict, cid: str) -> dict:
    return next(c for c in specs["scaling"]["columns"] if c["id"] == cid)


@pytest.mark.parametrize("grid", GRIDS)
def test_the_shipped_tables_name_only_what_the_grids_know(grid):
    check_coordinates(load_specs(CONFIG / "tables.yaml"), load_yaml(CONFIG / grid),
                      CONFIG / "tables.yaml")


@pytest.mark.parametrize("edit,message", [
    (lambda s: scaling_column(s, "delta").update(delta=["dfil", "fft"]),
     "scaling.columns[2].delta: 'fft' is not a column (did you mean 'ft'? known: "
     "delta, dfil, ft, mono)"),
    (lambda s: s["scaling"]["where"].update(metric="test.main.accc"),
     "scaling.where.metric: 'accc' is not a key of test.main (did you mean 'acc'? it has "
     "acc, mono_magnitude, mono_pairs, mono_rate, mono_violations, n, per_class_acc)"),
    (lambda s: s["scaling"]["where"].update(metric="provenance.device"),
     "scaling.where.metric: provenance is no measurement (it describes the run)"),
])
def test_a_misnamed_metric_or_column_is_refused_where_the_tables_load(tmp_path, edit,
                                                                       message):
    path = edited(tmp_path, edit)
    with pytest.raises(ConfigError) as err:
        load_specs(path)
    assert str(err.value) == f"{path}: {message}"


def test_a_reference_to_another_tables_entry_is_checked(tmp_path):
    def edit(specs):
        entry = next(e for t in specs.values() for r in t.get("rows", [])
                     for e in (r.get("cells") or {}).values()
                     if isinstance(e, dict) and "ref" in e)
        entry["ref"] = "compositonal/" + entry["ref"].split("/", 1)[1]

    with pytest.raises(ConfigError, match=r": 'compositonal' is not a table \(did you mean "
                                          r"'compositional'\?"):
        load_specs(edited(tmp_path, edit))


@pytest.mark.parametrize("edit,message", [
    (lambda s: s["scaling"]["rows"][0].update(backbone="qwen2.5-7bb"),
     "scaling.rows[0].backbone: 'qwen2.5-7bb' is not a backbone of any grid (did you mean "
     "'qwen2.5-7b'? known: "),
    (lambda s: s["scaling"]["where"].update(seeds="thre"),
     "scaling.where.seeds: 'thre' is not a seed set of any grid (did you mean 'three'? "),
    (lambda s: s["scaling"]["where"].update(task="frogg"),
     "scaling.where.task: 'frogg' is not a task of any grid (did you mean 'frog'? "),
])
@pytest.mark.parametrize("grid", ["smoke.yaml", "paper.yaml"])
def test_a_cell_name_no_grid_knows_is_refused_naming_file_table_and_key(tmp_path, edit,
                                                                        message, grid):
    path = edited(tmp_path, edit)
    with pytest.raises(ConfigError) as err:
        check_coordinates(load_specs(path), load_yaml(CONFIG / grid), path)
    assert str(err.value).startswith(f"{path}: {message}")


def test_a_name_only_the_paper_grid_runs_is_a_row_with_no_runs_in_a_cut_down_grid(tmp_path):
    # the smoke grid neither runs nor maps qwen2.5-72b or variant stopgrad: the paper does
    path = edited(tmp_path, lambda s: s["scaling"]["rows"][0].update(
        backbone="qwen2.5-72b", variant="stopgrad"))
    smoke = load_yaml(CONFIG / "smoke.yaml")
    assert "qwen2.5-72b" not in smoke["render"]["backbones"]
    assert "stopgrad" not in smoke["render"]["variants"]
    del smoke["render"]["strict"]  # a grid cut down to rerun some cells
    check_coordinates(load_specs(path), smoke, path)
    (tmp_path / "paper.yaml").unlink()  # without the paper's grid: the backbone catalogue's
    with pytest.raises(ConfigError, match=re.escape(
            "scaling.rows[0].variant: 'stopgrad' is not a variant of any grid")):
        check_coordinates(load_specs(path), smoke, path)


@pytest.mark.parametrize("edit,message", [
    (lambda s: fewshot_column(s, "n16").update(budget=64),
     "fewshot_main.columns[0] (column n16).budget: 64 is a budget no cell of this grid (smoke) "
     "has: it runs 16, 32 (and full); an entry the grid leaves out on purpose says "
     "`expect: not run`"),
    (lambda s: s["scaling"]["rows"][0].update(backbone="qwen2.5-72b"),
     "scaling.rows[0].backbone: 'qwen2.5-72b' is not a backbone of this grid (smoke) (did you "
     "mean 'qwen2.5-7b'? known: qwen2.5-1.5b, qwen2.5-7b, qwen2.5-7b-instruct, tiny-llama); "
     "an entry the grid leaves out on purpose says `expect: not run`"),
])
def test_a_grid_rendering_every_table_refuses_what_only_the_paper_runs(tmp_path, edit,
                                                                       message):
    # the paper's grid runs budget 64 and qwen2.5-72b, so the lenient check lets them by; a
    # grid that renders every table must run them itself, or the entry says it will not
    path = edited(tmp_path, edit)
    smoke = load_yaml(CONFIG / "smoke.yaml")
    assert smoke["render"]["strict"] is True
    with pytest.raises(ConfigError) as err:
        check_coordinates(load_specs(path), smoke, path)
    assert str(err.value) == f"{path}: {message}"
    check_coordinates(load_specs(path), load_yaml(CONFIG / "paper.yaml"), path)

    def expected(specs):
        edit(specs)
        fewshot_column(specs, "n16")["expect"] = "not run"
        specs["scaling"]["rows"][0]["expect"] = "not run"
    check_coordinates(load_specs(edited(tmp_path, expected)), smoke, path)


def test_the_paper_grid_runs_every_entry_expected_not_run_elsewhere(tmp_path):
    # the catalogue knows smollm2-135m, so only the paper grid's own strict check refuses
    # it; the paper grid leaves nothing out on purpose, so the row's mark does not count
    path = edited(tmp_path, lambda s: s["scaling"]["rows"][1].update(backbone="smollm2-135m"))
    row = load_specs(path)["scaling"]["rows"][1]
    assert row["expect"] == "not run" and row["id"] == "qwen2.5-14b"
    with pytest.raises(ConfigError, match=re.escape(
            "scaling.rows[1].backbone: 'smollm2-135m' is not a backbone of this grid (paper)")
            ) as err:
        check_coordinates(load_specs(path), load_yaml(CONFIG / "paper.yaml"), path)
    assert str(err.value).endswith(")") and "expect" not in str(err.value)  # no such way out


def test_expect_not_run_never_lets_a_typo_by(tmp_path):
    # a coordinate no grid runs is a typo, whether or not the entry expects no runs
    path = edited(tmp_path, lambda s: fewshot_column(s, "n64").update(budget=61))
    assert fewshot_column(load_specs(path), "n64")["expect"] == "not run"
    with pytest.raises(ConfigError, match=re.escape(
            "fewshot_main.columns[2] (column n64).budget: 61 is a budget no cell of any grid "
            "has: the grids run 32, 64 (and full)")):
        check_coordinates(load_specs(path), load_yaml(CONFIG / "smoke.yaml"), path)


def fewshot_column(specs: dict, cid: str) -> dict:
    return next(c for c in specs["fewshot_main"]["columns"] if c["id"] == cid)


@pytest.mark.parametrize("edit,message", [
    (lambda s: fewshot_column(s, "n16").update(budget=61),
     "fewshot_main.columns[0] (column n16).budget: 61 is a budget no cell of any grid has: "
     "the grids run 32, 64 (and full)"),
    (lambda s: s["fewshot_main"]["where"].update(lam=0.55),
     "fewshot_main.where.lam: 0.55 is a lam no cell of any grid has: the grids run 0.5, 1"),
    (lambda s: s["dataset_stats"]["where"].update(seed=24),
     "dataset_stats.where.seed: 24 is a seed no cell of any grid has: the grids run 13, 21"),
])
def test_a_number_no_grid_runs_is_refused_with_the_nearest_values_run(tmp_path, edit, message):
    path = edited(tmp_path, edit)
    with pytest.raises(ConfigError) as err:
        check_coordinates(load_specs(path), load_yaml(CONFIG / "smoke.yaml"), path)
    assert str(err.value) == f"{path}: {message}"


@pytest.mark.parametrize("edit,message", [
    (lambda s: s["fewshot_main"]["where"].update(scale=1000),
     "fewshot_main.where.scale: must be 1 or 100, got 1000"),
    (lambda s: s["compositional"].update(number=2),
     "compositional.number: 2 is table headline's number too; each table has its own (its "
     "file is T<number>-<name>.tex)"),
    (lambda s: s["fewshot_main"]["rows"][0]["paper"].update(n16="16.4±7.x"),
     "fewshot_main.rows[0].paper.n16: '16.4±7.x' is not a number (give a number, or "
     "mean±std as the paper prints it)"),
])
def test_a_scale_a_table_number_or_a_paper_value_out_of_bounds_is_one_line(tmp_path, edit,
                                                                          message):
    path = edited(tmp_path, edit)
    with pytest.raises(ConfigError) as err:
        load_specs(path)
    assert str(err.value) == f"{path}: {message}"
