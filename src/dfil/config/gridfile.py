"""What a grid file (``config/<grid>.yaml``) may hold: strict, frozen pydantic models of its
sections, the cross-references between them, and its JSON Schema (pure Python).

:class:`dfil.config.grid.Grid` validates a grid with :class:`GridFile` and
:func:`check_references`; ``config/schema.json`` is :func:`grid_schema` (``dfil grid
schema``), so editors and CI check a grid by the same rules. A partial cell (``defaults``,
a task's, variant's or group's ``cell:``) is a :class:`~dfil.config.cell.CellConfig` of
which only the keys given count (``model_dump(exclude_unset=True)``): any subset of keys,
none unknown, each with its type and bounds.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Discriminator, Field, Tag, create_model
from pydantic_core import PydanticCustomError

from dfil.config.acceptance import Acceptance
from dfil.config.cell import BackboneConfig, CellConfig, MethodName, MfInitName
from dfil.config.validation import (
    Count,
    NonEmpty,
    NonNegative,
    NonNegativeReal,
    StrictModel,
    TupleOf,
)
from dfil.util.errors import ConfigError

#: Names that become parts of run-directory paths and Snakemake wildcards (the grid's
#: name, backbones, tasks, variants): no braces, shell characters, separators or spaces.
NAME_PATTERN = "^[A-Za-z0-9_][A-Za-z0-9_.-]*$"
#: The resource class of light jobs (data, cell configs, aggregation, rendering).
LIGHT = "cpu"


def _name(value: str) -> str:
    if not re.match(NAME_PATTERN, value):
        raise PydanticCustomError(
            "name", f"name {value!r} may hold only letters, digits, '_', '.' and '-', and not "
            "start with '.' or '-': it becomes part of run directories and Snakemake wildcards")
    return value


Name = Annotated[str, AfterValidator(_name), Field(json_schema_extra={"pattern": NAME_PATTERN})]
#: Mappings whose keys are names end up in paths: no other key is allowed.
_NAMED = Field(json_schema_extra={"additionalProperties": False})


def _distinct(seeds: tuple[int, ...]) -> tuple[int, ...]:
    twice = sorted({s for s in seeds if seeds.count(s) > 1})
    if twice:
        raise PydanticCustomError(
            "seeds", f"seed {twice[0]} is listed twice; each seed is one run, so a repeated "
            f"one would silently drop a run from every table that reads the set (got "
            f"{list(seeds)})")
    return seeds


#: A list of seeds, each one run: none negative, none repeated.
SeedList = Annotated[NonEmpty[NonNegative], AfterValidator(_distinct),
                     Field(json_schema_extra={"uniqueItems": True})]


def _seeds_kind(value: Any) -> str:
    return "set" if isinstance(value, str) else "list"


def _budget_kind(value: Any) -> str:
    return "full" if isinstance(value, str) else "n"


Seeds = Annotated[Annotated[str, Tag("set")] | Annotated[SeedList, Tag("list")],
                  Discriminator(_seeds_kind)]
Budget = Annotated[Annotated[Literal["full"], Tag("full")] | Annotated[Count, Tag("n")],
                   Discriminator(_budget_kind)]

#: A grid's backbone entry: every field of BackboneConfig but its name (the entry's key),
#: plus the resource class its jobs ask for and its label in tables.
GridBackbone = create_model(
    "GridBackbone", __base__=StrictModel,
    __doc__="A backbone of the grid: BackboneConfig's fields but its name (the entry's key), "
            "its size class and its label.",
    size=(str, Field(description="The resources: class its jobs ask for.")),
    label=(str, Field("", description="Its name in tables and reports.")),
    **{n: (f.annotation, f) for n, f in BackboneConfig.model_fields.items() if n != "name"})


class Resources(StrictModel):
    """A size class's job request (Snakemake resources; SLURM's under the slurm profile),
    the same on every attempt: a retry resumes from the job's checkpoint."""

    mem_mb: Count
    runtime: Count
    """Minutes for a training job (and any job of the class without eval_runtime)."""
    eval_runtime: Count | None = None
    """Minutes for an evaluation job; null: runtime."""
    gpu: NonNegative = 0
    gpu_model: str = ""
    """Sent as --gpus=<gpu_model>:<gpu>; "" takes any GPU."""
    cpus_per_task: Count | None = None


class FrogStandin(StrictModel):
    """The synthetic FRoG-format stand-in (``dfil synth-frog``)."""

    n_easy: Count
    """Easy items (train + validation)."""
    n_hard: Count
    """Hard items (test)."""
    seed: NonNegative = 0
    hard_form: Literal["unseen_totals", "complement"] = "unseen_totals"


