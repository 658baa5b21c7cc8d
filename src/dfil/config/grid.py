"""The experiment grid as config: groups of (task, backbone, method, lambda, budget, init,
seed) expanded into cells, each trained once however many tables it feeds (pure Python).

A grid config (``config/paper.yaml``, ``config/config.yaml``, ``config/smoke.yaml``) is
validated by the models of :mod:`dfil.config.gridfile`. A cell's run directory is
``results/<name>/runs/<key>``, its key built by :func:`dfil.config.runkey.format_key`.

Hub repos are pinned: a backbone entry's ``revision`` and a ``datasets:`` entry's become
the commit the cell's config holds (``model.backbone.revision``; a source
``hub:<repo>@<commit>``), through the grid's lock file where they name a branch
(:mod:`dfil.config.pins`). A grid whose branches are not locked still expands (to list its
cells, project its cost, lock it) with those repos unpinned; :meth:`Grid.require_locked`
refuses it where cells are built.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from dfil.config.acceptance import acceptance_runs, check_acceptance
from dfil.config.cell import CellConfig, cell_of, config_hash, resolve, to_dict
from dfil.config.controls import control_pairs
from dfil.config.gridfile import GridFile, Group, check_references
from dfil.config.pins import Pin, read_lock, unlocked_error
from dfil.config.rendermap import check_render_map
from dfil.config.runkey import RunPoint, cell_name, format_key, group_points
from dfil.config.validation import validate
from dfil.config.yamlfile import load_yaml
from dfil.hub.local import hub_source
from dfil.util.errors import ConfigError


@dataclass(frozen=True)
class Cell:
    """One run of the grid: its key (run-directory path), resolved config and resources."""

    key: str
    config: dict
    size: str
    groups: tuple[str, ...]
    tables: tuple[str, ...]
    fetches: tuple[tuple[str, str], ...] = ()
    """(kind, entry) of each hub backbone and dataset it reads, fetched before it runs."""


class Grid:
    """An expanded, validated grid config. ``config`` is the grid as given (what the
    rules read); ``spec`` is it validated (:class:`dfil.config.gridfile.GridFile`)."""

    def __init__(self, config: Mapping, results_root: str = "results", files=()):
        try:
            self.spec = validate(GridFile, dict(config))
            check_references(self.spec)
            check_render_map(self.spec)
        except ConfigError as err:
            raise ConfigError(f"config {err}") from None
        self.config = dict(config)
        self.name = self.spec.name
        self.results = f"{results_root}/{self.name}"
        self.files = " ".join(map(str, files)) or "<grid files>"
        self._lock = read_lock(self.spec.lock) if self.spec.lock else {}
        #: (kind, entry) -> its pin with the commit cells use (None: a branch not locked)
        self.pins: dict[tuple[str, str], tuple[Pin, str | None]] = {}
        self.cells: dict[str, Cell] = {}
        for gname, group in self.spec.groups.items():
            for point in group_points(group, self.spec.seed_sets):
                self._add(gname, group, point)
        try:
            check_acceptance(self.spec.acceptance, self.cells)
        except ConfigError as err:
            raise ConfigError(f"config {err}") from None
        for name in self.spec.controls:
            self.control_pairs(name)

    def control_pairs(self, name: str) -> list[tuple[str, str]]:
        """(control key, reference key) of control ``name``'s cells
        (:func:`dfil.config.controls.control_pairs`)."""
        return control_pairs(self, name)

    def _add(self, gname: str, group: Group, point: RunPoint) -> None:
        key = format_key(point)
        reads: set[tuple[str, str]] = set()
        cell = self._cell_config(point, group.cell, reads)
        old = self.cells.get(key)
        if old is None:
            groups, tables = (gname,), group.tables
        elif old.config != cell:
            raise ConfigError(f"config groups.{gname}: cell {key} is also built by "
                              f"{old.groups} with a different configuration")
        else:
            groups = old.groups + (gname,)
            tables = old.tables + tuple(t for t in group.tables if t not in old.tables)
        size = self.spec.backbones[point.backbone].size
        self.cells[key] = Cell(key, cell, size, groups, tuple(tables), tuple(sorted(reads)))

    def _cell_config(self, point: RunPoint, group_cell: CellConfig,
                     reads: set[tuple[str, str]]) -> dict:
        """The resolved config of the cell at ``point``: defaults, then the task's,
        variant's and group's overrides, then what the point pins; the hub entries it
        reads are added to ``reads``."""
        spec = self.spec
        layers = [spec.defaults, spec.tasks[point.task].cell, group_cell]
        if point.variant:
            layers.insert(2, spec.variants[point.variant].cell)
        cell: dict = {}
        for layer in [*(_given(c) for c in layers), self._pinned(point, reads)]:
            cell = deep_merge(cell, layer)
        cell = _substitute(cell, {"results": self.results})
        cell["data"] = self._hub_sources(cell.get("data", {}), format_key(point), reads)
        try:
            return to_dict(resolve(validate(CellConfig, cell)))
        except ConfigError as err:
            raise ConfigError(f"config cell {format_key(point)}: {err}") from None

    def _commit(self, kind: str, name: str, repo: str, revision: str, where: str) -> str:
        """The commit cells use for ``repo`` at ``revision`` ("" while not locked)."""
        key = (kind, name)
        if key not in self.pins:
            pin = Pin(kind, name, repo, revision, where)
            commit = revision if pin.pinned else self._lock.get((kind, repo, revision))
            self.pins[key] = (pin, commit)
        return self.pins[key][1] or ""

    def _hub_sources(self, data: dict, key: str, reads: set[tuple[str, str]]) -> dict:
        """``data`` with each ``dataset:<entry>`` source as ``hub:<repo>@<commit>``."""
        data = dict(data)
        for field in ("source", "test_source", "qure_source"):
            value = data.get(field, "")
            if not isinstance(value, str) or not value.startswith("dataset:"):
                continue
            name = value.split(":", 1)[1]
            entry = self.spec.datasets.get(name)
            if entry is None:
                raise ConfigError(f"config cell {key}: data.{field}: dataset {name!r} is not "
                                  f"in datasets ({sorted(self.spec.datasets)})")
            commit = self._commit("dataset", name, entry.repo, entry.revision,
                                  f"datasets.{name}.revision")
            reads.add(("dataset", name))
            data[field] = hub_source(entry.repo, commit or entry.revision)
        return data

    def _pinned(self, point: RunPoint, reads: set[tuple[str, str]]) -> dict:
        """What a cell's coordinates fix. Keys that do not apply to its method ("na") are
        left at their defaults, so that e.g. a fine-tune cell is one cell whichever
        lambda its group lists."""
        entry = _given(self.spec.backbones[point.backbone])
        if entry.get("revision"):
            entry["revision"] = self._commit("model", point.backbone, entry.get("model_id", ""),
                                             entry["revision"],
                                             f"backbones.{point.backbone}.revision")
            reads.add(("model", point.backbone))
        model: dict = {"method": point.method,
                       "backbone": {"name": point.backbone,
                                    **{k: v for k, v in entry.items()
                                       if k not in ("size", "label")}}}
        if point.lam != "na":
            model["loss"] = {"lambda_dfil": float(point.lam)}
        if point.init != "na":
            model["heads"] = {"mf_init": point.init}
        return {"name": cell_name(format_key(point)), "model": model,
                "data": {"budget": None if point.budget == "full" else int(point.budget)},
                "train": {"seed": 0 if point.seed == "na" else int(point.seed)}}

    def cell(self, key: str) -> Cell:
        """The cell with run-directory key ``key``; ``ConfigError`` if it is not in the grid."""
        try:
            return self.cells[key]
        except KeyError:
            raise ConfigError(f"cell {key!r} is not in the configured grid of "
                              f"{self.name!r} ({len(self.cells)} cells)") from None

    def cell_json(self, key: str) -> str:
        """The resolved config of cell ``key`` as canonical JSON: what its ``cell.yaml``
        holds, handed to the job by the DAG (so a config edit that changes it reruns the
        cell, and no job parses the grid again)."""
        return json.dumps(self.cell(key).config, sort_keys=True, separators=(",", ":"))

    def config_hash(self, key: str) -> str:
        """The config hash a run of cell ``key`` records: its ``cell.yaml``'s."""
        return config_hash(cell_of(json.loads(self.cell_json(key))))

    def require_locked(self) -> None:
        """:class:`ConfigError` naming ``dfil grid lock`` if a backbone or dataset the
        cells read names a branch or tag that the lock file does not pin."""
        unlocked = self.unlocked()
        if unlocked:
            raise unlocked_error(unlocked, self.spec.lock, self.files)

    def unlocked(self) -> list[Pin]:
        """The pins the cells read whose branch or tag the lock file does not pin."""
        return [pin for pin, commit in self.pins.values() if commit is None]

    def fetch_target(self, kind: str, name: str, locked: bool = True) -> tuple[Pin, str]:
        """The pin of hub entry ``name`` (a backbone or dataset) and its commit; with
        ``locked`` False (a dry run's plan) an unlocked branch stands for its commit."""
        try:
            pin, commit = self.pins[(kind, name)]
        except KeyError:
            raise ConfigError(f"no hub {kind} {name!r} in the grid's cells "
                              f"({sorted(n for k, n in self.pins if k == kind)})") from None
        if commit is None and locked:
            raise unlocked_error([pin], self.spec.lock, self.files)
        return pin, commit or pin.revision

    def key_pattern(self) -> str:
        """A regex matching exactly the configured keys (Snakemake wildcard constraint)."""
        return "|".join(re.escape(k) for k in sorted(self.cells))

    def resources(self, key: str) -> dict:
        return dict(self.config["resources"][self.cell(key).size])

    def job_resources(self, key: str, stage: str, light: str | None = None) -> dict:
        """What cell ``key``'s ``stage`` job (train or evaluate) asks for, the same on every
        attempt: its size class's request (a method that trains nothing, zero-shot, gets
        the ``cpu`` class for its train job: no GPU queued); evaluation's runtime is
        ``eval_runtime`` where the class sets one. A retry of a job stopped at its time
        limit resumes from its checkpoint, so it needs no more time than the first. A job
        that computes nothing on a GPU gets the ``cpu`` class too (``light``: why): one
        that will only record a failure (its reason,
        :func:`dfil.contracts.failure.failure_ahead`), or a seed's training job that only
        writes the summary of what its pack trained
        (:func:`dfil.train.sealed.sealed_summary`)."""
        from dfil.core.methods import method_spec

        trains = method_spec(self.cell(key).config["model"]["method"]).trains
        gpu = (stage != "train" or trains) and light is None
        size = self.cell(key).size if gpu else "cpu"
        out = dict(self.config["resources"][size])
        eval_runtime = out.pop("eval_runtime", None)
        if stage == "evaluate" and eval_runtime:
            out["runtime"] = eval_runtime
        return out


    def acceptance(self) -> dict[str, tuple[str, str]]:
        """``snakemake acceptance``'s runs (:func:`dfil.config.acceptance.acceptance_runs`)."""
        return acceptance_runs(self.spec.acceptance, self.cells)


