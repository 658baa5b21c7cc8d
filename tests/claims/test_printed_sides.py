"""A side the paper prints at another entry than the one measured (an effect's
``paper_a``/``paper_b``): its printed mean and std are the paper's there, in the
parity's margin as in the planner's sides."""

import math

import pytest
from claim_tables import DFIL, FT, stat

from dfil.claims import declare
from dfil.plan.claims import ran_claims
from dfil.render.entries import Row, Table


def _table() -> Table:
    """DFIL 45.0±2.0 against fine-tune measured on DFIL's items (row ``ft_same``, which
    the paper does not print), standing for the paper's fine-tune 45.2±1.0."""
    dfil = stat(44.0, 45.0, 46.0, cell=DFIL, published="45.0±2.0")
    ft = stat(45.0, 45.5, 46.0, cell=FT, published="45.2±1.0")
    same = stat(44.5, 45.0, 46.5, cell=FT, metric="test.same.acc")
    rows = [Row("dfil", "DFIL", entries={"acc": dfil}), Row("ft", "FT", entries={"acc": ft}),
            Row("ft_same", "FT (same items)", entries={"acc": same})]
    effect = {"label": "DFIL vs fine-tune on the same items", "a": "dfil/acc",
              "b": "ft_same/acc", "paper_b": "ft/acc"}
    return Table("t11", 11, "tab:t11", "x", ["acc"], rows, effects=[effect],
                 published={("dfil", "acc"): 45.0, ("ft", "acc"): 45.2})


def test_a_parity_margin_uses_the_std_printed_where_the_paper_prints_the_side():
    [d] = declare(_table())
    assert d.paper == pytest.approx(-0.2) and d.test == "parity"
    assert d.printed == (("dfil", "acc"), ("ft", "acc"))
    # one paper seed sd: the RMS of 2.0 and 1.0, sqrt((4 + 1) / 2), not the 0.5 floor
    assert d.margin == pytest.approx(math.sqrt(2.5))


def test_the_planner_sizes_it_from_the_printed_numbers():
    [c] = ran_claims([_table()], {"t11": {}})
    assert c.margin == pytest.approx(math.sqrt(2.5)) and c.spread_known
    assert [(s.mean, s.std, s.n) for s in c.sides] == [(45.0, 2.0, 3), (45.2, 1.0, 3)]
    assert c.sides[1].cells == (FT,) and c.test == "TOST paired"
