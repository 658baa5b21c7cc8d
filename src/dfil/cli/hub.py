"""``dfil hub``: fetch a hub backbone or dataset at a revision into the cache (the fetch
rule's command, the one place the offline flags are lifted), or resolve a revision to its
commit (the lock step's)."""

from __future__ import annotations

import argparse
import json


def cmd_hub(args: argparse.Namespace) -> int:
    from dfil.hub import fetch_dataset, fetch_model, resolve_revision

    if args.action == "resolve":
        print(resolve_revision(args.repo, args.revision, kind=args.kind, label=args.label))
        return 0
    from dfil.hub import cache_root

    cache = args.cache or cache_root()
    if args.kind == "model":
        stamp = fetch_model(args.repo, args.revision, cache, label=args.label)
    else:
        configs = args.config or [None]
        stamp = fetch_dataset(args.repo, args.revision, cache, label=args.label,
                              configs=configs)
    if args.stamp:
        from dfil.atomic import atomic_write_json

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