def _given(section) -> dict:
    """The keys a partial config section was given, as plain data."""
    return section.model_dump(mode="json", exclude_unset=True)


def deep_merge(base: Mapping, over: Mapping) -> dict:
    """``base`` with ``over`` laid on top: nested mappings merge key by key, any other
    value (lists included) replaces the base's. Neither input is modified."""
    out = copy.deepcopy(dict(base))
    for k, v in over.items():
        both = isinstance(v, Mapping) and isinstance(out.get(k), Mapping)
        out[k] = deep_merge(out[k], v) if both else copy.deepcopy(v)
    return out


def _substitute(value, names: dict):
    if isinstance(value, str):
        return value.replace("{results}", names["results"])
    if isinstance(value, dict):
        return {k: _substitute(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, names) for v in value]
    return value


def load_grid_files(paths, locked: bool = False) -> Grid:
    """A :class:`Grid` from YAML files merged in order (later files override); ``locked``
    refuses branches its lock file does not pin (:meth:`Grid.require_locked`)."""
    merged: dict = {}
    for path in paths:
        merged = deep_merge(merged, load_yaml(path) or {})
    return grid_of(merged, paths, locked)


def grid_of(config: Mapping, paths, locked: bool = True) -> Grid:
    """The :class:`Grid` of ``config``, read from the files ``paths`` (Snakemake's merged
    ``config`` and ``workflow.configfiles``): each file is read strictly first (Snakemake's
    own loader keeps the last of a duplicated key), and an error names the files. With
    ``locked`` (the workflow's), a branch without a commit in the lock file is refused."""
    from_files: dict = {}
    for path in paths:
        from_files = deep_merge(from_files, load_yaml(path) or {})
    try:
        grid = Grid(config, files=paths)
        if locked:
            grid.require_locked()
        return grid
    except ConfigError as err:
        raise ConfigError(f"{blame(str(err), config, from_files, paths)}: {err}") from None


