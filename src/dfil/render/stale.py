"""The stale marker shown in the published report (``index.html``, ``diff.md``,
``diff.html``).

After a failed rebuild the report beside the tables is the last good one; a banner at its
top lists what the marker (:mod:`dfil.contracts.stale`) names as stale, so nobody reads
the old tables as current. The banner sits between two HTML comments and is replaced (or
removed) in place whenever the marker changes.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from dfil.atomic import atomic_path
from dfil.contracts.stale import NAME, read_stale

BEGIN, END = "<!-- dfil:stale -->", "<!-- /dfil:stale -->"
_BANNER = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END) + "\n?", re.DOTALL)


def stale_text(record: dict) -> tuple[str, list[str]]:
    """The banner's sentence and the stale files it lists."""
    text = (f"Stale: a rebuild failed (first on {record['since']}, last on "
            f"{record['updated']}), so {len(record['stale'])} published file(s) are from the "
            "last good build, not from the current runs and config. Fix the cause (see "
            f"{record['log'] or 'the Snakemake log'}) and run the build again; {NAME} lists "
            "them:")
    return text, record["stale"]


def _banner_md(record: dict) -> str:
    text, files = stale_text(record)
    items = "".join(f"> - `{f}`\n" for f in files)
    return f"{BEGIN}\n> **{text}**\n>\n{items}{END}\n"


def _banner_html(record: dict) -> str:
    text, files = stale_text(record)
    items = "".join(f"<li><code>{html.escape(f)}</code></li>" for f in files)
    return (f'{BEGIN}<div class="stale" style="background:#fec;border:2px solid #c60;'
            f'padding:4px 8px"><strong>{html.escape(text)}</strong><ul>{items}</ul></div>'
            f"{END}\n")


def _place(text: str, banner: str, after: str) -> str:
    """``text`` without its old banner, with ``banner`` after the first line holding
    ``after`` (the title)."""
    text = _BANNER.sub("", text)
    if not banner:
        return text
    lines = text.splitlines(keepends=True)
    at = next((i + 1 for i, line in enumerate(lines) if after in line), 0)
    return "".join(lines[:at]) + banner + "".join(lines[at:])


def show_stale(report_dir: str | Path) -> list[Path]:
    """Bring the banner of ``report_dir``'s ``index.html``, ``diff.md`` and ``diff.html`` in
    line with its
    ``stale.json`` (a banner when it names files, none otherwise); the files changed."""
    report_dir = Path(report_dir)
    record = read_stale(report_dir / NAME)
    changed = []
    pages = (("index.html", _banner_html, "<h1>"), ("diff.md", _banner_md, "# "),
             ("diff.html", _banner_html, "<h1>"))
    for name, banner, title in pages:
        path = report_dir / name
        if not path.is_file():
            continue
        old = path.read_text(encoding="utf-8")
        new = _place(old, banner(record) if record else "", title)
        if new != old:
            with atomic_path(path) as tmp:
                tmp.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed
