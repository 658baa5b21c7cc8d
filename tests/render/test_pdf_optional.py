"""TeX is optional: without pdflatex on PATH the report targets build every table, the
report, numbers.csv, the diff and the figures, leave tables.pdf out and say so in one
line; with it, tables.pdf is one more job. Each test gives its own PATH (a stand-in
pdflatex or none), whatever this machine has installed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dfil.cli import main
from dfil.render import load_specs
from dfil.report.links import dead_links
from report_inputs import synthetic_report_inputs
from snakemake_cli import ROOT, snakemake

SPECS = load_specs(ROOT / "config/tables.yaml")
SMOKE = ROOT / "config/smoke.yaml"


def _path(tmp_path: Path, tex: bool) -> str:
    """One directory holding every command on this process's PATH but pdflatex, plus a
    stand-in pdflatex if ``tex``."""
    bin_dir = tmp_path / ("bin-tex" if tex else "bin")
    bin_dir.mkdir()
    for directory in os.environ["PATH"].split(os.pathsep):
        if not Path(directory).is_dir():
            continue
        for tool in Path(directory).iterdir():
            if tool.name != "pdflatex" and not (bin_dir / tool.name).exists():
                (bin_dir / tool.name).symlink_to(tool)
    if tex:
        (bin_dir / "pdflatex").write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / "pdflatex").chmod(0o755)
    return str(bin_dir)


def _plan(tmp_path: Path, tex: bool, *targets: str):
    out = snakemake("-n", "-p", "--forceall", *targets, "--configfile", str(SMOKE),
                    path=_path(tmp_path, tex))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout, out.stderr


@pytest.mark.slow
@pytest.mark.parametrize("target", ["all_tables", "report"])
def test_without_pdflatex_the_targets_leave_out_only_tables_pdf_and_say_so(tmp_path, target):
    plan, err = _plan(tmp_path, False, target)
    assert "rule render_pdf" not in plan and "tables.pdf" not in plan
    for name in ("index.html", "numbers.csv", "diff.md", "diff.html", "tables.tex",
                 "figures/membership_functions.png", "T05-scaling.tex"):
        assert f"paper_tables/smoke/{name}" in plan, name
    assert "--no-pdf" in plan  # the pages link tables.tex in the PDF's place
    notes = [line for line in err.splitlines() if "tables.pdf" in line]
    assert len(notes) == 1
    assert "paper_tables/smoke/tables.pdf skipped (no pdflatex on PATH" in notes[0]
    assert "module load texlive" in notes[0] and "texlive-latex-recommended" in notes[0]


@pytest.mark.slow
def test_with_pdflatex_tables_pdf_is_built_and_nothing_is_said(tmp_path):
    plan, err = _plan(tmp_path, True, "all_tables")
    assert "rule render_pdf" in plan and "paper_tables/smoke/tables.pdf" in plan
    assert "--no-pdf" not in plan
    assert "skipped" not in err


@pytest.mark.slow
def test_a_target_without_the_report_says_nothing_of_the_pdf(tmp_path):
    _, err = _plan(tmp_path, False, "paper_tables/smoke/T16-lambda-sweep.tex")
    assert "tables.pdf" not in err


def test_asking_for_the_pdf_without_pdflatex_names_how_to_get_tex(tmp_path, monkeypatch,
                                                                 capsys):
    monkeypatch.setenv("PATH", _path(tmp_path, False))
    (tmp_path / "tables.tex").write_text("\\documentclass{article}\\begin{document}x"
                                         "\\end{document}")
    assert main(["pdf", str(tmp_path / "tables.tex")]) == 2
    err = capsys.readouterr().err
    assert "pdflatex not found" in err and "module load texlive" in err
    assert not (tmp_path / "tables.pdf").exists()


@pytest.mark.slow
def test_the_report_step_without_pdflatex_writes_every_page_and_links_tables_tex(
        tmp_path, monkeypatch):
    """``dfil report --no-pdf`` (the rule's command without TeX), PATH without pdflatex:
    the pages, numbers.csv, the diff, the figures and tables.tex; no tables.pdf, and no
    page links one."""
    monkeypatch.setenv("PATH", _path(tmp_path, False))
    monkeypatch.chdir(tmp_path)
    tex_dir, aggregate = synthetic_report_inputs(SMOKE, SPECS, tmp_path)
    assert main(["report", "--config", str(SMOKE), "--tables", str(ROOT / "config/tables.yaml"),
                 "--aggregate", str(aggregate), "--tex-dir", str(tex_dir), "--no-pdf"]) == 0
    for name in ("index.html", "tables.html", "numbers.csv", "claims.csv", "diff.md",
                 "diff.html", "tables.tex", "figures/membership_functions.png"):
        assert (tex_dir / name).stat().st_size > 0, name
    assert not (tex_dir / "tables.pdf").exists()
    (tex_dir / "audit.html").write_text("<html></html>")  # the audit step's
    dead, _ = dead_links(tex_dir / "index.html")
    assert dead == []
    assert 'href="tables.tex"' in (tex_dir / "index.html").read_text()
