"""Number and string formatting for the rendered tables (pure; no I/O).

Every function returns LaTeX source. Numbers are rounded half-to-even by Python's
format mini-language on the stored float, as the paper's numbers appear to be; ``None``
(an entry with no runs) is printed as an em dash, as the paper prints cells it has no
value for.
"""

from __future__ import annotations

import math
import re

MISSING = "---"

_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
    # Text made from LaTeX labels (dfil.render.text.plain) spells symbols in Unicode,
    # which pdflatex does not take: back to their LaTeX.
    "λ": r"$\lambda$", "Δ": r"$\Delta$", "±": r"$\pm$", "≤": r"$\le$", "≥": r"$\ge$",
    "×": r"$\times$", "→": r"$\to$", "α": r"$\alpha$", "σ": r"$\sigma$", "μ": r"$\mu$",
    "∈": r"$\in$", "≈": r"$\approx$", "·": r"$\cdot$", "†": r"$^\dagger$",
    "‡": r"$^\ddagger$", "¶": r"\P{}", "§": r"\S{}", "…": r"\ldots{}", "—": "---", "–": "--",
}
_SPECIAL_RE = re.compile("|".join(re.escape(c) for c in _SPECIALS))


def escape(text: str) -> str:
    """``text`` with every LaTeX special character made literal."""
    return _SPECIAL_RE.sub(lambda m: _SPECIALS[m.group()], str(text))


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def number(x: float | None, digits: int = 1) -> str:
    """``x`` to ``digits`` decimals; negative numbers with a typeset minus."""
    if _missing(x):
        return MISSING
    s = f"{x:.{digits}f}"
    if s.startswith("-") and float(s) == 0:
        s = s[1:]  # -0.0 is printed 0.0
    return f"$-${s[1:]}" if s.startswith("-") else s


def signed(x: float | None, digits: int = 1) -> str:
    """A difference with its sign always shown: ``+5.9``, ``$-$0.1``, ``0.0``."""
    if _missing(x):
        return MISSING
    s = number(x, digits)
    return s if s.startswith("$") or float(f"{x:.{digits}f}") == 0 else "+" + s


def mean_std(mean: float | None, std: float | None, n: int, digits: int = 1) -> str:
    """``mean±std`` for n >= 2 (sample std), the bare mean for a single run."""
    if _missing(mean):
        return MISSING
    if n < 2 or _missing(std):
        return number(mean, digits)
    return f"{number(mean, digits)}$\\pm${number(std, digits)}"


def center(x: float | None, digits: int = 3) -> str:
    """A value in [0, 1] without its leading zero, as the paper prints centers: ``.020``."""
    if _missing(x):
        return MISSING
    s = f"{x:.{digits}f}"
    return s[1:] if s.startswith("0.") else s


def integer(x: float | None) -> str:
    """A count with thousands separators: ``1{,}959{,}395``."""
    if _missing(x):
        return MISSING
    return f"{round(x):,}".replace(",", "{,}")


def pvalue(p: float | None) -> str:
    """A p-value as the paper prints them: two significant digits (``0.011``, ``0.20``),
    ``<0.0001`` below that."""
    if _missing(p):
        return MISSING
    if p < 1e-4:
        return "$<$0.0001"
    return f"{p:.2f}" if p >= 0.1 else f"{p:.2g}"


def percent(x: float | None, digits: int = 1) -> str:
    """A percentage with its sign: ``0.1\\%``."""
    return MISSING if _missing(x) else number(x, digits) + r"\%"


def bold(tex: str) -> str:
    return tex if tex == MISSING else f"\\textbf{{{tex}}}"


def parse_published(text) -> tuple[float | None, float | None]:
    """(mean, std) of a number as the paper printed it: ``50.4±1.8``, ``-0.1``, ``—``."""
    if text is None:
        return None, None
    if isinstance(text, (int, float)):
        return float(text), None
    s = str(text).strip().replace("−", "-").replace("%", "")
    if s in ("", "—", "-", "---", "n/a"):
        return None, None
    if "±" in s:
        m, sd = s.split("±")
        return float(m), float(sd)
    return float(s), None