class HubDataset(StrictModel):
    """A dataset the grid reads from the hub, fetched once at a pinned revision; cells name
    it ``dataset:<entry>`` in ``data.source``, ``test_source`` or ``qure_source``."""

    repo: str
    """Hub id, org/name."""
    revision: str
    """A commit, or a branch or tag resolved to its commit by the grid's lock file."""
    configs: TupleOf[str] = ()
    """Configs whose splits the fetch prepares as parquet; () the default config."""


class EmbeddedData(StrictModel):
    """Data the DAG generates instead of fetching (embedded configs only)."""

    frog: FrogStandin


class TaskEntry(StrictModel):
    cell: CellConfig = Field(default_factory=CellConfig)
    """Overrides for this task's cells (a partial cell)."""


class Variant(StrictModel):
    description: str = ""
    cell: CellConfig = Field(default_factory=CellConfig)
    """Overrides for this variant's cells (a partial cell)."""


class Group(StrictModel):
    """A product of coordinates expanded into cells."""

    tasks: NonEmpty[str]
    backbones: NonEmpty[str]
    methods: NonEmpty[MethodName]
    lambdas: NonEmpty[NonNegativeReal]
    budgets: NonEmpty[Budget]
    inits: NonEmpty[MfInitName]
    seeds: Seeds
    """A seed set's name (``seed_sets:``) or a list of seeds."""
    description: str = ""
    variant: str = ""
    cell: CellConfig = Field(default_factory=CellConfig)
    """Overrides for this group's cells that do not change their keys (a key built by two
    groups with different overrides is an error)."""
    tables: TupleOf[str] = ()


class Control(StrictModel):
    """A positive control of one claim family: the cells of ``group`` (whose config differs
    from ``reference``'s cells only in ``model.heads.control_input``) against the family's
    cells of ``reference``, seed by seed, on ``metric``; the effect that must appear if the
    code is right, declared before any run is read: on every seed, the control's value
    minus the reference's, in ``direction``, by at least ``threshold`` (the metric's
    units), and, where ``ceiling`` is set, the control's own value at least that
    (``direction`` "greater"; at most, "less"): the value the metric takes by construction
    when the control's input is read exactly. ``group`` runs on at least
    :data:`dfil.config.controls.CONTROL_MIN_SEEDS` seeds."""

    family: Literal["compositional", "monotonicity", "ordinal"]
    group: str
    reference: str
    metric: str
    direction: Literal["greater", "less"]
    threshold: Annotated[float, Field(gt=0)]
    ceiling: float | None = None
    description: str = ""


class RenderMap(StrictModel):
    """How config/tables.yaml's paper coordinates map onto this grid's cells."""

    standin: str = ""
    backbones: dict[str, str] = Field(default_factory=dict)
    tasks: dict[str, str] = Field(default_factory=dict)
    lambdas: dict[str, NonNegativeReal] = Field(default_factory=dict)
    variants: dict[str, str] = Field(default_factory=dict)
    seed_sets: dict[str, str] = Field(default_factory=dict)
    strict: bool = False
    """The grid renders the tables in full: each coordinate config/tables.yaml names must
    be one this grid runs or maps, unless its entry says ``expect: not run`` (never for the
    paper's own grid, which runs them all); a grid cut down to a few cells leaves it off
    (:mod:`dfil.render.coordinates`)."""


#: A probability strictly between 0 and 1 (a power, a level).
Probability = Annotated[float, Field(gt=0, lt=1)]


class PlanRecord(StrictModel):
    """What ``dfil grid plan`` was asked and what it planned, in the grid file it writes:
    the report shows each claim as planned or not, ``dfil grid preflight`` the cost."""

    budget: NonNegativeReal
    """GPU-hours asked for."""
    gpu: str = ""
    """The GPU the cost was projected on; "" each size class's gpu_model."""
    end: Literal["pessimistic", "optimistic"] = "pessimistic"
    """The end of the cost model's range the plan kept within the budget."""
    power: Probability = 0.8
    alpha: Probability = 0.05
    projected: NonNegativeReal = 0.0
    """The planned runs' GPU-hours by the cost model (shared runs counted once)."""
    considered: NonNegative = 0
    """How many claims the plan chose among."""
    claims: TupleOf[str] = ()
    """The ids of the claims planned (the report's, e.g. ``T5:qwen2.5-72b/delta``)."""


