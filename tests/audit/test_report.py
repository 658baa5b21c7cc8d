"""The rendered audit (audit.md, audit.html), the CLI subcommand, the DAG target, the
diff report's link, and the audit's freedom from torch."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from dfil.audit import checks as ac
from dfil.audit import report
from dfil.audit.kinds import Finding
from dfil.cli import main
from dfil.report import diff
from snakemake_cli import snakemake

ROOT = Path(__file__).resolve().parents[2]


def _outcome(**over):
    base = dict(id="x-1", table="tab:t", location="l.1", cell="a | b <c>", printed="*5*",
                kind="arithmetic", verdict="inconsistent", verdict_class="inconsistent",
                primary=ac.Reading("n_1 [x]", Finding(False, "6", "a_b")),
                alternatives=(ac.Reading("alt <script>", Finding(True, "5")),),
                inventory=(3,), note="see `x`", severity="major")
    base.update(over)
    return ac.Outcome(**base)


def test_md_escape():
    assert report.md_escape("a|b") == r"a\|b"
    assert report.md_escape("c_some *x* [y] <z> #") == r"c\_some \*x\* \[y\] \<z\> \#"
    assert report.md_escape("two\nlines") == "two lines"


def test_markdown_escapes_data_and_anchors_ids():
    md = report.markdown([_outcome()], "T", "paper.tex", "checks_file.yaml")
    assert "checks\\_file.yaml" in md and "1 checks" in md
    row = next(line for line in md.splitlines() if line.startswith("| [x-1]"))
    assert row.count(" | ") == 8  # nine cells: no unescaped pipe from the data
    assert row.endswith("| inconsistent | major |")
    assert r"a \| b \<c\>" in row and r"\*5\*" in row
    assert "### x-1" in md and "[x-1](#x-1)" in md
    assert "alt \\<script\\>" in md and "<script>" not in md
    assert "nventory" not in md and "see \\`x\\`" in md  # the notes, not where a check came from


def test_html_escapes_data():
    html = report.html([_outcome()], "T <b>", "paper.tex", "c.yaml")
    assert "<script>" not in html and "alt &lt;script&gt;" in html
    assert 'id="x-1"' in html and 'class="inconsistent"' in html
    assert "T &lt;b&gt;" in html and "a | b &lt;c&gt;" in html


def test_html_lists_the_findings_by_severity_before_all_checks():
    minor = _outcome(id="m-1", severity="minor", verdict_class="conditional")
    fine = _outcome(id="c-1", severity=None, verdict_class="consistent")
    html = report.html([minor, fine, _outcome()], "T", "paper.tex", "c.yaml")
    assert "Findings by severity (2): 0 critical, 1 major, 1 minor." in html
    flagged = html.index("Findings, most severe first (2)")
    major = html.index('<span class="major">major</span>: <a href="#x-1">x-1</a>')
    assert flagged < major < html.index('<a href="#m-1">m-1</a>') < html.index("All checks")
    assert '<a href="#c-1">c-1</a> (' not in html  # no finding, not listed


def test_markdown_ranks_findings_and_names_contradicted_sentences():
    said = ac.Contradiction("we do not blend them.", "caption (l.4)")
    minor = _outcome(id="m-1", severity="minor", verdict_class="conditional",
                     primary=ac.Reading("p", Finding(True, "5"), said))
    md = report.markdown([minor, _outcome()], "T", "paper.tex", "c.yaml")
    assert "Findings by severity (2): 0 critical, 1 major, 1 minor." in md
    assert md.index("- major: [x-1]") < md.index("- minor: [m-1]")
    assert "contradicts caption (l.4): \u201cwe do not blend them.\u201d" in md
    assert "contradicts no sentence of the paper" in md


@pytest.mark.slow
def test_cli_writes_both_reports(tmp_path, capsys):
    md, html = tmp_path / "audit.md", tmp_path / "audit.html"
    assert main(["audit", "--checks", str(ROOT / "config/paper_audit.yaml"),
                 "--out-md", str(md), "--out-html", str(html)]) == 0
    summary = capsys.readouterr().out
    n = int(re.match(r"(\d+) checks", summary).group(1))
    assert n >= 40 and "inconsistent" in summary
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# Paper audit: DFIL paper")
    assert text.count("\n### ") == n
    assert html.read_text(encoding="utf-8").count("<tr class=") == n


def test_cli_reports_bad_checks_file(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nsource: s\nchecks: []\n")
    assert main(["audit", "--checks", str(bad), "--out-md", str(tmp_path / "a.md"),
                 "--out-html", str(tmp_path / "a.html")]) == 2
    assert capsys.readouterr().err == (f"dfil audit: error: {bad}: checks: [] should be "
                                       "non-empty\n")


def test_diff_report_links_the_audit():
    assert "[audit.md](audit.md)" in diff.markdown([], "config smoke")
    assert '<a href="audit.html">audit.html</a>' in diff.html_report([], "config smoke")


@pytest.mark.slow
def test_audit_does_not_import_torch():
    code = ("import sys, dfil.audit, dfil.audit.report, dfil.audit.kinds, dfil.stats; "
            "sys.exit(1 if 'torch' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0


@pytest.mark.slow
def test_dag_target_paper_audit():
    out = snakemake("-n", "--forceall", "paper_audit", "--configfile", "config/smoke.yaml")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    text = out.stdout + out.stderr
    assert re.search(r"^render_audit\s+1$", text, re.MULTILINE)
    assert re.search(r"^publish\s+2$", text, re.MULTILINE)  # published, not only staged
    assert "paper_tables/smoke/audit.md" in text and "paper_tables/smoke/audit.html" in text
