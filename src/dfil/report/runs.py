"""What a run's page shows: every metric a table reads from it with links to the cells it
feeds, its resolved config, training curves, test metrics, the prompts cut to
``max_length`` per split, the files it read with their sha256, and where and how long it
ran, all as values (reads a run directory; the curve drawn as inline SVG)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

from dfil.contracts import rundir
from dfil.contracts.metrics import measures, read_metrics
from dfil.util.errors import InputError

#: Training-log series drawn, and their names on the page.
CURVES = {"train_total": "training loss", "val_loss": "validation loss",
          "val_acc_main": "validation accuracy (main)", "val_acc_mf": "validation accuracy (MF)"}


@dataclass(frozen=True)
class RunPage:
    """One run's page: ``key`` (its run key), ``page`` (file name under ``runs/``)."""

    key: str
    page: str
    config: str
    config_hash: str
    provenance: dict
    test: dict
    curve_svg: str
    problem: str
    truncation: dict
    #: Every metric a table reads from the run: ``{"metric", "value", "cells"}`` with
    #: ``cells`` as :func:`dfil.report.feeds.run_feeds` gives them (hrefs from the report's
    #: root).
    fed: tuple = ()

    @property
    def truncated(self) -> str:
        """The splits where prompts were cut, in words ("" where none was)."""
        return "; ".join(f"{split}: {r['cut']} of {r['items']} cut to {r['max_length']} "
                         f"tokens (longest {r['longest']})"
                         for split, r in self.truncation.items() if r.get("cut"))


def show(value) -> str:
    """A provenance or metric value as a reader reads it: numbers to 4 significant
    digits, None as "none", booleans as yes/no, lists comma-separated; never a repr."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(show(v) for v in value) if value else "none"
    return str(value)


def flat(tree: dict, prefix: str = "") -> list[tuple[str, str]]:
    """A nested record as (dotted key, :func:`show` text) rows, in key order."""
    out = []
    for k, v in tree.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out += flat(v, f"{name}.")
        elif isinstance(v, list) and any(isinstance(x, dict) for x in v):
            for i, x in enumerate(v):
                out += flat(x, f"{name}.{i}.") if isinstance(x, dict) else [(f"{name}.{i}",
                                                                              show(x))]
        else:
            out.append((name, "none" if v == {} else show(v)))
    return out


def inputs_rows(provenance: dict) -> list[dict]:
    """The files a run read, one entry per input (``model``, ``data.source``, ...):
    ``name``, ``what`` (repo@commit, id or path), ``stamp`` (where the digests were
    copied from), ``note`` and ``files`` ((file, sha256) pairs, sources' last)."""
    inputs = provenance.get("inputs") or {}
    found = [("model", inputs.get("model") or {})] + [
        (f"data.{k}", v) for k, v in (inputs.get("data") or {}).items()]
    out = []
    for name, x in found:
        what = (f"{x['repo']}@{x.get('commit', '?')}" if "repo" in x
                else str(x.get("id") or x.get("path") or "?"))
        if x.get("id") and x.get("path"):
            what += f" ({x['path']})"
        files = [(f, d) for f, d in (x.get("sha256") or {}).items()]
        files += [(f"source: {f}", d) for f, d in (x.get("source_sha256") or {}).items()]
        out.append({"name": name, "what": what, "stamp": x.get("stamp", ""),
                    "note": x.get("note", "") if files or x.get("note") else
                    "no sha256 recorded (a run evaluated before inputs were digested)",
                    "files": files})
    return out


def fed_metrics(metrics: dict, feeds: dict[str, list]) -> tuple:
    """``feeds`` (metric -> cells) with each metric's value in ``metrics`` (shown), or
    "not in metrics.json" where the run lacks it."""
    values = dict(measures(metrics)) if metrics else {}
    return tuple({"metric": m, "value": show(values[m]) if m in values
                  else "not in metrics.json", "cells": cells} for m, cells in feeds.items())


def page_name(key: str) -> str:
    """The run page's file name: the key with ``/`` as ``__``."""
    return key.replace("/", "__") + ".html"


def _flat_test(metrics: dict) -> dict:
    out = {}
    for path, block in (metrics.get("test") or {}).items():
        if isinstance(block, dict):
            for k, v in block.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    out[f"{path}.{k}"] = v
    return out


def curve_svg(log: Path) -> str:
    """The training log's losses and accuracies by epoch as an SVG (empty without a log)."""
    if not log.is_file():
        return ""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    fig, (loss, acc) = plt.subplots(1, 2, figsize=(8, 2.8))
    for name, label in CURVES.items():
        points = [(r["epoch"], r[name]) for r in records if name in r]
        ax = acc if "acc" in name else loss
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", label=label)
    for ax, y in ((loss, "loss"), (acc, "accuracy")):
        ax.set_xlabel("epoch")
        ax.set_ylabel(y)
        ax.legend(fontsize=7)
    fig.tight_layout()
    out = io.StringIO()
    fig.savefig(out, format="svg")
    plt.close(fig)
    text = out.getvalue()
    return text[text.index("<svg"):]


def run_page(runs: Path, key: str, feeds: dict[str, list] | None = None) -> RunPage:
    """The page of run ``key`` under ``runs``; a run without a readable metrics file
    gets a page saying so (``problem``). ``feeds``: metric -> the table cells it feeds."""
    d = Path(runs) / key
    config = (d / rundir.CELL).read_text() if (d / rundir.CELL).is_file() else ""
    try:
        metrics, problem = read_metrics(d / rundir.METRICS), ""
    except (InputError, OSError) as err:
        metrics, problem = {}, f"{d / rundir.METRICS}: {err}"
    return RunPage(key, page_name(key), config, str(metrics.get("config_hash", "")),
                   dict(metrics.get("provenance") or {}), _flat_test(metrics),
                   curve_svg(d / rundir.LOG), problem, dict(metrics.get("truncation") or {}),
                   fed_metrics(metrics, feeds or {}))


def cut(pages: dict[str, RunPage]) -> dict[str, tuple[str, str]]:
    """The runs of ``pages`` where prompts were cut: key -> (page, what was cut)."""
    return {p.key: (p.page, p.truncated) for p in pages.values() if p.truncated}