class GridFile(StrictModel):
    """A grid config: its cells' coordinates, defaults and resources."""

    name: Name
    backbones: Annotated[dict[Name, GridBackbone], _NAMED]  # type: ignore[valid-type]
    resources: dict[str, Resources]
    """Job requests by size class; ``cpu`` is the light jobs'."""
    tasks: Annotated[dict[Name, TaskEntry], _NAMED]
    groups: Annotated[dict[str, Group], Field(json_schema_extra={"minProperties": 1})]
    """At least one: a grid without groups has no cells."""
    description: str = ""
    defaults: CellConfig = Field(default_factory=CellConfig)
    """Overrides for every cell (a partial cell)."""
    embedded_data: EmbeddedData | None = None
    datasets: Annotated[dict[Name, HubDataset], _NAMED] = Field(default_factory=dict)
    """Hub datasets, fetched once each (cells: ``dataset:<name>``)."""
    lock: str = ""
    """The lock file (path from the working directory) holding the commit of every branch
    or tag a backbone's or dataset's revision names (``dfil grid lock`` writes it)."""
    fetch: Literal["local", "job"] = "local"
    """Where hub fetches run: ``local``, where Snakemake runs (a login node with the
    network), or ``job``, as CPU jobs (sites whose login nodes are offline)."""
    fetch_backbones: TupleOf[str] = ()
    pack: bool = False
    """Whether each cell configuration's seeds train together, in packs of as many as its
    class's GPU holds (``dfil.cost.packs.grid_packs``; a CPU class: all of them): one
    ``train_pack`` job trains their first attempt at once, then each seed's
    ``train_cell`` job finishes it (its summary, collapse remediation, or the seed alone
    where the pack left it out). A pack's job asks its class's request: one stopped at its
    time limit resumes every seed on the retry. False: one seed per training job."""
    probe_seed: NonNegative = 0
    seed_sets: dict[str, SeedList] = Field(default_factory=dict)
    variants: Annotated[dict[Name, Variant], _NAMED] = Field(default_factory=dict)
    render: RenderMap = Field(default_factory=RenderMap)
    controls: dict[Name, Control] = Field(default_factory=dict)
    """Positive controls, one or more per claim family (``dfil.claims.controls``)."""
    plan: PlanRecord | None = None
    """Set by ``dfil grid plan`` in the grid file it writes."""
    acceptance: Acceptance | None = None
    """What ``snakemake acceptance`` runs before the grid."""


def check_references(grid: GridFile) -> None:
    """Every name a section uses is declared where it points: :class:`ConfigError` naming
    the key (``groups.G1.backbones: 'qwen3-7b' is not in backbones (...)``)."""
    if LIGHT not in grid.resources:
        raise ConfigError(f"resources: no class {LIGHT!r}; the rules run light jobs (data, cell "
                          "configs, aggregation, tables) with it (the grid has "
                          f"{sorted(grid.resources)})")
    if not grid.groups:
        raise ConfigError("groups: none declared, so the grid has no cells and every table "
                          "would be published empty; declare at least one group")
    for name, backbone in grid.backbones.items():
        if backbone.size not in grid.resources:
            raise ConfigError(f"backbones.{name}.size: {backbone.size!r} is not a class of "
                              f"resources ({sorted(grid.resources)})")
    for gname, group in grid.groups.items():
        for field, declared in (("tasks", grid.tasks), ("backbones", grid.backbones)):
            for name in getattr(group, field):
                if name not in declared:
                    raise ConfigError(f"groups.{gname}.{field}: {name!r} is not in {field} "
                                      f"({sorted(declared)})")
        if group.variant and group.variant not in grid.variants:
            raise ConfigError(f"groups.{gname}.variant: unknown variant {group.variant!r} "
                              f"({sorted(grid.variants)})")
        if isinstance(group.seeds, str) and group.seeds not in grid.seed_sets:
            raise ConfigError(f"groups.{gname}.seeds: unknown seed set {group.seeds!r} "
                              f"({sorted(grid.seed_sets)})")
    for cname, control in grid.controls.items():
        for field in ("group", "reference"):
            if getattr(control, field) not in grid.groups:
                raise ConfigError(f"controls.{cname}.{field}: {getattr(control, field)!r} is "
                                  f"not in groups ({sorted(grid.groups)})")


def grid_schema() -> dict:
    """The JSON Schema of a grid file (``config/schema.json``)."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            **GridFile.model_json_schema(), "title": "dfil grid config"}
