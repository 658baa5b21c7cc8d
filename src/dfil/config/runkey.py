"""The run key: the one definition of a cell's run-directory path (pure Python).

``<task>/<backbone>/<method>[+<variant>]/lam<lambda>/n<budget>/<init>/seed<seed>``, below
``results/<grid>/runs/``. Lambda, init and seed read ``na`` where they do not apply to the
method (no membership loss, no MF, nothing trained), and a method with a fixed lambda
(``dfil_only``) carries that lambda whatever its group lists, so that e.g. a fine-tune cell
is one cell however many lambdas or inits its group names. The grid builds keys with
:func:`run_key`, aggregation parses them with :func:`parse_key`, and the table renderer
looks cells up with the same two functions.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace

from dfil.core.methods import METHODS, method_spec
from dfil.util.errors import ConfigError

#: The parts of a key, in path order.
FIELDS = ("task", "backbone", "method", "variant", "lam", "budget", "init", "seed")

PATTERN = re.compile(
    r"(?P<task>[^/]+)/(?P<backbone>[^/]+)/(?P<method>[^/+]+)(?:\+(?P<variant>[^/]+))?/"
    r"lam(?P<lam>[^/]+)/n(?P<budget>[^/]+)/(?P<init>[^/]+)/seed(?P<seed>[^/]+)$"
)

#: Methods whose loss has no membership CE, and methods without an MF (the same set
#: today): lambda_DFIL and the MF init do not apply to them.
_NO_MF = frozenset(name for name, spec in METHODS.items() if spec.mf is None)


def fmt_lambda(value: float) -> str:
    """A lambda as written in keys and config maps: ``0.5``, ``1``, ``0.05``."""
    return f"{float(value):g}"


@dataclass(frozen=True)
class RunPoint:
    """A cell's coordinates, the parts of its run key (:data:`FIELDS`, in path order).

    ``lam``, ``init`` and ``seed`` are as a grid lists them (0.5, "qure", 42) or in key
    form ("0.5", "na"): :func:`applicable` turns the first into the second.
    """

    task: str
    backbone: str
    method: str
    variant: str
    lam: float | str
    budget: int | str
    init: str
    seed: int | str


def applicable(point: RunPoint) -> RunPoint:
    """``point`` with lambda, init and seed as written in a key, ``na`` where they do not
    apply to its method."""
    spec = method_spec(point.method)
    no_mf = point.method in _NO_MF
    lam = spec.lambda_dfil if spec.lambda_dfil is not None else point.lam
    return replace(point, lam="na" if no_mf else fmt_lambda(lam),
                   init="na" if no_mf else str(point.init),
                   seed=str(point.seed) if spec.trains else "na")


def format_key(point: RunPoint) -> str:
    """The key of ``point``, its parts already in key form (see :func:`applicable`)."""
    method = point.method + (f"+{point.variant}" if point.variant else "")
    return (f"{point.task}/{point.backbone}/{method}/lam{point.lam}/n{point.budget}/"
            f"{point.init}/seed{point.seed}")


def cell_name(key: str) -> str:
    """The name of the cell whose run key is ``key`` (its ``cell.yaml``'s ``name``, and
    what every run file records as ``cell``): the key with ``_`` for ``/``."""
    return key.replace("/", "_")


def run_key(point: RunPoint) -> str:
    """The key of a cell given in the grid's own terms (the ``na`` rules applied)."""
    return format_key(applicable(point))


def parse_key(key: str) -> dict[str, str]:
    """The parts of a key (a trailing key of a longer path is found too);
    :class:`ConfigError` naming it if it is not one. ``variant`` is "" when absent."""
    m = PATTERN.search(key)
    if not m:
        raise ConfigError(f"{key!r} is not a run key task/backbone/method/lam/n/init/seed")
    out = m.groupdict()
    out["variant"] = out["variant"] or ""
    return out


def group_points(group, seed_sets) -> list[RunPoint]:
    """The cells' coordinates of a grid ``group`` (a :class:`dfil.config.gridfile.Group`), in key
    form: every combination of its tasks, backbones, methods, lambdas, budgets, inits and
    seeds (its list, or the set of ``seed_sets`` it names)."""
    seeds = seed_sets[group.seeds] if isinstance(group.seeds, str) else group.seeds
    return [applicable(RunPoint(task, backbone, method, group.variant, lam, budget, init,
                                seed))
            for task, backbone, method, lam, budget, init, seed in itertools.product(
                group.tasks, group.backbones, group.methods, group.lambdas, group.budgets,
                group.inits, seeds)]
