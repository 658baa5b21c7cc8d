"""What a published file holds, and whether a staged file may replace it (pure: csv,
pandas).

The DAG writes every table, report file and the aggregate to a staging area and copies
each to where it is read once its rule has made it (``dfil publish``). A staged file is
published only if it reads as what its name says (:func:`read`): a ``.tex`` table with
its ``tabular`` body (the document of every table: to its end), a CSV with a header and
rows of its width, a parquet table, an HTML page to its ``</html>``, a PDF to its
``%%EOF``, a PNG to its ``IEND``. And it never
replaces a published file with less (:func:`check_replace`): where no run it was made
from is new or retrained (the same runs with the same config hashes, its table spec
edited or not, or only some of them: a render-map or tables.yaml edit that reads fewer
runs), the new one must hold as many entries (a table's filled entries, the aggregate's
rows, numbers.csv's numbers, claims.csv's claims, the report's run pages) as the old.
Where a run is new or its config hash differs, the grid or a config changed and the new
file is what that edit makes: it replaces the old one. The workflow checks every staged
file so before it publishes any (:func:`check_all`), so a loss in one file publishes
none.

A staged file damaged after its rule made it (truncated, emptied) would be refused at
publishing, leaving the published one stale: :func:`repair_staged`, run before the DAG is
built, moves it aside (one line naming it) so the DAG makes it again, as it does for a
damaged run file (:mod:`dfil.preflight.damage`). A published file damaged or edited after
it was published is copied from staging again (:func:`republish`), one line naming it.

Which runs a file was made from: a table's header lists each run key with its config
hash (``%   <key>  config <hash>``, ``dfil render``) and the digest of its
``config/tables.yaml`` entry (``% spec: <digest>``: an edited entry counts as a change);
the aggregate holds them as columns; numbers.csv lists run keys only, so there its run
keys stand for both.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dfil.util.atomic import atomic_write_bytes
from dfil.util.errors import RefusedError, RunFileError

#: The config key (``snakemake --config allow_fewer=1``) and the ``dfil publish`` flag that
#: let a file with fewer entries replace the published one.
ALLOW_KEY = "allow_fewer"
ALLOW_FLAG = "--allow-fewer"

_KEY_LINE = re.compile(r"^%   (\S+)(?:  config (\S+))?$", re.M)
#: The run header ``dfil render`` opens every table with (``_table.tex.j2``).
_HEADER = (re.compile(r"^% Table \S+ \(.*\) rendered by dfil ", re.M),
           re.compile(r"^% config: ", re.M))
_SPEC_LINE = re.compile(r"^% spec: (\S+)$", re.M)
_AMPERSAND = re.compile(r"(?<!\\)&")
#: What an entry with no number renders as (:data:`dfil.render.fmt.MISSING`), bold or not.
_EMPTY = {"", "---", r"\textbf{---}"}


@dataclass(frozen=True)
class Content:
    """What a file holds: ``what`` it is (in words); ``runs``, each ``"<key> <config
    hash>"`` it was made from (None: not recorded); ``count`` of its ``unit``s (None:
    not counted)."""

    what: str
    runs: frozenset[str] | None = None
    count: int | None = None
    unit: str = "entries"


class Damaged(ValueError):
    """A file does not read as what its name says; the message says why, ``path`` which
    file of a directory (None: the file read)."""

    def __init__(self, why: str, path: Path | None = None):
        super().__init__(why)
        self.path = path


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise Damaged(f"not UTF-8 text (byte {err.start})") from None


def _table(path: Path) -> Content:
    text = _text(path)
    for mark in (r"\begin{table}", r"\begin{tabular}", r"\bottomrule", r"\end{tabular}",
                 r"\end{table}"):
        if mark not in text:
            raise Damaged(f"no {mark}")
    if not all(line.search(text) for line in _HEADER):
        raise Damaged("no run header (the '% Table ... rendered by dfil' and '% config:' "
                      "lines dfil render opens a table with, naming its runs)")
    runs = frozenset(f"{key} {config or 'none'}" for key, config in _KEY_LINE.findall(text))
    head_end = text.find(r"\midrule", text.index(r"\begin{tabular}"))
    if head_end < 0:
        raise Damaged(r"no \midrule below its \begin{tabular}")
    body = text[head_end:text.index(r"\bottomrule")]
    filled = 0
    for line in body.splitlines():
        line = line.strip()
        if line.endswith(r"\\") and not line.startswith(r"\multicolumn"):
            cells = _AMPERSAND.split(line[:-2])[1:]
            filled += sum(cell.strip() not in _EMPTY for cell in cells)
    hashed = bool(runs) and not any(r.endswith(" none") for r in runs)
    spec = _SPEC_LINE.search(text)
    if hashed and spec:  # an edited table spec makes a new table, like a config edit
        runs |= {f"spec {spec.group(1)}"}
    return Content("LaTeX table", runs if hashed else None, filled, "filled entries")


def _csv(path: Path) -> Content:
    text = _text(path)
    if not text.endswith("\n"):
        raise Damaged("its last line is cut (no line end)")
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 2:
        raise Damaged("no rows below its header")
    header = rows[0]
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise Damaged(f"line {i} has {len(row)} fields, its header {len(header)}")
    records = [dict(zip(header, row, strict=True)) for row in rows[1:]]
    if {"config_hash", "metric"} <= set(header):
        import pandas as pd

        return _aggregate(pd.DataFrame(records))
    if {"runs", "value"} <= set(header):
        runs = frozenset(key for r in records for key in r["runs"].split())
        return Content("CSV", runs, sum(r["value"] != "" for r in records), "numbers")
    if {"claim", "verdict"} <= set(header):
        return Content("CSV", None, len(records), "claims")
    return Content("CSV", None, len(records), "rows")


def _aggregate(frame) -> Content:
    from dfil.results.aggregate import run_hashes

    runs = frozenset(f"{key} {h}" for key, h in run_hashes(frame).items())
    return Content("aggregate table", runs, len(frame), "rows")


def _parquet(path: Path) -> Content:
    import pandas as pd

    try:
        frame = pd.read_parquet(path)
    except Exception as err:  # pyarrow's errors for a damaged file are of many types
        raise Damaged(f"unreadable parquet ({' '.join(str(err).split())[:120]})") from None
    if not len(frame):
        raise Damaged("no rows")
    return _aggregate(frame)


def _html(path: Path) -> Content:
    text = _text(path)
    if "<html" not in text.lower() or not text.rstrip().lower().endswith("</html>"):
        raise Damaged("not a whole HTML page (no <html> ... </html>)")
    return Content("HTML page")


def _bytes_between(path: Path, head: bytes, tail: bytes, what: str) -> Content:
    data = path.read_bytes()
    if not data.startswith(head) or tail not in data[-1024:]:
        raise Damaged(f"not a whole {what} (it must start with {head!r} and end with "
                      f"{tail!r})")
    return Content(what)


def _tex(path: Path) -> Content:
    """A table, or the document that inputs every table (``tables.tex``) to its end."""
    text = _text(path)
    if r"\documentclass" not in text:
        return _table(path)
    if r"\end{document}" not in text:
        raise Damaged(r"a LaTeX document without its \end{document}")
    return Content("LaTeX document")


def _text_file(path: Path) -> Content:
    if not _text(path).strip():
        raise Damaged("empty")
    return Content("text")


_READERS = {
    ".tex": _tex,
    ".csv": _csv,
    ".parquet": _parquet,
    ".html": _html,
    ".pdf": lambda p: _bytes_between(p, b"%PDF-", b"%%EOF", "PDF"),
    ".png": lambda p: _bytes_between(p, b"\x89PNG\r\n\x1a\n", b"IEND", "PNG image"),
}


def read(path: str | Path) -> Content:
    """What the file at ``path`` holds, by its suffix (any other: non-empty text);
    :class:`Damaged` if it does not read as that."""
    path = Path(path)
    if path.stat().st_size == 0:
        raise Damaged("empty")
    return _READERS.get(path.suffix, _text_file)(path)


#: The config hash a run page prints (``run.html.j2``).
_PAGE_HASH = re.compile(r"Config hash <code>(\w+)</code>")


def read_dir(directory: str | Path) -> Content:
    """What a published directory holds (the report's run pages: one page per run, named
    by its key, each printing its config hash); :class:`Damaged` naming the first of its
    files that does not read as what it is, or when it holds none."""
    # hidden files are bookkeeping (Snakemake's empty .snakemake_timestamp)
    files = sorted(p for p in Path(directory).rglob("*")
                   if p.is_file() and not p.name.startswith("."))
    if not files:
        raise Damaged("an empty directory")
    runs = set()
    for file in files:
        try:
            read(file)
        except Damaged as err:
            raise Damaged(str(err), file) from None
        if file.suffix == ".html":
            found = _PAGE_HASH.search(_text(file))
            runs.add(f"{file.stem} {found.group(1) if found else 'none'}")
    hashed = bool(runs) and not any(r.endswith(" none") for r in runs)
    return Content("directory", frozenset(runs) if hashed else None, len(runs), "run pages")


def _content(path: Path) -> Content:
    return read_dir(path) if path.is_dir() else read(path)


def check_staged(staged: str | Path, out: str | Path) -> Content:
    """What ``staged`` holds; :class:`RunFileError` naming it when it is damaged (nothing is
    published: ``out`` stays)."""
    staged = Path(staged)
    try:
        return _content(staged)
    except Damaged as err:
        staged = err.path or staged
        raise RunFileError(f"{staged}: damaged staged file ({err}); nothing is published and "
                           f"{out} stays as it is; delete {staged} and rerun to make it "
                           "again") from None


def _run_set(runs: frozenset[str] | None) -> frozenset[str] | None:
    """The runs (key and config hash) of a file's :attr:`Content.runs`, its spec left out."""
    return None if runs is None else frozenset(r for r in runs if not r.startswith("spec "))


