"""On a stand-in grid every page of ``tables.pdf`` carries the stand-in banner: the
document's preamble puts it in the header of the page style every page uses (the title
page's plain one included); the paper's grid's document has no banner."""

import re
import shutil
import subprocess

import pytest

from dfil.render.latex import environment, render_document

STANDIN = "a tiny random Llama on synthetic FRoG-format data (CI smoke grid, one seed)"


def test_a_standin_documents_preamble_puts_the_banner_on_every_page_style():
    doc = render_document(environment(), ["T01-a"], "DFIL reproduction: smoke", STANDIN + ".")
    preamble = doc.split(r"\begin{document}")[0]
    assert r"\usepackage{fancyhdr}" in preamble
    # the plain style (\maketitle's page) is the banner's, and every other page's style
    assert (r"\fancypagestyle{plain}{\fancyhf{}\renewcommand{\headrulewidth}{0.4pt}%" + "\n"
            r"\fancyhead[C]{\parbox[b]{\textwidth}{\centering\footnotesize"
            r"\textbf{Stand-in grid:} " + STANDIN + ". Not the paper's models or data: no "
            "number here is the paper's setting.}}%") in preamble
    assert preamble.rstrip().endswith(r"\pagestyle{plain}" + "\n" + r"\title{DFIL "
                                      r"reproduction: smoke}" + "\n" + r"\date{}")
    paper = render_document(environment(), ["T01-a"], "DFIL reproduction: paper")
    assert "fancyhdr" not in paper and "Stand-in" not in paper


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="needs pdflatex")
def test_each_page_of_a_standin_pdf_carries_the_banner(tmp_path):
    for i in range(3):  # three one-table pages, then text running over two more
        (tmp_path / f"t{i}.tex").write_text(
            r"\begin{table}\centering\begin{tabular}{ll}\toprule a & b\\ \bottomrule"
            rf"\end{{tabular}}\caption{{Table {i}}}\end{{table}}")
    (tmp_path / "t3.tex").write_text("\n\n".join(["A paragraph of filler text."] * 120))
    doc = render_document(environment(), ["t0", "t1", "t2", "t3"], "smoke", STANDIN)
    # uncompressed, so each page's text is readable in the file
    (tmp_path / "doc.tex").write_text(r"\pdfcompresslevel=0\pdfobjcompresslevel=0" + doc)
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                   cwd=tmp_path, capture_output=True, check=True, timeout=120)
    pdf = (tmp_path / "doc.pdf").read_bytes()
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf))
    assert pages >= 6  # title + three tables + at least two pages of text
    assert pdf.count(b"(Stand-in)") == pages
