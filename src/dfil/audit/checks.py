"""The paper audit's checks: loaded from one YAML file, validated, evaluated (pure but
for reading that file and the schema shipped in the package).

A check recomputes one printed number (a p-value, a mean ± sd, a Δ, a count, a claim in
a caption) from other numbers the paper prints, under a stated ``assumption``; its
``alternatives`` are other readings, each overriding some inputs. The verdict:

- ``consistent``: the printed value is reachable under the primary reading;
- ``consistent only under: <assumption>``: it is not, but it is under an alternative;
- ``inconsistent``: it is reachable under no reading the paper allows;
- ``not recomputable``: the paper does not print what the test needs.

Every reading records the sentence of the paper it contradicts (``contradicts``: a quote
and where it is), or ``none``; a reading that contradicts the paper's own captions or
text is ruled out and never makes a check consistent, so a value reachable only under
such a reading is *inconsistent*, and the verdict names the sentence. Each finding
gets a severity (:mod:`dfil.audit.severity`) from its verdict and declared ``stakes``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jsonschema
import yaml

from dfil.audit import claims, kinds, severity
from dfil.audit.kinds import Finding
from dfil.audit.printed import printed as parse_printed
from dfil.util.errors import ConfigError

#: The evaluator of each check kind.
KINDS: dict[str, Callable[[dict, str], Finding]] = {
    "ttest": kinds.ttest, "paired_dz": kinds.paired_dz, "paired_t": kinds.paired_t,
    "wilcoxon_signs": kinds.wilcoxon_signs, "binomial": kinds.binomial,
    "describe": kinds.describe, "arithmetic": claims.arithmetic, "range": claims.range_claim,
    "count": claims.count, "argmax": claims.argmax, "integer_counts": claims.integer_counts,
    "nearest_center": claims.nearest,
}

VERDICT_CLASSES = ("consistent", "conditional", "inconsistent", "not-recomputable")


@dataclass(frozen=True)
class Contradiction:
    """A sentence of the paper a reading contradicts: ``quote``, verbatim, and
    ``where`` (section or table caption, with the source line)."""

    quote: str
    where: str

    def __str__(self) -> str:
        return f"{self.where}: \u201c{self.quote}\u201d"


@dataclass(frozen=True)
class Reading:
    """One reading of a check; ``contradicts`` is None when it contradicts no sentence
    of the paper."""

    assumption: str
    finding: Finding
    contradicts: Contradiction | None = None

    @property
    def allowed(self) -> bool:
        return self.contradicts is None


@dataclass(frozen=True)
class Outcome:
    """One evaluated check: its transcription, every reading's finding and the verdict."""

    id: str
    table: str
    location: str
    cell: str
    printed: str
    kind: str
    verdict: str
    verdict_class: str
    primary: Reading
    alternatives: tuple[Reading, ...] = ()
    inventory: tuple[int, ...] = ()
    note: str = ""
    stakes: str = "result"
    severity: str | None = None


def schema() -> dict:
    """The JSON Schema of the checks file (``dfil/audit/schema.json``)."""
    return json.loads((resources.files("dfil.audit") / "schema.json").read_text("utf-8"))


def validate(doc: dict) -> list[dict]:
    """The checks of a parsed checks file; ``ConfigError`` naming the first violation of
    the schema (for alternatives: of their inputs merged over the check's), or a
    repeated id."""
    sch = schema()
    validator = jsonschema.Draft202012Validator(sch)
    err = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if err is not None:
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ConfigError(f"{where}: {err.message}")
    seen = set()
    one_check = jsonschema.Draft202012Validator({**sch["$defs"]["check"], "$defs": sch["$defs"]})
    for check in doc["checks"]:
        if check["id"] in seen:
            raise ConfigError(f"id {check['id']!r} appears twice")
        seen.add(check["id"])
        for i, alt in enumerate(check.get("alternatives", [])):
            merged = {**check, "inputs": _merge(check["inputs"], alt["inputs"])}
            err = jsonschema.exceptions.best_match(one_check.iter_errors(merged))
            if err is not None:
                raise ConfigError(f"check {check['id']}: alternative {i + 1} "
                                 f"({alt['assumption']!r}): {err.message}")
    return doc["checks"]


