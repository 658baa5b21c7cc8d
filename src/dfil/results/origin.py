"""Whether the runs one table prints were made by one code commit and one set of library
versions (pure: no torch).

Each ``metrics.json`` records the git commit of the code and the versions of the libraries
that made it (:func:`dfil.engine.provenance.library_versions`); the aggregate carries both, the
versions as one canonical text per run (:func:`versions_text`, column ``libraries``). A
table whose runs differ in either compares numbers that a change of code or of a library
may have moved, so the table says so in its notes (:func:`origin_note`). Runs that cannot
say (a checkout-less install records the commit ``unknown``; a file written before
versions were recorded has none) are left out of the comparison, as are failed runs,
which print no number (the table's source leaves them out).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

#: A commit as a run records it outside a git checkout.
UNKNOWN = "unknown"


def versions_text(versions: Mapping[str, str | None] | None) -> str:
    """One run's library versions as one canonical text, ``name=version`` sorted by name
    and space-separated (a library not installed: ``name=none``); "" for no record.

    >>> versions_text({"torch": "2.13.0", "flash_attn": None})
    'flash_attn=none torch=2.13.0'
    """
    if not versions:
        return ""
    return " ".join(f"{k}={'none' if v is None else v}" for k, v in sorted(versions.items()))


def _parse(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split())


def _counted(counts: Counter) -> str:
    """``a (3 runs), b (1 run)``: most runs first, then by name."""
    return ", ".join(f"{v} ({n} run{'s' if n != 1 else ''})"
                     for v, n in sorted(counts.items(), key=lambda x: (-x[1], x[0])))


def origin_note(origins: Mapping[str, tuple[str, str]], keys: Iterable[str]) -> str:
    """The note of a table whose runs ``keys`` differ in code commit or library versions;
    "" when they do not. ``origins``: run key -> (git commit, :func:`versions_text`), as
    the aggregate records them; keys without an entry, an ``unknown`` commit or an empty
    versions text count only where they are known.

    The note names each commit (its first 12 characters) with its number of runs, and each
    library whose version differs with its versions and their runs, e.g. ``Its runs differ
    in code commit: 1111111111aa (2 runs), 2222222222bb (1 run); in library versions:
    transformers 4.57.1 (2 runs), 4.56.0 (1 run). Numbers compared across them may differ
    by that change, not only by the setting.``
    """
    rows = [origins[k] for k in sorted(set(keys)) if k in origins]
    commits = Counter(c[:12] for c, _ in rows if c and c != UNKNOWN)
    libs = [_parse(v) for _, v in rows if v]
    parts = []
    if len(commits) > 1:
        parts.append(f"in code commit: {_counted(commits)}")
    differing = []
    for name in sorted({n for lib in libs for n in lib}):
        seen = Counter(lib.get(name, "absent") for lib in libs)
        if len(seen) > 1:
            differing.append(f"{name} {_counted(seen)}")
    if differing:
        parts.append(f"in library versions: {'; '.join(differing)}")
    if not parts:
        return ""
    return (f"Its runs differ {'; '.join(parts)}. Numbers compared across them may differ "
            "by that change, not only by the setting.")
