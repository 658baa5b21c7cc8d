import pytest

from dfil.runkey import applicable, format_key, parse_key, run_key


def test_parse_key():
    k = parse_key("runs/frog/qwen2.5-7b/dfil+fewshot/lam0.5/n16/qure/seed42")
    assert k == {"task": "frog", "backbone": "qwen2.5-7b", "method": "dfil",
                 "variant": "fewshot", "lam": "0.5", "budget": "16", "init": "qure",
                 "seed": "42"}
    assert parse_key("sst5/phi/finetune/lamna/nfull/na/seed1")["variant"] == ""
    with pytest.raises(ValueError, match="not a run key"):
        parse_key("frog/qwen/dfil/seed42")


def test_applicable_na_rules():
    assert applicable("dfil", 0.50, "uniform", 7) == ("0.5", "uniform", "7")
    # no MF: neither lambda nor init apply
    assert applicable("finetune", 0.1, "uniform", 7) == ("na", "na", "7")
    # a fixed lambda wins over the group's
    assert applicable("dfil_only", 0.1, "qure", 7)[0] == "0"
    # nothing trained: no seed
    assert applicable("zero_shot", 0.5, "qure", 7) == ("na", "na", "na")


def test_run_key_round_trips():
    key = run_key("frog", "tiny", "dfil", "fewshot", 0.05, 16, "qure", 42)
    assert key == "frog/tiny/dfil+fewshot/lam0.05/n16/qure/seed42"
    parts = parse_key(key)
    assert format_key(*(parts[f] for f in ("task", "backbone", "method", "variant", "lam",
                                           "budget", "init", "seed"))) == key