def overridden(config: Mapping, from_files: Mapping, prefix: str = "") -> list[str]:
    """The dotted keys whose value in ``config`` is not the files' (``from_files``): what
    Snakemake's ``--config`` laid on top of them, deepest key first met."""
    out = []
    for key, value in config.items():
        path, there = f"{prefix}{key}", from_files.get(key, _ABSENT)
        if isinstance(value, Mapping) and isinstance(there, Mapping):
            out += overridden(value, there, f"{path}.")
        elif value != there:
            out.append(path)
    return out


_ABSENT = object()


def blame(error: str, config: Mapping, from_files: Mapping, paths) -> str:
    """Where a config ``error`` ("config <key>: ...") came from: ``--config <key>`` when
    Snakemake's ``--config`` set that key (or a key above or below it), else the files
    ``paths``, saying which keys ``--config`` changed when it changed any."""
    files = ", ".join(map(str, paths))
    changed = overridden(config, from_files)
    said = re.match(r"config ([^:\s]+)", error)
    key = said.group(1) if said else None
    hit = [k for k in changed if key and (k == key or key.startswith(f"{k}.")
                                          or k.startswith(f"{key}."))]
    if hit:
        return f"--config {', '.join(hit)}"
    return f"{files} (with --config {', '.join(changed)})" if changed else files
