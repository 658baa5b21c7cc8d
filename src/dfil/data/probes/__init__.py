"""The paper's own probe sets, generated from a seed (Sec. 5.2-5.3, App. F.2-F.6).

:func:`write_probes` writes each set as JSONL plus ``manifest.json`` with counts and
sha256 digests; the same seed gives byte-identical files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dfil.data.io import read_records, write_jsonl
from dfil.data.probes.compositional import EXCLUDED_PAIRS, TRIPLES, compositional_records
from dfil.data.probes.csmc import csmc_records
from dfil.data.probes.entailment import entailment_records
from dfil.data.probes.ipr import ipr_records
from dfil.data.probes.naturalistic import naturalistic_records
from dfil.util.atomic import atomic_write_json
from dfil.util.errors import DataError

PROBE_SETS = ("compositional", "csmc", "ipr", "entailment", "naturalistic")


@dataclass(frozen=True)
class ProbeConfig:
    """Generation knobs (notes R-comp-pairs, R-comp-triples, R-comp-base, R-csmc)."""

    seed: int = 0
    comp_per_combo: int = 50
    comp_excluded_pairs: tuple[tuple[str, str], ...] = EXCLUDED_PAIRS
    comp_triples: tuple[tuple[str, str, str], ...] = TRIPLES
    comp_base_in_cell: bool = True
    csmc_per_domain: int = 20
    csmc_min_gap: float = 0.1
    naturalistic_per_domain: int = 40


def generate_probes(config: ProbeConfig = ProbeConfig()) -> dict[str, list[dict]]:
    """All five probe sets as lists of records; each set has its own derived seed."""
    s = config.seed * 10
    return {
        "compositional": compositional_records(
            s + 1, config.comp_per_combo, config.comp_excluded_pairs, config.comp_triples,
            base_in_cell=config.comp_base_in_cell),
        "csmc": csmc_records(s + 2, config.csmc_per_domain, config.csmc_min_gap),
        "ipr": ipr_records(s + 3),
        "entailment": entailment_records(s + 4),
        "naturalistic": naturalistic_records(s + 5, config.naturalistic_per_domain),
    }


def write_probes(out_dir: str | Path, config: ProbeConfig = ProbeConfig()) -> dict:
    """Write ``{name}.jsonl`` for every set and ``manifest.json``; returns the manifest."""
    out = Path(out_dir)
    manifest = {}
    for name, records in generate_probes(config).items():
        manifest[name] = {"count": len(records), "sha256": write_jsonl(out / f"{name}.jsonl",
                                                                       records)}
    atomic_write_json(out / "manifest.json", manifest)
    return manifest


def read_probes(root: str | Path) -> dict[str, list[dict]]:
    """The probe sets written by :func:`write_probes` to ``root``; :class:`DataError`
    naming the file and lines of an id given twice in one set."""
    sets = {}
    for name in PROBE_SETS:
        path = Path(root) / f"{name}.jsonl"
        seen: dict = {}
        rows = []
        for line, record in read_records(path):
            rid = record.get("id")
            if rid in seen:
                raise DataError(f"{path}:{line}: id {rid!r} is already used at line "
                                f"{seen[rid]}; an id must name one record")
            seen[rid] = line
            rows.append(record)
        sets[name] = rows
    return sets
