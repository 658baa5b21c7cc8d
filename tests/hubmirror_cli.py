"""The command behind ``python tests/hubmirror.py``: build the mirror's repos, start the
endpoint in the background, serve it in the foreground, stop it.

``build`` writes ``<mirrors>/commits.json`` (repo -> commit) and prints it. ``start``
launches ``serve`` detached, waits until the endpoint answers, and prints ``export
HF_ENDPOINT=...`` for ``eval``; ``serve`` runs olah and the proxy until SIGTERM and keeps
``--state`` (endpoint, olah's address, its pid) while it runs, and appends every request
the proxy answers to the journal beside it; ``stop`` ends it and waits; ``counts`` reads the
journal (while the endpoint runs or after it stopped). Everything listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from hubmirror import Olah, Proxy, wait_until_answers
from hubrepos import (
    embedded_files,
    frog_dataset_files,
    frog_samples_source,
    git_repo,
    repo_path,
    tiny_model_files,
)

TINY_ID = "dfil-test/tiny-llama"
EMBEDDED_ID = "dfil-test/smollm2-135m"
FROG_ID = "dfil-test/frog-standin"


def build(args: argparse.Namespace) -> dict[str, str]:
    """Build the requested repos under ``args.mirrors``; repo id -> commit."""
    mirrors = Path(args.mirrors)
    commits: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.tiny:
            files = tiny_model_files(Path(tmp) / "tiny")
            commits[args.tiny] = git_repo(repo_path(mirrors, "model", args.tiny), files)
        if args.embedded:
            commits[args.embedded] = git_repo(repo_path(mirrors, "model", args.embedded),
                                              embedded_files(args.embedded_name))
        if args.frog:
            source = args.frog_source
            if args.frog_samples is not None:
                source = frog_samples_source(args.frog_samples, Path(tmp) / "samples")
            elif source is None:
                from dfil.data.synthetic import write_frog_like

                source = Path(tmp) / "frog"
                write_frog_like(source, seed=0, n_easy=args.n_frog, n_hard=args.n_frog)
            commits[args.frog] = git_repo(repo_path(mirrors, "dataset", args.frog),
                                          frog_dataset_files(source))
    known = mirrors / "commits.json"
    previous = json.loads(known.read_text()) if known.is_file() else {}
    known.write_text(json.dumps({**previous, **commits}, indent=2, sort_keys=True) + "\n")
    return commits


def journal_path(state: Path) -> Path:
    """The request journal of the endpoint whose state file is ``state``."""
    return state.with_name(state.stem + ".requests.jsonl")


def serve(args: argparse.Namespace) -> int:
    """Run olah and the proxy until SIGTERM/SIGINT; ``--state`` exists while they run, the
    journal (emptied at the start) stays after."""
    state = Path(args.state)
    journal = journal_path(state)
    journal.write_text("")
    olah = Olah(Path(args.mirrors), state.parent / "olah")
    proxy = Proxy(olah.start(), journal)
    proxy.gated.update(args.gate)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        endpoint = proxy.start()
        tmp = state.with_suffix(".tmp")
        tmp.write_text(json.dumps({"endpoint": endpoint, "olah": olah.url, "pid": os.getpid(),
                                   "gated": sorted(proxy.gated)}) + "\n")
        os.replace(tmp, state)
        stop.wait()
    finally:
        proxy.stop()
        olah.stop()
        state.unlink(missing_ok=True)
    return 0


def start(args: argparse.Namespace) -> int:
    """Start ``serve`` detached; print the export line once the endpoint answers."""
    state = Path(args.state)
    state.parent.mkdir(parents=True, exist_ok=True)
    state.unlink(missing_ok=True)
    cmd = [sys.executable, str(Path(__file__).with_name("hubmirror.py")), "serve",
           "--mirrors", str(args.mirrors), "--state", str(state)]
    for repo in args.gate:
        cmd += ["--gate", repo]
    with open(state.parent / "serve.log", "ab") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + args.timeout
    while not state.is_file():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"hubmirror: the endpoint did not start; see "
                             f"{state.parent / 'serve.log'}")
        time.sleep(0.2)
    endpoint = json.loads(state.read_text())["endpoint"]
    wait_until_answers(endpoint + "/", timeout=args.timeout)
    print(f"export HF_ENDPOINT={endpoint}")
    return 0


def stop(args: argparse.Namespace) -> int:
    """End the endpoint started with ``--state`` and wait until it has exited."""
    state = Path(args.state)
    if not state.is_file():
        print(f"hubmirror: {state} does not exist: no endpoint is running", file=sys.stderr)
        return 0
    pid = json.loads(state.read_text())["pid"]
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        state.unlink(missing_ok=True)
        return 0
    deadline = time.monotonic() + 30
    while state.is_file() and time.monotonic() < deadline:
        time.sleep(0.2)
    if state.is_file():
        raise SystemExit(f"hubmirror: process {pid} did not stop within 30 s")
    return 0


def counts(args: argparse.Namespace) -> int:
    """Print the requests of the journal as JSON, ``"METHOD path"`` (query dropped) -> how
    many, those answered after ``--after`` (seconds since the epoch) only if given."""
    journal = journal_path(Path(args.state))
    if not journal.is_file():
        raise SystemExit(f"hubmirror: {journal} does not exist: no endpoint was started "
                         f"with --state {args.state}")
    out: dict[str, int] = {}
    for line in journal.read_text().splitlines():
        entry = json.loads(line)
        if args.after is None or entry["time"] > args.after:
            key = f"{entry['method']} {entry['path'].split('?')[0]}"
            out[key] = out.get(key, 0) + 1
    print(json.dumps(out, indent=2, sort_keys=True))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python tests/hubmirror.py", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build the mirror's git repos")
    b.add_argument("--mirrors", type=Path, required=True)
    b.add_argument("--tiny", nargs="?", const=TINY_ID, help="tiny random Llama repo id")
    b.add_argument("--embedded", nargs="?", const=EMBEDDED_ID,
                   help="repo id for the embedded backbone's converted files")
    b.add_argument("--embedded-name", default="smollm2-135m")
    b.add_argument("--frog", nargs="?", const=FROG_ID, help="FRoG-format dataset repo id")
    b.add_argument("--frog-source", type=Path, help="easy.jsonl/hard.jsonl directory "
                   "(default: dfil's synthetic stand-in, --n-frog items per split)")
    b.add_argument("--frog-samples", type=Path, help="FRoG's repository files (the "
                   "shared samples' task=*.jsonl directory), served in the hub's layout: "
                   "easy from task=mask_quant.jsonl, hard from task=mislead.jsonl")
    b.add_argument("--n-frog", type=int, default=2044)
    for name, helptext in (("serve", "run the endpoint in the foreground"),
                           ("start", "run the endpoint in the background")):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("--mirrors", type=Path, required=True)
        s.add_argument("--state", type=Path, required=True)
        s.add_argument("--gate", action="append", default=[],
                       help="repo id answered as gated without a token (repeatable)")
        s.add_argument("--timeout", type=float, default=60.0)
    s = sub.add_parser("stop", help="stop the endpoint")
    s.add_argument("--state", type=Path, required=True)
    c = sub.add_parser("counts", help="requests the endpoint answered, by method and path")
    c.add_argument("--state", type=Path, required=True)
    c.add_argument("--after", type=float, help="only those after this time (epoch seconds)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "build":
        print(json.dumps(build(args), indent=2, sort_keys=True))
        return 0
    return {"serve": serve, "start": start, "stop": stop, "counts": counts}[args.command](args)
