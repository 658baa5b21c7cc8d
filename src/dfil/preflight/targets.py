"""Targets on the command line: those the grid does not make, said in one line each before
Snakemake's own ``MissingRuleException`` (pure Python).

A run file asked for by path (``results/<grid>/runs/<key>/metrics.json``) whose key is
not a cell of the loaded grid, or that names another grid, and a file below
``paper_tables/<grid>/`` that no rule writes, would otherwise meet only Snakemake's
"No rule to produce" with its rule list.

Whether a command line builds a named target (:func:`asks_for`): the report's one line
when tables.pdf is left out.

A command line whose only target is ``preflight`` (:func:`preflight_profiles`) checks the
site and the hub before a real run: it loads a grid whose branches are not locked yet
(that is one of the problems it reports) and hands its profiles to ``dfil grid preflight``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from dfil.util.errors import did_you_mean

#: Parts of a run key (``dfil.config.runkey``): task/backbone/method/lam/n/init/seed.
KEY_PARTS = 7


def target_notes(argv: list[str], grid_name: str, cells: Iterable[str], outputs: Iterable[str],
                 config_files: Iterable[str]) -> list[str]:
    """One line per target in ``argv`` that the grid ``grid_name`` (read from
    ``config_files``) does not make: a run key not in ``cells``, another grid's run or
    table, or a file below ``paper_tables/<grid>/`` not among ``outputs``."""
    cells, outputs = set(cells), set(outputs)
    files = ", ".join(map(str, config_files)) or "the default config"
    listing = f"`dfil grid list --config {' '.join(map(str, config_files))}` lists them"
    notes = []
    for arg in argv[1:]:
        parts = PurePosixPath(arg).parts
        if arg.startswith("-") or len(parts) < 3 or parts[0] not in ("results", "paper_tables"):
            continue
        if parts[1] != grid_name:
            notes.append(f"dfil: target {arg}: the loaded grid is {grid_name!r} ({files}), not "
                         f"{parts[1]!r}; give that grid's file with --configfile")
        elif parts[0] == "results" and parts[2] == "runs" and len(parts) > 3 + KEY_PARTS - 1:
            key = "/".join(parts[3:3 + KEY_PARTS])
            if key not in cells:
                hint = did_you_mean(key, sorted(cells), cutoff=0.8)
                notes.append(f"dfil: target {arg}: cell {key} is not in the grid {grid_name!r} "
                             f"({files}; {len(cells)} cells); {hint}{listing}")
        elif parts[0] == "paper_tables" and arg not in outputs:
            notes.append(f"dfil: target {arg}: no rule writes it for grid {grid_name!r}; the "
                         f"tables and reports are {', '.join(sorted(_names(outputs)))}")
    return notes


def _names(outputs: set[str]) -> set[str]:
    return {str(PurePosixPath(p).relative_to(*PurePosixPath(p).parts[:2]))
            for p in outputs if p.startswith("paper_tables/")}


#: The workflow's target that checks the site before the real run (``dfil grid preflight``).
PREFLIGHT = "preflight"


def preflight_profiles(argv: list[str]) -> list[str] | None:
    """The profile files (Snakemake's ``--profile``s, or ``$SNAKEMAKE_PROFILE``, resolved as
    Snakemake resolves them) of a Snakemake command line ``argv`` whose only target is
    ``preflight`` and that runs it (no dry run); None for any other command line."""
    if PREFLIGHT not in argv[1:]:  # no need to parse every other command line
        return None
    from snakemake.cli import get_profile_dir

    args = _parsed(argv)
    if list(args.targets) != [PREFLIGHT] or args.dryrun:
        return None
    found = [get_profile_dir(str(p)) for p in args.profile or []]
    return [str(f[1]) for f in found if f]


def asks_for(argv: list[str], names: Iterable[str], default: str) -> bool:
    """Whether the Snakemake command line ``argv`` builds one of the named targets
    ``names`` (no target at all builds ``default``); True where ``argv`` is not a
    Snakemake command line (the Snakefile loaded through the API, under pytest)."""
    try:
        targets = list(_parsed(argv).targets) or [default]
    except SystemExit:  # argparse's way of refusing a command line
        return True
    return bool(set(targets) & set(names))


def _parsed(argv: list[str]):
    from snakemake.cli import get_argument_parser

    return get_argument_parser().parse_args(argv[1:])
