import jsonschema
import pytest
from report_tables import scaling_table

from dfil.render.names import labels
from dfil.report.numbers import ran_as, seeds_of, table_numbers, validate


def test_every_number_with_its_paper_value_runs_and_verdict():
    t = scaling_table()
    rows = table_numbers(t, labels(t, ["Backbone", "Accuracy (%)"], {}), standin="")
    assert [(r["row"], r["column"]) for r in rows] == [("DFIL", "Accuracy (%)"),
                                                       ("Fine-tune", "Accuracy (%)")]
    dfil, ft = rows
    assert dfil["value"] == pytest.approx(45.0) and dfil["paper"] == 41.0
    # DFIL: 45 ± 2.484 (n=3, s=1) misses 41; FT: 40.5 ± 1.242 holds 40
    assert (dfil["verdict"], ft["verdict"]) == ("contradicted", "inconclusive")
    assert dfil["seeds"] == "1 2 3" and dfil["ran_as"] == "smollm2-135m, 3 seeds"


def test_a_stand_in_grid_compares_no_level():
    t = scaling_table()
    rows = table_numbers(t, labels(t, [], {}), standin="SmolLM2 for Qwen")
    assert {r["verdict"] for r in rows} == {"not comparable"}
    assert rows[0]["column"] == "acc"  # no template heads: the column id


def test_seeds_and_ran_as_from_keys():
    keys = ["frog/a/dfil/lam0.5/nfull/qure/seed42", "frog/a/dfil/lam0.5/nfull/qure/seed7"]
    assert seeds_of(keys) == [7, 42]
    assert ran_as(keys) == "a, 2 seeds"
    assert ran_as([]) == ""


def test_a_row_outside_the_contract_is_refused():
    t = scaling_table()
    row = dict(table_numbers(t, labels(t, [], {}), standin="")[0], verdict="maybe")
    with pytest.raises(jsonschema.ValidationError):
        validate([row])
