"""Duplicate YAML keys are refused wherever the project reads YAML."""

from pathlib import Path

import pytest

from dfil.config.cell import load_cell
from dfil.config.grid import load_grid_files
from dfil.config.yamlfile import load_yaml, loads_yaml
from dfil.render import load_specs
from dfil.util.errors import ConfigError
from snakemake_cli import snakemake

ROOT = Path(__file__).resolve().parents[1]


def test_loads_yaml_refuses_a_duplicate_key_naming_line_and_first_line():
    text = "a: 1\nb:\n  c: 2\n  d: 3\n  c: 4\n"
    with pytest.raises(ConfigError, match=r"^f\.yaml:5: duplicate key 'c' \(first given at "
                                          r"line 3\)"):
        loads_yaml(text, "f.yaml")
    with pytest.raises(ConfigError, match=r"f\.yaml:2: duplicate key 'a'"):
        loads_yaml("a: 1\na: 2\n", "f.yaml")
    with pytest.raises(ConfigError, match=r"f\.yaml:1: duplicate key 'x'"):
        loads_yaml("{x: 1, x: 2}\n", "f.yaml")


def test_loads_yaml_keeps_merges_and_distinct_keys():
    text = "base: &b {x: 1, y: 2}\nover:\n  <<: *b\n  y: 3\n"
    assert loads_yaml(text, "f") == {"base": {"x": 1, "y": 2}, "over": {"x": 1, "y": 3}}
    assert loads_yaml("1: a\n'1': b\n", "f") == {1: "a", "1": "b"}
    with pytest.raises(ConfigError, match=r"f: invalid YAML"):
        loads_yaml("a: [1\n", "f")


def test_every_config_file_reads_as_pyyamls_own_safe_loader_reads_it():
    """The strict loader parses with libyaml where PyYAML has it (its wheels have it):
    the same documents as PyYAML's pure-Python safe loader."""
    import yaml

    from dfil.config import yamlfile

    if yaml.__with_libyaml__:
        assert issubclass(yamlfile._FastStrictLoader, yaml.CSafeLoader)
    for path in sorted((ROOT / "config").glob("*.yaml")):
        text = path.read_text()
        assert loads_yaml(text, path.name) == yaml.load(text, Loader=yaml.SafeLoader), path


def test_a_syntax_error_is_told_with_its_line_and_what_was_found():
    """The pure-Python parser's message: the offending line quoted, a name given."""
    with pytest.raises(ConfigError, match=r"found undefined alias 'nope'(.|\n)*a: \*nope"):
        loads_yaml("a: *nope\n", "f.yaml")
    with pytest.raises(ConfigError, match=r"found character '\\t'"):
        loads_yaml("a: 1\n\tb: 2\n", "f.yaml")


def test_load_yaml_names_an_unreadable_file(tmp_path):
    with pytest.raises(ConfigError, match=r"missing\.yaml: cannot read"):
        load_yaml(tmp_path / "missing.yaml")


def test_cell_grid_and_tables_files_refuse_duplicate_keys(tmp_path):
    cell = tmp_path / "cell.yaml"
    cell.write_text("train:\n  epochs: 1\n  epochs: 3\n")
    with pytest.raises(ConfigError, match=r"cell\.yaml:3: duplicate key 'epochs'"):
        load_cell(cell)
    grid = tmp_path / "grid.yaml"
    grid.write_text((ROOT / "config" / "smoke.yaml").read_text() + "name: again\n")
    with pytest.raises(ConfigError, match=r"grid\.yaml:\d+: duplicate key 'name' \(first "
                                          r"given at line \d+\)"):
        load_grid_files([grid])
    tables = tmp_path / "tables.yaml"
    tables.write_text("scaling:\n  number: 5\n  number: 6\n")
    with pytest.raises(ConfigError, match=r"tables\.yaml:3: duplicate key 'number'"):
        load_specs(tables)


@pytest.mark.slow
def test_snakemake_refuses_a_config_file_with_a_duplicate_key(tmp_path):
    grid = tmp_path / "dup.yaml"
    grid.write_text((ROOT / "config" / "smoke.yaml").read_text()
                    + "probe_seed: 1\nprobe_seed: 2\n")
    out = snakemake("-n", "all_tables", "--configfile", str(grid))
    assert out.returncode != 0
    assert "dup.yaml:" in out.stdout + out.stderr
    assert "duplicate key 'probe_seed'" in out.stdout + out.stderr
