"""A grid cell's resolved config (the dict of its ``cell.yaml``) as the projection's input.

The only module here that knows the config's layout: split sizes per task, which sets an
evaluation scores (FRoG cells that train: the probe sets and QuRe too). The backbone's
architecture is given by the caller, with its source (``dfil.cli.archs``: the grid's
``arch:``, the fetched config.json, or the offline catalogue when asked).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from dfil.core.methods import method_spec
from dfil.cost.project import CellWork
from dfil.cost.rates import (
    DEFAULT_TOKENIZER_FACTOR,
    POOL_TEST,
    PROBE_ITEMS,
    PROMPTS,
    QURE_ITEMS,
    TOKENIZER_FACTOR,
    TRAIN_ROWS,
)
from dfil.util.errors import ConfigError

#: Tasks without a row in rates.PROMPTS read their prompts like this one's.
PROMPT_LIKE = {"ordinal_standin": "sst5"}


def splits(task: str, budget: int | None) -> dict[str, int]:
    """train (per epoch), val and test examples of ``task``: the pool's 80/20 cut, a few-shot
    budget in place of the train part."""
    if task not in POOL_TEST:
        raise ConfigError(f"task {task!r}: no split sizes known to the cost model (known: "
                          f"{sorted(POOL_TEST)})")
    pool, test = POOL_TEST[task]
    train = TRAIN_ROWS.get(task, round(0.8 * pool))
    return {"train": budget or train, "val": pool - train, "test": test}


def cell_work(key: str, size: str, config: Mapping, arch: Mapping) -> CellWork:
    """The projection's input for the cell ``key`` of size class ``size``, whose backbone
    has the architecture ``arch`` (a transformers config dict)."""
    data, model, train = config["data"], config["model"], config["train"]
    name = model["backbone"].get("name", "")
    factor = TOKENIZER_FACTOR.get(name, DEFAULT_TOKENIZER_FACTOR)
    task = data["task"]
    examples = splits(task, data.get("budget"))
    if data.get("max_examples"):
        examples = {k: min(v, data["max_examples"]) for k, v in examples.items()}
    trains = method_spec(model["method"]).trains
    if task == "frog" and trains:
        ev = config["eval"]
        if ev.get("probes", True):
            stride = ev.get("probe_stride", 1)
            examples.update({k: math.ceil(v / stride) for k, v in PROBE_ITEMS.items()})
        if ev.get("qure", True) and data.get("qure_source"):
            examples["qure"] = QURE_ITEMS
    cap = data.get("max_length", 256)
    own = PROMPTS[PROMPT_LIKE.get(task, task)]
    tokens = {k: min(cap, factor * (PROMPTS[k].mean if k in PROMPTS else own.mean))
              for k in examples}
    lora = model.get("lora", {})
    frozen = model.get("adapter", "lora") == "none"
    return CellWork(
        key=key, size=size, arch=dict(arch), examples=examples, prompt_tokens=tokens,
        longest=min(cap, math.ceil(factor * own.longest)),
        epochs=train["epochs"] if trains else 0, batch_size=train["batch_size"],
        lora_targets=() if frozen else tuple(lora.get("targets", ("q", "v"))),
        lora_r=lora.get("r", 16), quantized=model["backbone"].get("quantized", False),
        checkpointing=model["backbone"].get("gradient_checkpointing", False),
        options=0 if trains else model.get("num_classes", 8))
