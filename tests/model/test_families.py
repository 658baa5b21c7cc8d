"""Decoder families as a new user would try them: tiny random Qwen2, Mistral, Phi-3
(LoRA q,k,v,o on the fused qkv_proj), Gemma-2 (no SDPA: eager chosen) and GPT-NeoX (fused
query_key_value) each train and evaluate one cell through `dfil train` / `dfil
evaluate`, with the attention chosen per model and said in the log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dfil.cli import main
from dfil.config import BackboneConfig, LoraConfig
from dfil.data.synthetic import write_frog_like
from dfil.model import apply_lora, count_trainable, load_backbone

SHAPE = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
         "num_attention_heads": 4, "vocab_size": 96, "max_position_embeddings": 512,
         "pad_token_id": 0}
#: family -> (extra config, LoRA targets, attention auto picks on a CPU, LoRA modules)
FAMILIES = {
    "qwen2": ({"num_key_value_heads": 2}, ["q", "v"], "sdpa", {"q_proj", "v_proj"}),
    "mistral": ({"num_key_value_heads": 2}, ["q", "k", "v", "o"], "sdpa",
                {"q_proj", "k_proj", "v_proj", "o_proj"}),
    "phi3": ({"num_key_value_heads": 4}, ["q", "k", "v", "o"], "sdpa",
             {"qkv_proj", "o_proj"}),
    "gemma2": ({"num_key_value_heads": 2, "head_dim": 8}, ["q", "v"], "eager",
               {"q_proj", "v_proj"}),
    "gpt_neox": ({}, ["q", "k", "v", "o"], "sdpa", {"query_key_value", "dense"}),
}


def arch(family: str) -> dict:
    return {"model_type": family, **SHAPE, **FAMILIES[family][0]}


@pytest.fixture(scope="module")
def frog_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("frog")
    write_frog_like(out, seed=0, n_easy=48, n_hard=16)
    return out


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_lora_wraps_the_familys_attention_projections(family):
    model = load_backbone(BackboneConfig(name=family, arch=arch(family)))
    model = apply_lora(model, LoraConfig(r=2, alpha=4, targets=tuple(FAMILIES[family][1])))
    wrapped = {n.split(".lora_A")[0].split(".")[-1] for n, _ in model.named_parameters()
               if "lora_A" in n}
    assert wrapped == FAMILIES[family][3]
    assert count_trainable(model) > 0
    assert model.config._attn_implementation == FAMILIES[family][2]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_trains_and_evaluates_a_cell(family, tmp_path, frog_dir, capsys):
    cell = {
        "name": family,
        "model": {"method": "dfil",
                  "backbone": {"name": f"tiny-{family}", "arch": arch(family),
                               "tokenizer": "char"},
                  "lora": {"r": 2, "alpha": 4, "targets": FAMILIES[family][1]}},
        "data": {"source": str(frog_dir), "max_length": 96, "max_examples": 16,
                 "standin": True, "prompt": "compact"},
        "train": {"epochs": 1, "batch_size": 8, "seed": 1},
        "eval": {"grid_sizes": [1000], "probes": False},
    }
    path = tmp_path / "cell.yaml"
    path.write_text(yaml.safe_dump(cell))
    run = tmp_path / "run"
    assert main(["train", "--cell", str(path), "--out", str(run)]) == 0
    log = capsys.readouterr().out
    assert f"backbone attention {FAMILIES[family][2]} (auto:" in log
    assert main(["evaluate", "--run", str(run)]) == 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert set(metrics["test"]) == {"main", "mf", "ensemble", "best"}
    assert metrics["params"]["trainable"] > 0
