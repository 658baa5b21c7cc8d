"""What a run's page shows: its resolved config, training curves, test metrics, the
prompts cut to ``max_length`` per split, and where and how long it ran (reads a run
directory; the curve drawn as inline SVG)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

from dfil.contracts import rundir
from dfil.contracts.metrics import read_metrics
from dfil.errors import InputError

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

    @property
    def truncated(self) -> str:
        """The splits where prompts were cut, in words ("" where none was)."""
        return "; ".join(f"{split}: {r['cut']} of {r['items']} cut to {r['max_length']} "
                         f"tokens (longest {r['longest']})"
                         for split, r in self.truncation.items() if r.get("cut"))


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


def run_page(runs: Path, key: str) -> RunPage:
    """The page of run ``key`` under ``runs``; a run without a readable metrics file
    gets a page saying so (``problem``)."""
    d = Path(runs) / key
    config = (d / rundir.CELL).read_text() if (d / rundir.CELL).is_file() else ""
    try:
        metrics, problem = read_metrics(d / rundir.METRICS), ""
    except (InputError, OSError) as err:
        metrics, problem = {}, f"{d / rundir.METRICS}: {err}"
    return RunPage(key, page_name(key), config, str(metrics.get("config_hash", "")),
                   dict(metrics.get("provenance") or {}), _flat_test(metrics),
                   curve_svg(d / rundir.LOG), problem, dict(metrics.get("truncation") or {}))


def cut(pages: dict[str, RunPage]) -> dict[str, tuple[str, str]]:
    """The runs of ``pages`` where prompts were cut: key -> (page, what was cut)."""
    return {p.key: (p.page, p.truncated) for p in pages.values() if p.truncated}
