from types import SimpleNamespace

import pytest

from dfil.config.runkey import RunPoint, applicable, format_key, group_points, parse_key, run_key
from dfil.util.errors import ConfigError


def test_parse_key():
    k = parse_key("runs/frog/qwen2.5-7b/dfil+fewshot/lam0.5/n16/qure/seed42")
    assert k == {"task": "frog", "backbone": "qwen2.5-7b", "method": "dfil",
                 "variant": "fewshot", "lam": "0.5", "budget": "16", "init": "qure",
                 "seed": "42"}
    assert parse_key("sst5/phi/finetune/lamna/nfull/na/seed1")["variant"] == ""
    with pytest.raises(ConfigError, match="not a run key"):
        parse_key("frog/qwen/dfil/seed42")


def _key_parts(method: str, lam, init: str, seed) -> tuple:
    point = applicable(RunPoint("frog", "tiny", method, "", lam, "full", init, seed))
    return point.lam, point.init, point.seed


def test_applicable_na_rules():
    assert _key_parts("dfil", 0.50, "uniform", 7) == ("0.5", "uniform", "7")
    # no MF: neither lambda nor init apply
    assert _key_parts("finetune", 0.1, "uniform", 7) == ("na", "na", "7")
    # a fixed lambda wins over the group's
    assert _key_parts("dfil_only", 0.1, "qure", 7)[0] == "0"
    # nothing trained: no seed
    assert _key_parts("zero_shot", 0.5, "qure", 7) == ("na", "na", "na")


def test_run_key_round_trips():
    key = run_key(RunPoint("frog", "tiny", "dfil", "fewshot", 0.05, 16, "qure", 42))
    assert key == "frog/tiny/dfil+fewshot/lam0.05/n16/qure/seed42"
    parts = parse_key(key)
    assert format_key(RunPoint(**parts)) == key


def test_group_points_expand_every_combination_in_key_form():
    group = SimpleNamespace(tasks=["frog"], backbones=["tiny"], methods=["dfil", "finetune"],
                            variant="", lambdas=[0.5], budgets=["full"], inits=["qure"],
                            seeds="two")
    keys = [format_key(p) for p in group_points(group, {"two": [1, 2]})]
    # finetune has no lambda or init: its two seeds are two cells, keyed "na"
    assert keys == ["frog/tiny/dfil/lam0.5/nfull/qure/seed1",
                    "frog/tiny/dfil/lam0.5/nfull/qure/seed2",
                    "frog/tiny/finetune/lamna/nfull/na/seed1",
                    "frog/tiny/finetune/lamna/nfull/na/seed2"]
    assert group_points(SimpleNamespace(**{**vars(group), "seeds": [3]}), {})[0].seed == "3"