def read_checks_file(path: str | Path) -> dict:
    """A YAML checks file, validated (``version``, ``source``, ``checks``)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it
    try:
        with open(path, encoding="utf-8") as fh:
            doc = yaml.load(fh, Loader=loader)  # a safe loader either way
    except OSError as err:
        raise ConfigError(f"{path}: cannot read ({err})") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: invalid YAML ({err})") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: expected a mapping with 'checks', got {type(doc).__name__}")
    try:
        validate(doc)
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None
    return doc


def load_checks(path: str | Path) -> list[dict]:
    """The validated checks of a YAML checks file."""
    return read_checks_file(path)["checks"]


def _merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    out.update(copy.deepcopy(override))
    return out


def evaluate_check(check: dict) -> Outcome:
    """Every reading of one check, and its verdict; errors name the check."""
    fn = KINDS[check["kind"]]
    try:
        primary = Reading(check["assumption"], fn(check["inputs"], check["printed"]),
                          contradiction(check["contradicts"]))
        alts = tuple(Reading(a["assumption"], fn(_merge(check["inputs"], a["inputs"]),
                                                 check["printed"]),
                             contradiction(a["contradicts"]))
                     for a in check.get("alternatives", []))
    except (ValueError, KeyError, TypeError) as err:
        raise ConfigError(f"check {check['id']}: {err}") from err
    verdict, cls = verdict_of(primary, alts)
    stakes = check.get("stakes", "result")
    flipped = severity.flips(check["kind"], printed_value(check), primary.finding.point)
    return Outcome(check["id"], check["table"], check["location"], check["cell"],
                   check["printed"], check["kind"], verdict, cls, primary, alts,
                   tuple(check.get("inventory", ())), check.get("note", ""), stakes,
                   severity.severity(cls, stakes, flipped))


def contradiction(value: str | dict) -> Contradiction | None:
    """A check's ``contradicts`` entry: ``"none"`` -> None, else its quote and place."""
    return None if value == "none" else Contradiction(value["quote"], value["where"])


def printed_value(check: dict) -> float | None:
    """The number a check's printed text (or ``inputs.claimed``) states; None when it is
    words or a range."""
    try:
        return parse_printed(check["inputs"].get("claimed", check["printed"])).value
    except (ValueError, TypeError):
        return None


def verdict_of(primary: Reading, alternatives: tuple[Reading, ...]) -> tuple[str, str]:
    """(verdict text, verdict class) from the readings' findings, primary first; a
    reading that contradicts the paper never makes a check consistent."""
    if primary.finding.ok is None:
        return "not recomputable", "not-recomputable"
    if primary.finding.ok and primary.allowed:
        return "consistent", "consistent"
    for alt in alternatives:
        if alt.finding.ok and alt.allowed:
            return f"consistent only under: {alt.assumption}", "conditional"
    ruled_out = [r for r in (primary, *alternatives) if r.finding.ok]
    if ruled_out:
        r = ruled_out[0]
        return (f"inconsistent: reachable only under \u201c{r.assumption}\u201d, which the "
                f"paper rules out ({r.contradicts})", "inconsistent")
    return "inconsistent", "inconsistent"


def evaluate_all(checks: list[dict]) -> list[Outcome]:
    return [evaluate_check(c) for c in checks]


def summary(outcomes: list[Outcome]) -> dict[str, int]:
    """Counts per verdict class, in :data:`VERDICT_CLASSES` order, plus ``total``."""
    counts = {c: 0 for c in VERDICT_CLASSES}
    for o in outcomes:
        counts[o.verdict_class] += 1
    return {**counts, "total": len(outcomes)}


def findings(outcomes: list[Outcome]) -> list[Outcome]:
    """The checks with a severity, most severe first (the checks file's order within a
    level)."""
    return severity.ranked(outcomes, lambda o: o.severity)


def severity_counts(outcomes: list[Outcome]) -> dict[str, int]:
    """Findings per severity level, most severe first."""
    return severity.counts(o.severity for o in outcomes)
