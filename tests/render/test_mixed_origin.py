"""A table whose runs were made by different code commits or library versions says so
(dfil.results.origin): in its notes, its LaTeX and the report's index."""

from __future__ import annotations

from test_render import RENDER, SPEC, SPECS, frame, grid_with_render

from dfil.render.build import render_one
from dfil.render.resolve import Resolver
from dfil.render.source import Source

A, B = "1111111111aa" + "0" * 28, "2222222222bb" + "0" * 28
NEW = "torch=2.13.0 transformers=4.57.1"
OLD = "torch=2.13.0 transformers=4.56.0"
TAIL = " Numbers compared across them may differ by that change, not only by the setting."


def _mixed_frame():
    """Three seeds of each method at 0.5, the finetune seed 3 made at commit B with an
    older transformers, every other run at commit A."""
    values = {(f"frog/b/{m}/{lam}/nfull/{init}/seed{s}", "test.main.acc"): 0.5
              for m, lam, init in (("dfil", "lam0.5", "qure"), ("finetune", "lamna", "na"))
              for s in (1, 2, 3)}
    agg = frame(values)
    odd = agg["run_dir"] == "frog/b/finetune/lamna/nfull/na/seed3"
    agg["git_commit"] = [B if o else A for o in odd]
    agg["libraries"] = [OLD if o else NEW for o in odd]
    return agg


def test_a_table_over_mixed_runs_says_so_in_its_notes_and_its_latex():
    grid = grid_with_render(RENDER)
    agg = _mixed_frame()
    table = Resolver(SPEC, Source(grid, agg)).table("demo")
    expected = ("Its runs differ in code commit: 1111111111aa (5 runs), 2222222222bb (1 run); "
                "in library versions: transformers 4.57.1 (5 runs), 4.56.0 (1 run)." + TAIL)
    assert table.mixed == expected and table.notes[-1] == expected
    tex = render_one({**SPECS, "scaling": SPEC["demo"]}, Source(grid, agg), "scaling",
                     ["c.yaml"], "runs")
    assert "Its runs differ in code commit: 1111111111aa (5 runs)" in tex
    same = agg.assign(git_commit=A, libraries=NEW)
    table = Resolver(SPEC, Source(grid, same)).table("demo")
    assert table.mixed == "" and not any("Its runs differ" in n for n in table.notes)
    # a failed run (its failure record) made elsewhere prints no number: not compared
    failed = same.copy()
    gone = failed["run_dir"] == "frog/b/finetune/lamna/nfull/na/seed3"
    failed.loc[gone, ["metric", "git_commit", "libraries"]] = ["failed.OOM", B, ""]
    assert Resolver(SPEC, Source(grid, failed)).table("demo").mixed == ""
    # an aggregate without the columns (written before they existed): nothing to compare
    bare = agg.drop(columns=["git_commit", "libraries"])
    assert Resolver(SPEC, Source(grid, bare)).table("demo").mixed == ""
