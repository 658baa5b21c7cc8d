"""Compile the rendered tables into one PDF with pdflatex (proves each is valid LaTeX).

TeX is optional: without ``pdflatex`` the DAG builds everything but ``tables.pdf`` and
says so in one line (:func:`skipped_note`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from dfil.util.atomic import atomic_write_bytes
from dfil.util.errors import LatexError

#: Where to get pdflatex without root, or with it (workflow/setup.sh gives the same advice).
GET_TEX = ("`module load texlive` where the site has it, TeX Live's user install "
           "(https://tug.org/texlive/quickinstall.html, no root needed), or as root "
           "`apt-get install texlive-latex-recommended texlive-fonts-recommended lmodern`")


def pdflatex() -> str | None:
    """The ``pdflatex`` on PATH, or None."""
    return shutil.which("pdflatex")


def skipped_note(tables_dir: str | Path) -> str:
    """The one line that says the PDF was not built and how to get TeX."""
    return (f"dfil: {Path(tables_dir) / 'tables.pdf'} skipped (no pdflatex on PATH; every "
            f"table, the report, the diff and the figures are built). For TeX: {GET_TEX}")


def compile_pdf(tex: Path, out: Path | None = None, runs: int = 2,
                timeout: int = 300) -> Path:
    """``tex`` -> ``out`` (default: the PDF beside it), pdflatex twice for the
    cross-references."""
    exe = pdflatex()
    if exe is None:
        raise LatexError(f"pdflatex not found: install TeX ({GET_TEX})")
    tex = Path(tex).resolve()
    build = tex.parent / ".latex"
    build.mkdir(exist_ok=True)
    for _ in range(runs):
        proc = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error",
                               f"-output-directory={build}", tex.name], cwd=tex.parent,
                              capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            log = (build / tex.with_suffix(".log").name)
            text = log.read_text(errors="replace") if log.exists() else proc.stdout
            first = next((i for i, line in enumerate(text.splitlines()) if line.startswith("!")),
                         None)
            lines = text.splitlines()
            detail = "\n".join(lines[first:first + 6]) if first is not None else text[-2000:]
            raise LatexError(f"pdflatex failed on {tex}:\n{detail}")
    pdf = Path(out) if out is not None else tex.with_suffix(".pdf")
    atomic_write_bytes(pdf, (build / tex.with_suffix(".pdf").name).read_bytes())
    return pdf
