"""dfil.report.diff: the claims and every published number, with the report's words and
counts."""

from __future__ import annotations

from dfil.report.diff import diff_rows, html_report, markdown

CLAIM = {"claim": "T5:dfil-vs-ft", "label": "DFIL vs FT", "paper": 1.0, "places": "T5",
         "sides": "", "test": "Welch's t", "n_a": 3, "n_b": 3, "estimate": 4.5, "ci_low": 3.0,
         "ci_high": 6.0, "p": 0.002, "p_holm": 0.004, "mde": 1.2, "verdict": "reproduced",
         "reason": "Welch's t: p_holm = 0.004 < 0.05", "family": "primary"}
NUMBER = {"table": "T5", "row": "DFIL", "column": "acc", "value": 45.0, "std": 1.0, "n": 3,
          "paper": 41.0, "paper_std": None, "verdict": "contradicted"}


def test_the_diff_counts_claims_and_numbers_in_the_same_words():
    rows = diff_rows([NUMBER, {**NUMBER, "paper": None}], {"T5": "scaling"})
    assert len(rows) == 1 and rows[0]["table"] == "T5 scaling" and rows[0]["diff"] == 4.0
    md = markdown(rows, "config unit", [CLAIM])
    assert ("Verdicts on the paper's 1 distinct claims: reproduced 1, by construction 0, "
            "contradicted 0, inconclusive 0, not comparable 0, not run 0.") in md
    assert ("1 published numbers: reproduced 0, by construction 0, contradicted 1, "
            "inconclusive 0, not comparable 0, not run 0.") in md
    assert "| T5:dfil-vs-ft | DFIL vs FT | 1 | 4.5 | [3, 6] | 0.004 | primary | reproduced |" in md
    page = html_report(rows, "config unit", [CLAIM])
    assert '<tr class="reproduced">' in page and '<tr class="contradicted">' in page
    assert '<a href="claims.csv">claims.csv</a>' in page
