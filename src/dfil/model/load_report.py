"""transformers' load report, less the one report a bare decoder always gets.

Loading a causal LM's checkpoint into the bare decoder (``AutoModel``: last-token features,
no LM head) leaves the checkpoint's ``lm_head.weight`` unused, and transformers logs a
"LOAD REPORT" warning listing it as UNEXPECTED on every such load. While
:func:`quiet_expected_lm_head` is active, exactly that report (every row an UNEXPECTED
``lm_head.*`` key) is dropped; any other report (a missing key, a shape mismatch, any other
unexpected key) is logged in full, and nothing else is filtered.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator

#: The logger transformers' ``from_pretrained`` reports through.
LOGGER = "transformers.modeling_utils"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def only_unexpected_lm_head(message: str) -> bool:
    """Is ``message`` a load report whose every row is an UNEXPECTED ``lm_head.*`` key?"""
    text = _ANSI.sub("", message)
    if "LOAD REPORT" not in text:
        return False
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 2 or cells[0] in ("", "Key") or not cells[0].strip("-+"):
            continue
        rows.append((cells[0], cells[1]))
    return bool(rows) and all(key.startswith("lm_head.") and status == "UNEXPECTED"
                              for key, status in rows)


class _DropExpectedReport(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not only_unexpected_lm_head(record.getMessage())


@contextlib.contextmanager
def quiet_expected_lm_head() -> Iterator[None]:
    """Drop the bare decoder's expected lm_head-only load report while active."""
    logger = logging.getLogger(LOGGER)
    drop = _DropExpectedReport()
    logger.addFilter(drop)
    try:
        yield
    finally:
        logger.removeFilter(drop)
