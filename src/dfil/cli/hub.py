"""``dfil hub``: fetch a hub backbone or dataset at a revision into the cache (the fetch
rule's command, the one place the offline flags are lifted), or resolve a revision to its
commit (the lock step's).

A gated repo that refuses this machine is a partial failure of the workflow, not a crash:
with keep-going, the fetch rule's stamp then records the refusal and the job exits 0, so
the run goes on; each cell that reads the repo records itself as not run (gated) when its
training job finds the refusal in the cache (:mod:`dfil.hub.store`, :mod:`dfil.cli.jobs`).
"""

from __future__ import annotations

import argparse
import json
import sys


def cmd_hub(args: argparse.Namespace) -> int:
    from dfil.hub import fetch_dataset, fetch_model, resolve_revision

    if args.action == "resolve":
        print(resolve_revision(args.repo, args.revision, kind=args.kind, label=args.label))
        return 0
    from dfil.cli.jobs import recording
    from dfil.contracts.failure import REFUSED
    from dfil.hub import cache_root
    from dfil.util.atomic import atomic_write_json
    from dfil.util.errors import GatedRepo

    cache = args.cache or cache_root()
    try:
        if args.kind == "model":
            stamp = fetch_model(args.repo, args.revision, cache, label=args.label)
        else:
            configs = args.config or [None]
            stamp = fetch_dataset(args.repo, args.revision, cache, label=args.label,
                                  configs=configs)
    except GatedRepo as err:
        if not (args.stamp and recording()):
            raise
        atomic_write_json(args.stamp, {"kind": args.kind, "repo": args.repo,
                                       "revision": args.revision, "label": args.label,
                                       REFUSED: str(err)})
        print(f"dfil hub: {err}; the cells that read it are recorded as not run (gated), "
              "the run goes on", file=sys.stderr)
        return 0
    if args.stamp:
        atomic_write_json(args.stamp, stamp)
    print(json.dumps({k: stamp[k] for k in ("repo", "revision", "commit", "path")}))
    return 0


def add_hub_parser(command, sub) -> None:
    """The ``hub`` subcommand's arguments (``command`` makes a subcommand parser)."""
    p = command(sub, "hub",
                "fetch a hub backbone or dataset at a revision into the cache, once (a file "
                "lock makes concurrent fetchers wait; a stamp is written last), or resolve a "
                "revision to its commit; the hub is HF_ENDPOINT, the token HF_TOKEN or `hf "
                "auth login`", cmd_hub)
    p.add_argument("action", choices=["fetch", "resolve"])
    p.add_argument("--kind", choices=["model", "dataset"], required=True)
    p.add_argument("--repo", required=True, help="hub id, org/name")
    p.add_argument("--revision", required=True, help="branch, tag or commit")
    p.add_argument("--label", default="", help="the config's name for it, shown in errors")
    p.add_argument("--cache", help="the cache directory (fetch; default: DFIL_HUB_CACHE, else "
                   "$DFIL_CACHE/hub, else ~/.cache/dfil/hub: where jobs read it)")
    p.add_argument("--config", action="append",
                   help="dataset config to prepare (repeatable; default: the default config)")
    p.add_argument("--stamp", help="also write the stamp here (a rule's output)")