def _why_fewer(new: Content, old: Content) -> str | None:
    """Why ``new`` holding fewer entries than ``old`` is a loss (None: what an edit that
    trained other runs makes). No run of ``new`` is new or retrained: the same runs with
    the same config hashes (its table spec edited or not), or some of them only (a render
    map or tables.yaml edit that reads fewer runs, or a run lost)."""
    new_runs, old_runs = _run_set(new.runs), _run_set(old.runs)
    if new_runs is None or old_runs is None:
        return "from the same runs and config hashes" if new.runs == old.runs else None
    if not new_runs <= old_runs:
        return None
    if new_runs == old_runs:
        return "from the same runs and config hashes" + (
            "" if new.runs == old.runs else ", its table spec edited")
    return (f"from {len(new_runs)} of the {len(old_runs)} runs it was made from and no new "
            "one (an edit of the render map or config/tables.yaml that reads fewer runs)")


def check_replace(new: Content, staged: str | Path, out: str | Path,
                  allow_fewer: bool = False) -> str:
    """A note on what publishing ``staged`` (holding ``new``) over ``out`` replaces ("" when
    nothing to say); :class:`RefusedError` when ``out`` holds more entries and no run of
    ``staged`` is new or retrained (:func:`_why_fewer`) and ``allow_fewer`` is not given."""
    out = Path(out)
    if not out.exists():
        return ""
    try:
        old = _content(out)
    except Damaged as err:
        return f"{out} was damaged ({err}): replaced"
    if old.count is None or new.count is None or new.count >= old.count:
        return ""
    why = _why_fewer(new, old)
    if why is None:
        return ""
    if allow_fewer:
        return f"{out}: {old.count} {old.unit} replaced by {new.count}, as {ALLOW_FLAG} allows"
    raise RefusedError(
        f"{out}: refusing to replace it with {staged}, which has {new.count} {new.unit} where "
        f"it has {old.count}, {why}; {out} stays; to publish the smaller file anyway rerun "
        f"with --config {ALLOW_KEY}=1 (dfil publish {ALLOW_FLAG})")


