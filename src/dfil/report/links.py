"""Dead links in the report's pages (reads them): every ``href`` and ``src`` of a page,
followed from the file system as a browser opening the page from disk would, and every
``#anchor`` looked up among the target's ids."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)
            if name in ("id", "name") and value:
                self.ids.add(value)


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(Path(path).read_text(encoding="utf-8"))
    return page


def dead_links(start: Path) -> tuple[list[str], list[Path]]:
    """(every dead link as ``page: link (why)``, every page visited) from ``start``,
    following links to other HTML pages of the report. Links to web sites (itables'
    own help links) are not followed: what a page needs to work is all on disk."""
    start = Path(start).resolve()
    todo, seen, dead = [start], {start}, []
    parsed: dict[Path, _Page] = {}
    while todo:
        page = todo.pop()
        parsed[page] = parsed.get(page) or parse(page)
        for link in parsed[page].links:
            parts = urlsplit(link)
            if parts.scheme in ("http", "https", "data", "javascript", "mailto", "blob") \
                    or link.startswith("//"):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.exists():
                dead.append(f"{page}: {link} (no file {target})")
                continue
            if target.suffix == ".html" and target not in seen:
                seen.add(target)
                todo.append(target)
            if parts.fragment:
                parsed[target] = parsed.get(target) or parse(target)
                if parts.fragment not in parsed[target].ids:
                    dead.append(f"{page}: {link} (no anchor #{parts.fragment})")
    return dead, sorted(seen)
