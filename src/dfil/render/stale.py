"""The stale marker shown in the published report (``index.html``, ``diff.md``,
``diff.html``).

After a failed rebuild the report beside the tables is the last good one; a banner at its
top lists what the marker (:mod:`dfil.contracts.stale`) names as stale, so nobody reads
the old tables as current. The banner is template data: each HTML page carries the slot
its template declares, and the site's ``_stale.html.j2`` renders the marker into it
(:func:`dfil.pages.with_banner`); ``diff.md`` carries the same slot as two markdown
comments. Whenever the marker changes the slot is filled again, or emptied.
"""

from __future__ import annotations

from pathlib import Path

from dfil.contracts.stale import NAME, read_or_set_aside
from dfil.pages import with_banner
from dfil.util.atomic import atomic_write_text

#: The stale banner's slot in diff.md (markdown comments: invisible when rendered).
MD_OPEN, MD_CLOSE = "<!-- stale-banner -->\n", "<!-- /stale-banner -->\n"
BEGIN, END = "<!-- dfil:stale -->", "<!-- /dfil:stale -->"


def stale_text(record: dict) -> tuple[str, list[str]]:
    """The banner's sentence and the stale files it lists."""
    text = (f"Stale: a rebuild failed (first on {record['since']}, last on "
            f"{record['updated']}), so {len(record['stale'])} published file(s) are from the "
            "last good build, not from the current runs and config. Fix the cause (see "
            f"{record['log'] or 'the Snakemake log'}) and run the build again; {NAME} lists "
            "them:")
    return text, record["stale"]


def banner_data(record: dict | None) -> dict | None:
    """What the banner template renders of ``record``: ``{"text", "files"}``, or None."""
    if not record:
        return None
    text, files = stale_text(record)
    return {"text": text, "files": files}


def md_with_banner(text: str, record: dict | None) -> str | None:
    """``diff.md``'s text with its slot holding the banner of ``record`` (emptied for
    None); None when it has no slot."""
    head, found, rest = text.partition(MD_OPEN)
    _, closed, tail = rest.partition(MD_CLOSE)
    if not (found and closed):
        return None
    body = ""
    if record:
        sentence, files = stale_text(record)
        items = "".join(f"> - `{f}`\n" for f in files)
        body = f"{BEGIN}\n> **{sentence}**\n>\n{items}{END}\n"
    return head + MD_OPEN + body + MD_CLOSE + tail


def show_stale(report_dir: str | Path) -> list[Path]:
    """Bring the banner of ``report_dir``'s ``index.html``, ``diff.md`` and ``diff.html`` in
    line with its ``stale.json`` (a banner when it names files, none otherwise); the files
    changed. A page without the slot (made before pages had one) is left as it is."""
    report_dir = Path(report_dir)
    record = read_or_set_aside(report_dir / NAME)
    changed = []
    pages = (("index.html", lambda t: with_banner(t, banner_data(record))),
             ("diff.md", lambda t: md_with_banner(t, record)),
             ("diff.html", lambda t: with_banner(t, banner_data(record))))
    for name, fill in pages:
        path = report_dir / name
        if not path.is_file():
            continue
        old = path.read_text(encoding="utf-8")
        new = fill(old)
        if new is not None and new != old:
            atomic_write_text(path, new)
            changed.append(path)
    return changed
