"""Compile the rendered tables into one PDF with pdflatex (proves each is valid LaTeX)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from dfil.atomic import atomic_write_bytes
from dfil.errors import LatexError


def compile_pdf(tex: Path, runs: int = 2, timeout: int = 300) -> Path:
    """``tex`` -> the PDF beside it (pdflatex twice, for the cross-references)."""
    exe = shutil.which("pdflatex")
    if exe is None:
        raise LatexError("pdflatex not found: install a TeX distribution (Debian: apt-get "
                         "install texlive-latex-recommended texlive-fonts-recommended lmodern)")
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
    pdf = tex.with_suffix(".pdf")
    atomic_write_bytes(pdf, (build / pdf.name).read_bytes())
    return pdf
