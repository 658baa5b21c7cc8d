"""What ``config/tables.yaml`` may declare: strict pydantic models of a table spec, and the
references between its parts (pure Python).

:func:`check_specs` validates a tables file: every key known (the closest one suggested
otherwise) and of its type, every row's cells and published numbers in its table's
columns, every effect between two published cells. An error names the file, the table
and the dotted key (``config/tables.yaml: scaling.rows[3].cells.dfil.fmt: ...``).
:mod:`dfil.render.resolve` documents what each key does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Annotated, Literal

from pydantic import BeforeValidator, ConfigDict, Field, RootModel

from dfil.config.cell import MethodName, MfInitName
from dfil.config.gridfile import Budget
from dfil.config.validation import (
    NonEmpty,
    NonNegative,
    NonNegativeReal,
    PairOf,
    PositiveReal,
    StrictModel,
    TupleOf,
    as_tuple,
    validate,
)
from dfil.contracts.metrics import measure_problem
from dfil.render.spec_values import check_values
from dfil.util.errors import ConfigError, did_you_mean

#: How an entry prints (:meth:`dfil.render.entries.Entry.render`).
Format = Literal["ms", "mean", "std", "signed", "center", "int", "pct", "p", "n", "text"]


class Selector(StrictModel):
    """Which grid cells an entry reads: the paper's coordinates (a grid's ``render:``
    maps them onto its own), the metric and a scale. Each layer (the table's ``where``,
    a column, a row, a row's ``cells:`` override) gives any of them; later layers win."""

    task: str = Field(None)
    backbone: str = Field(None)
    method: MethodName = Field(None)
    variant: str = ""
    lam: NonNegativeReal = 0.5
    budget: Budget = "full"
    init: MfInitName = "qure"
    seeds: str = Field(None)
    """A seed set's name (the grid's ``seed_sets:``, through its render map)."""
    seed: NonNegative = Field(None)
    metric: str = Field(None)
    """A dotted path into metrics.json (``test.mf.acc``)."""
    scale: Literal[1, 100] = 1
    """1: the metric as metrics.json holds it (a fraction); 100: a percentage."""
    expect: Literal["not run"] = Field(None)
    """``not run``: a grid that renders every table (``render.strict``) may leave this
    layer's coordinates out on purpose (:func:`dfil.render.coordinates.check_selectors`)."""


class EntrySpec(Selector):
    """One entry (a table's body cell): a metric's statistic, or a delta, test, count of wins,
    ratio, reference to another table's entry, or literal LaTeX."""

    id: str = Field(None)
    fmt: Format = Field(None)
    digits: NonNegative = Field(None)
    hidden: bool = False
    delta: PairOf[str] = Field(None)
    """Two columns of the row: the first's mean minus the second's."""
    test: Literal["welch", "paired_t", "wilcoxon", "dz", "tost"] = Field(None)
    a: Selector = Field(None)
    b: Selector = Field(None)
    margin: PositiveReal = Field(None)
    """TOST's equivalence margin, in the scaled metric's units."""
    holm: str = Field(None)
    """A column whose p-values are Holm-adjusted across the table's rows."""
    wins: TupleOf[PairOf[str]] = Field(None)
    """(row, column) entries counted when they beat the row's ``against`` column."""
    against: str = Field(None)
    show: Literal["k", "n", "p"] = Field(None)
    ratio: PairOf[str] = Field(None)
    ref: Annotated[str, Field(pattern=r"^[^/]+/[^/]+/[^/]+$")] = Field(None)
    """Another table's entry: ``table/row/column``."""
    tex: str = Field(None)
    """Literal LaTeX; with ``with``, its {placeholders} filled by those entries."""
    with_: dict[str, EntrySpec] = Field(None, alias="with")
    same: str = Field(None)
    """The ``tex`` to use when every ``with`` entry prints the same (a range whose ends
    are equal prints one value)."""


class Column(EntrySpec):
    id: str


#: ``rows: [a, b]``: row a minus row b, column by column. Never the best of several rows:
#: a side picked by its test means would select on the outcome (a path is chosen on the
#: validation split, as the ``best`` path's metrics are).
RowDifference = Annotated[tuple[str, str], BeforeValidator(as_tuple)]


class RowSpec(Selector):
    """A body row (its entries' selectors and per-column overrides), a row computed from
    other rows, a rule or a section heading."""

    id: str | int = Field(None)
    label: str = Field(None)
    cells: dict[str, EntrySpec | None] = Field(None)
    """Per-column overrides; ``null``: empty by the paper's layout."""
    paper: dict[str, float | str] = Field(None)
    """The number the paper printed, per column (the diff report's reference)."""
    dz: dict[str, PositiveReal] = Field(None)
    """The Cohen's d_z the paper prints for this row's paired difference, per column:
    the standardised effect a plan sizes its seeds by (:mod:`dfil.plan.power`)."""
    same_as: dict[str, str] = Field(None)
    """Per column, the id of the place (``T<n>:<row>/<column>`` or ``T<n>:<effect>``) whose
    claim this row's signed entry prints again: one claim, printed at both
    (:func:`dfil.claims.declare.merge`)."""
    rows: RowDifference = Field(None)
    reduce: Literal["min", "max"] = Field(None)
    over: TupleOf[str] = Field(None)
    hidden: bool = False
    fmt: Format = Field(None)
    digits: NonNegative = Field(None)
    rule: bool = False
    section: str = Field(None)
    baseline: Literal["majority", "chance"] = Field(None)
    """A test set's majority-class or chance row, in the runs of row ``like``."""
    like: str = Field(None)


class BoldRule(StrictModel):
    """Bold the best mean of each row (``by: row``, among columns) or of each of ``cols``
    (``by: column``, among rows)."""

    by: Literal["row", "column"]
    among: NonEmpty[str]
    cols: TupleOf[str] = ()


class Effect(StrictModel):
    """A contrast the paper draws between two of its published cells (``a``, ``b``:
    ``row/column``), whose sign the diff report checks."""

    label: str
    a: str
    b: str
    tol: NonNegativeReal = 0.0
    paper_a: str = ""
    """The paper's ``row/column`` side a (measured on b's items) stands for; ``paper_b``."""
    paper_b: str = ""
    construction: str = ""
    """Why it holds by construction (:mod:`dfil.claims.construction`)."""
    same_as: str = ""
    """The id of the place whose claim this contrast prints again (as ``RowSpec.same_as``)."""


class CaptionSetting(StrictModel):
    """Caption text that states a setting of the table's runs
    (:mod:`dfil.render.caption_settings`): ``text``, verbatim in the caption or a label
    of ``rows`` (LaTeX);
    ``says``, the same in plain words for the note when it is left out; ``config``, the
    cell config it states (dotted key -> value)."""

    text: str
    says: str
    config: dict[str, str | float | bool | TupleOf[str]]
    rows: TupleOf[str] = ()
    """The rows whose runs it speaks of (their labels may hold ``text``); () for all."""


class TableSpec(StrictModel):
    number: NonNegative
    """Its number in the paper (0: an internal table)."""
    label: str
    caption: str
    where: Selector = Field(default_factory=Selector)
    defaults: EntrySpec = Field(default_factory=EntrySpec)
    columns: TupleOf[Column] = ()
    rows: TupleOf[RowSpec] = ()
    bold: TupleOf[BoldRule] = ()
    footnotes: TupleOf[EntrySpec] = ()
    internal: bool = False
    """A helper table other tables refer to, not one of the paper's."""
    effects: TupleOf[Effect] = ()
    probes: dict[str, NonNegative] = Field(default_factory=dict)
    """The paper's size of each probe set the table reads (:mod:`dfil.render.probe_sizes`)."""
    settings: TupleOf[CaptionSetting] = ()
    """Caption text kept only where every run the table reads used the setting it states."""


class TablesFile(RootModel[dict[str, TableSpec]]):
    """``config/tables.yaml``: table name -> its spec."""

    model_config = ConfigDict(strict=True)


def check_specs(specs: Mapping, path: str = "config/tables.yaml") -> Mapping:
    """``specs`` if it is a valid tables file; :class:`ConfigError` naming ``path``, the
    table and the dotted key of the first problem otherwise."""
    try:
        tables = validate(TablesFile, specs).root
        for name, table in tables.items():
            _check_references(name, table, tables)
        check_values(tables)
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None
    return specs


def entries(table: TableSpec) -> Iterator[tuple[str, EntrySpec]]:
    """(dotted key, spec) of every entry spec of ``table``: its defaults, columns, rows'
    cells, footnotes, and the entries their ``with`` fills in."""
    found: list[tuple[str, EntrySpec]] = [("defaults", table.defaults)]
    found += [(f"columns[{i}]", c) for i, c in enumerate(table.columns)]
    found += [(f"rows[{i}].cells.{col}", e) for i, r in enumerate(table.rows)
              for col, e in (r.cells or {}).items() if e is not None]
    found += [(f"footnotes[{i}]", f) for i, f in enumerate(table.footnotes)]
    while found:
        where, spec = found.pop(0)
        yield where, spec
        found += [(f"{where}.with.{k}", e) for k, e in (spec.with_ or {}).items()]


def selectors(table: TableSpec) -> Iterator[tuple[str, Selector]]:
    """(dotted key, selector) of every layer of ``table`` that picks grid cells: its
    ``where``, rows, entries and the two sides of a test."""
    yield "where", table.where
    yield from ((f"rows[{i}]", r) for i, r in enumerate(table.rows))
    for where, spec in entries(table):
        yield where, spec
        yield from ((f"{where}.{side}", getattr(spec, side)) for side in ("a", "b")
                    if getattr(spec, side) is not None)


def unknown(kind: str, value: str, known: Iterable[str]) -> str:
    """``'fft' is not a column (did you mean 'ft'? known: dfil, ft)``."""
    known = sorted(map(str, known))
    hint = did_you_mean(value, known)
    return f"{value!r} is not a {kind} ({hint}known: {', '.join(known) or 'none'})"


def _check_references(name: str, table: TableSpec, tables: Mapping[str, TableSpec]) -> None:
    """A row names only its table's columns; an entry, its table's columns and rows and
    other tables' entries; a selector, a measurement of metrics.json; an effect, two
    published cells."""
    cols = [c.id for c in table.columns]
    for i, row in enumerate(table.rows):
        for part in ("cells", "paper"):
            for col in getattr(row, part) or {}:
                if col not in cols:
                    raise ConfigError(f"{name}.rows[{i}].{part}: {col!r} is not a column "
                                      f"{cols}")
    _check_entry_references(name, table, tables)
    for where, selector in selectors(table):
        if selector.metric is not None and (problem := measure_problem(selector.metric)):
            raise ConfigError(f"{name}.{where}.metric: {problem}")
    _check_metric_layers(name, table)
    published = {(str(r.id), c) for r in table.rows if r.id is not None for c in r.paper or {}}
    entries = {(str(r.id), c) for r in table.rows if r.id is not None for c in cols}
    for i, effect in enumerate(table.effects):
        for side in ("a", "b"):
            paper = getattr(effect, f"paper_{side}")
            for key, at, known in ((f"paper_{side}", paper, published),
                                   (side, getattr(effect, side), entries if paper else published)):
                if at and tuple(at.split("/")) not in known:
                    w = "of the table" if known is entries else "with a published number"
                    raise ConfigError(f"{name}.effects[{i}].{key}: {at!r} is not a row/column {w}")


def _row_ids(table: TableSpec) -> list[str]:
    return [str(r.id) for r in table.rows if r.id is not None]


def _check_entry_references(name: str, table: TableSpec,
                            tables: Mapping[str, TableSpec]) -> None:
    """The columns a ``delta``, ``ratio``, ``holm`` or ``against`` names are its table's;
    so are a ``wins`` pair's row and column, and the rows a row difference or reduction
    names; a ``ref`` names an entry of another table."""
    cols, rows = [c.id for c in table.columns], _row_ids(table)
    for where, spec in entries(table):
        named = [("delta", c) for c in spec.delta or ()] + [("ratio", c) for c in spec.ratio or ()]
        named += [(key, getattr(spec, key)) for key in ("holm", "against")
                  if getattr(spec, key) is not None]
        for key, col in named + [("wins", c) for _, c in spec.wins or ()]:
            if col not in cols:
                raise ConfigError(f"{name}.{where}.{key}: {unknown('column', col, cols)}")
        for row, _ in spec.wins or ():
            if row not in rows:
                raise ConfigError(f"{name}.{where}.wins: {unknown('row', row, rows)}")
        if spec.ref is not None:
            _check_ref(f"{name}.{where}.ref", spec.ref, tables)
    for i, row in enumerate(table.rows):
        a, b = row.rows or ((), None)
        named = [*((a,) if isinstance(a, str) else a), *((b,) if b else ()), *(row.over or ()),
                 *((row.like,) if row.like else ())]
        for other in named:
            if other not in rows:
                raise ConfigError(f"{name}.rows[{i}].{'over' if row.over else 'rows'}: "
                                  f"{unknown('row', other, rows)}")


def _check_ref(key: str, ref: str, tables: Mapping[str, TableSpec]) -> None:
    tname, rid, cid = ref.split("/")
    if tname not in tables:
        raise ConfigError(f"{key}: {unknown('table', tname, tables)}")
    if rid not in _row_ids(tables[tname]):
        raise ConfigError(f"{key}: {unknown(f'row of {tname}', rid, _row_ids(tables[tname]))}")
    cols = [c.id for c in tables[tname].columns]
    if cid not in cols:
        raise ConfigError(f"{key}: {unknown(f'column of {tname}', cid, cols)}")


def _check_metric_layers(name: str, table: TableSpec) -> None:
    """A row's ``metric`` overrides its columns' (layers merge table, column, row,
    cell): over a column that names a metric of its own (T6's monotonicity beside its
    accuracy columns) that is almost surely a slip, so the row must say the column's
    metric again in ``cells``, or give that column an entry of another kind."""
    own = {c.id: c.metric for c in table.columns if c.metric is not None}
    for i, row in enumerate(table.rows):
        if row.metric is None:
            continue
        for col, metric in own.items():
            cell = (row.cells or {}).get(col, EntrySpec())
            if cell is not None and cell.metric is None and cell.model_fields_set <= set(
                    Selector.model_fields) and row.metric != metric:
                raise ConfigError(
                    f"{name}.rows[{i}].metric: {row.metric!r} would replace column "
                    f"{col!r}'s own metric {metric!r}; name the one it reads in "
                    f"cells.{col}.metric")
