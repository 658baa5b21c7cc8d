"""The one HTML path of the report: every page (index, tables, each run's, the paper diff,
the paper audit) renders through the site's Jinja templates here, on ``_base.html.j2``
(its navigation, style and the stale banner's slot), with autoescaping and
``StrictUndefined`` (pure: jinja2).

The stale banner is template data: ``_stale.html.j2`` renders ``{"text", "files"}`` (what
:func:`dfil.render.stale.stale_text` says of the marker) inside the slot ``_base.html.j2``
declares
(:data:`SLOT_OPEN` ... :data:`SLOT_CLOSE`); a page rendered with ``stale=None`` carries
the empty slot, which :func:`with_banner` fills or empties when the marker changes after
the page was published.
"""

from __future__ import annotations

from importlib import resources

import jinja2

#: The stale banner's slot in every page (empty when nothing is stale).
SLOT_OPEN, SLOT_CLOSE = '<div id="stale-banner">', "</div><!-- /stale-banner -->"


def environment(*packages: str) -> jinja2.Environment:
    """The site's environment: its own templates, then those of ``packages`` (a package
    with a ``templates`` folder whose pages extend ``_base.html.j2``)."""
    folders = ["dfil.pages", *packages]
    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(resources.files(p) / "templates"))
                                  for p in folders])
    return jinja2.Environment(loader=loader, autoescape=True, undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def banner(stale: dict | None) -> str:
    """The banner of ``stale`` (``{"text", "files"}``) as it stands in the slot ("" for
    None)."""
    return environment().get_template("_stale.html.j2").render(stale=stale) if stale else ""


def with_banner(page: str, stale: dict | None) -> str | None:
    """``page`` (a published page's HTML) with its slot holding the banner of ``stale``
    (``{"text", "files"}``; emptied for None); None when the page has no slot (a page
    made before it had one, replaced by the next build)."""
    head, found, rest = page.partition(SLOT_OPEN)
    _, closed, tail = rest.partition(SLOT_CLOSE)
    if not (found and closed):
        return None
    return head + SLOT_OPEN + banner(stale) + SLOT_CLOSE + tail
