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
from dfil.config.cell import BackboneConfig, LoraConfig
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


#: Families mapped but not trained end to end here: config, LoRA modules for q,k,v,o.
MAPPED = {
    "gemma": ({**SHAPE, "num_key_value_heads": 2, "head_dim": 8},
              {"q_proj", "k_proj", "v_proj", "o_proj"}),
    "falcon": ({"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                "vocab_size": 96}, {"query_key_value", "dense"}),
    "bloom": ({"hidden_size": 32, "n_layer": 2, "n_head": 4, "vocab_size": 96},
              {"query_key_value", "dense"}),
    "gpt2": ({"n_embd": 32, "n_layer": 2, "n_head": 4, "vocab_size": 96, "n_positions": 512},
             {"c_attn", "c_proj"}),
    "phi": ({**SHAPE}, {"q_proj", "k_proj", "v_proj", "dense"}),
    "opt": ({"hidden_size": 32, "ffn_dim": 64, "num_hidden_layers": 2,
             "num_attention_heads": 4, "vocab_size": 96, "word_embed_proj_dim": 32,
             "max_position_embeddings": 512}, {"q_proj", "k_proj", "v_proj", "out_proj"}),
    "gptj": ({"n_embd": 32, "n_layer": 2, "n_head": 4, "vocab_size": 96, "rotary_dim": 4,
              "n_positions": 512}, {"q_proj", "k_proj", "v_proj", "out_proj"}),
}


@pytest.mark.parametrize("family", sorted(MAPPED))
def test_mapped_family_wraps_attention_only_and_runs(family):
    import torch

    config, expected = MAPPED[family]
    model = load_backbone(BackboneConfig(name=family, arch={"model_type": family, **config}))
    model = apply_lora(model, LoraConfig(r=2, alpha=4, targets=("q", "k", "v", "o")))
    wrapped = {n.split(".lora_A")[0] for n, _ in model.named_parameters() if "lora_A" in n}
    assert {w.split(".")[-1] for w in wrapped} == expected
    assert not any("mlp" in w for w in wrapped)  # GPT-2's mlp.c_proj is left alone
    out = model(input_ids=torch.randint(3, 96, (2, 5))).last_hidden_state
    out.float().sum().backward()
    assert all(p.grad is not None for n, p in model.named_parameters() if "lora_B" in n)