def check_all(pairs: Iterable[tuple[str | Path, str | Path]],
              allow_fewer: bool = False) -> list[str]:
    """What refuses publishing each ``(staged, out)`` of ``pairs``, one line each: a staged
    file that does not read as what it is (a directory: each of its files), or one that
    would replace ``out`` with less (:func:`check_replace`). The workflow runs it over
    every staged file before it publishes any, so a loss anywhere publishes nothing."""
    problems = []
    for staged, out in pairs:
        if not Path(staged).exists():
            problems.append(f"{staged}: nothing staged to publish; {out} stays as it is")
            continue
        try:
            check_replace(check_staged(staged, out), staged, out, allow_fewer)
        except (RunFileError, RefusedError) as err:
            problems.append(str(err))
    return problems


def repair_staged(staged_files: Iterable[str | Path], stage: str | Path,
                  apply: bool = True) -> list[str]:
    """Move each of ``staged_files`` (paths below the staging area ``stage``) that exists
    and does not read as what its name says to ``<stage>/damaged/`` (its path below
    ``stage`` kept) when ``apply``; one line per file so found."""
    stage, notes = Path(stage), []
    for path in map(Path, staged_files):
        if not path.is_file():
            continue
        try:
            read(path)
        except Damaged as err:
            target = stage / "damaged" / path.relative_to(stage)
            if apply:
                target.parent.mkdir(parents=True, exist_ok=True)
                path.replace(target)
            verb = "moved to" if apply else "would move it to"
            notes.append(f"dfil: {path}: damaged staged file ({err}); {verb} {target}, so "
                         "the DAG makes it again before publishing it")
    return notes


def republish(pairs: Iterable[tuple[str | Path, str | Path]], apply: bool = True) -> list[str]:
    """Copy each staged file of ``pairs`` ((staged, published)) over its published file
    where that was published from it (it is the newer) but no longer holds its bytes
    (truncated or edited since), when ``apply``; one line per file so found. A staged
    file newer than its published one is the DAG's to publish (or to refuse: a rebuild
    refused to replace leaves the published file older), and a damaged staged file is
    :func:`repair_staged`'s."""
    notes = []
    for staged, out in pairs:
        staged, out = Path(staged), Path(out)
        if (not (staged.is_file() and out.is_file())
                or staged.stat().st_mtime_ns > out.stat().st_mtime_ns
                or staged.read_bytes() == out.read_bytes()):
            continue
        try:
            check_staged(staged, out)
        except RunFileError:
            continue
        try:
            why = f"edited since it was published from {staged}" if read(out) else ""
        except Damaged as err:
            why = f"damaged since it was published from {staged} ({err})"
        if apply:
            atomic_write_bytes(out, staged.read_bytes())
        verb = "published again" if apply else "a run that builds the DAG publishes it again"
        notes.append(f"dfil: {out}: {why}: {verb} from staging")
    return notes
