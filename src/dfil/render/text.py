"""LaTeX source (row labels, captions, column heads) as plain text (pure).

Labels in ``config/tables.yaml`` and the table templates are LaTeX; a reader of the HTML
report, of numbers.csv or of a table's notes sees the words, not the markup:
``\\textbf{DFIL} ($\\lambda{=}0.1$)`` reads ``DFIL (λ=0.1)`` and
``Tab.~\\ref{tab:scaling}`` reads ``Tab. 5``.
"""

from __future__ import annotations

import re
from importlib import resources

SYMBOLS = {r"\pm": "±", r"\Delta": "Δ", r"\lambda": "λ", r"\le": "≤", r"\ge": "≥",
           r"\times": "×", r"\rightarrow": "→", r"\to": "→", r"\alpha": "α",
           r"\sigma": "σ", r"\mu": "μ", r"\in": "∈", r"\approx": "≈", r"\cdot": "·",
           r"\dagger": "†", r"\ddagger": "‡", r"\P": "¶", r"\S": "§", r"\%": "%",
           r"\&": "&", r"\_": "_", r"\#": "#", r"\$": "$", r"\ldots": "…", r"\dots": "…",
           r"\quad": " ", r"\,": " ", r"\;": " ", r"\ ": " ", "---": "—", "--": "–"}
_WRAPPERS = re.compile(r"\\(?:textbf|textit|emph|text|mathrm|mathbf|textsc|texttt|"
                       r"underline|mbox|footnotesize|small)\s*\{([^{}]*)\}")
_REF = re.compile(r"\\ref\{([^{}]*)\}")
_CMD = re.compile(r"\\[a-zA-Z]+\*?(\[[^\]]*\])?")
#: A footnote mark in a label: ``$^\ddagger$``, ``$^\P$``, ``$^\#$``, ``$^*$``.
MARK = re.compile(r"\$\^(\\[A-Za-z]+|\\#|\*)\$")
_HEAD = re.compile(r"\\BLOCK\{block head\}(.*?)\\BLOCK\{endblock\}", re.S)


def plain(tex: str, refs: dict[str, int] | None = None) -> str:
    """``tex`` as text: wrappers unwrapped, symbols spelled, ``\\ref{label}`` as the
    table number ``refs`` gives it, other commands, braces and ``$`` dropped."""
    s = str(tex)
    s = _REF.sub(lambda m: str((refs or {}).get(m.group(1), m.group(1))), s)
    for _ in range(3):
        s = _WRAPPERS.sub(r"\1", s)
    for cmd in sorted(SYMBOLS, key=len, reverse=True):
        s = re.sub(re.escape(cmd) + (r"(?![a-zA-Z])" if cmd[-1].isalpha() else ""),
                   SYMBOLS[cmd], s)
    s = _CMD.sub("", s).replace("~", " ").replace("$", "")
    s = s.replace("{", "").replace("}", "").replace("^", "").replace("\\\\", " ")
    return " ".join(s.split())


def row_names(rows, refs: dict[str, int] | None = None) -> dict[str, str]:
    """Row id -> how a reader names the row outside the table: its label as text without
    footnote marks, and the section it sits under in brackets (T3's two DFIL rows read
    ``DFIL [Self-consistent ground truth]`` and ``DFIL [QuRe-based ground truth]``).
    ``rows``: a table's rows (:class:`dfil.render.entries.Row`) in order, sections and
    rules included."""
    out, section = {}, ""
    for row in rows:
        if row.kind == "section":
            section = plain(row.label, refs)
        elif row.kind == "body":
            name = plain(MARK.sub("", row.label), refs) or row.id
            out[row.id] = f"{name} [{section}]" if section else name
    return out


def split_cells(line: str) -> list[str]:
    """A LaTeX table line's cells (``&`` at brace depth 0; ``\\&`` is text)."""
    cells, depth, cur, i = [], 0, "", 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            cur += line[i:i + 2]
            i += 2
            continue
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "&" and depth == 0:
            cells.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    return cells + [cur]


def template_heads(name: str, refs: dict[str, int] | None = None) -> list[str]:
    """The column heads of table ``name``'s LaTeX template, as text: the cells of the
    head block's last line (first: the row-label column); [] if there is none."""
    path = resources.files("dfil.render") / "templates" / f"{name}.tex.j2"
    if not path.is_file():
        return []
    found = _HEAD.search(path.read_text())
    if not found:
        return []
    lines = [ln for ln in found.group(1).split("\\\\") if ln.strip()]
    if not lines:
        return []
    cells = split_cells(lines[-1].replace(r"\midrule", "").replace(r"\cmidrule", ""))
    return [plain(c, refs) for c in cells]
