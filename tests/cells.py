"""Tiny cells for end-to-end tests in a child process: the cell file, the `dfil` command,
an interrupted training run, and metrics without what differs between processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

from tinymodel import TINY_LLAMA


def tiny_cell(tmp: Path, frog: Path, name: str = "cell", probes: bool = False,
              **train) -> Path:
    """A dfil cell on the tiny random Llama and FRoG-like data in ``frog``."""
    cell = {
        "name": name,
        "model": {"method": "dfil",
                  "backbone": {"name": "tiny-llama",
                               "arch": dict(TINY_LLAMA, max_position_embeddings=512),
                               "tokenizer": "char"},
                  "lora": {"r": 4, "alpha": 8}},
        "data": {"source": str(frog), "max_length": 128, "standin": True},
        "train": {"epochs": 3, "batch_size": 8, "seed": 123, **train},
        "eval": {"grid_sizes": [1000], "probes": probes},
    }
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cell))
    return path


def run_cli(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    """``dfil *args`` in a child process, with ``env`` added to the environment."""
    return subprocess.run([sys.executable, "-m", "dfil.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "DFIL_PROGRESS": "0", **(env or {})})


def interrupted(cell: Path, out: Path, sig: str, at_step: int, *extra: str,
                env: dict | None = None) -> subprocess.CompletedProcess:
    """`dfil train` (with ``extra`` arguments, ``env`` added to the environment) in a
    child that sends itself ``sig`` just before training step ``at_step`` (counted over
    the steps' loss computations)."""
    script = textwrap.dedent(f"""
        import os, signal, sys
        import dfil.train.step as t
        real, calls = t.compute_loss, [0]
        def counting(*a, **k):
            calls[0] += 1
            if calls[0] == {at_step}:
                os.kill(os.getpid(), signal.{sig})
            return real(*a, **k)
        t.compute_loss = counting
        from dfil.cli import main
        sys.exit(main(["train", "--cell", {str(cell)!r}, "--out", {str(out)!r},
                       *{list(extra)!r}]))
    """)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "DFIL_PROGRESS": "0", **(env or {})})


def stable(metrics: dict) -> dict:
    """metrics.json without what legitimately differs between processes."""
    out = dict(metrics)
    out.pop("provenance")
    out.pop("digest", None)  # of the whole record, provenance included
    train = dict(out.pop("train"))
    train.pop("provenance")
    train["attempts"] = [{k: v for k, v in a.items()
                          if k not in ("train_seconds_this_process", "resumes")}
                         for a in train["attempts"]]
    out["train"] = train
    return out
