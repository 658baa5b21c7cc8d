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

import re

from dfil.methods import METHODS, method_spec

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


def applicable(method: str, lam, init: str, seed) -> tuple[str, str, str]:
    """lambda, init and seed as written in a key, ``na`` where they do not apply."""
    spec = method_spec(method)
    lam_s = "na" if method in _NO_MF else fmt_lambda(
        spec.lambda_dfil if spec.lambda_dfil is not None else lam)
    return (lam_s, "na" if method in _NO_MF else str(init),
            "na" if not spec.trains else str(seed))


def format_key(task: str, backbone: str, method: str, variant: str, lam: str, budget,
               init: str, seed: str) -> str:
    """The key of parts already in key form (see :func:`applicable`)."""
    m = method + (f"+{variant}" if variant else "")
    return f"{task}/{backbone}/{m}/lam{lam}/n{budget}/{init}/seed{seed}"


def run_key(task: str, backbone: str, method: str, variant: str, lam, budget, init: str,
            seed) -> str:
    """The key of a cell given in the grid's own terms (the ``na`` rules applied)."""
    lam_s, init_s, seed_s = applicable(method, lam, init, seed)
    return format_key(task, backbone, method, variant, lam_s, budget, init_s, seed_s)


def parse_key(key: str) -> dict[str, str]:
    """The parts of a key (a trailing key of a longer path is found too);
    ``ValueError`` naming it if it is not one. ``variant`` is "" when absent."""
    m = PATTERN.search(key)
    if not m:
        raise ValueError(f"{key!r} is not a run key task/backbone/method/lam/n/init/seed")
    out = m.groupdict()
    out["variant"] = out["variant"] or ""
    return out
