"""The ``dfil`` command line: the only module that parses arguments and touches paths.

Each subcommand is a thin call into the library; Snakemake rules call these.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dfil import __version__


def cmd_probes(args: argparse.Namespace) -> int:
    from dfil.data.probes import ProbeConfig, write_probes

    manifest = write_probes(args.out, ProbeConfig(seed=args.seed))
    print(json.dumps(manifest, indent=2, sort_keys=True))
    return 0


def cmd_synth_frog(args: argparse.Namespace) -> int:
    from dfil.data.synthetic import write_frog_like

    digests = write_frog_like(args.out, seed=args.seed, n_easy=args.n_easy, n_hard=args.n_hard)
    print(json.dumps(digests, indent=2, sort_keys=True))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dfil", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"dfil {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("probes", help="generate the paper's probe sets (JSONL + manifest)")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=cmd_probes)

    p = sub.add_parser("synth-frog",
                       help="write the synthetic FRoG-format stand-in (easy/hard JSONL)")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-easy", type=int, default=2044, help="easy items (train + val)")
    p.add_argument("--n-hard", type=int, default=2044, help="hard (test) items")
    p.set_defaults(run=cmd_synth_frog)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except (ValueError, OSError) as err:
        print(f"dfil {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
