"""A LoRA run's adapter in peft's format (dfil.model.adapter): the checkpoint's LoRA tensors
under peft's names, written by training into ``<run>/adapter``, which
``peft.PeftModel.from_pretrained`` loads onto the backbone to compute what the run's own
model computes. Tiny random Llama, FRoG-like data, CPU."""

from __future__ import annotations

import json

import pytest
import torch
import yaml
from safetensors.torch import load_file

from cells import tiny_cell
from dfil.contracts.rundir import ADAPTER_WEIGHTS as WEIGHTS
from dfil.data.synthetic import write_frog_like
from dfil.engine.checkpoint import load_model, read_checkpoint
from dfil.model.adapter import adapter_state, save_adapter
from dfil.model.backbone import load_backbone
from dfil.train.driver import train_cell


def test_adapter_state_renames_the_lora_tensors_and_leaves_the_heads_out():
    a, b, head = torch.ones(2, 3), torch.zeros(3, 2), torch.ones(1)
    state = {"backbone.base_model.model.layers.0.self_attn.q_proj.lora_A.default.weight": a,
             "backbone.base_model.model.layers.0.self_attn.q_proj.lora_B.default.weight": b,
             "heads.main.weight": head}
    assert adapter_state(state) == {
        "base_model.model.layers.0.self_attn.q_proj.lora_A.weight": a,
        "base_model.model.layers.0.self_attn.q_proj.lora_B.weight": b}


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("adapter")
    frog = tmp / "frog"
    write_frog_like(frog, seed=0, n_easy=24, n_hard=8)
    run = tmp / "run"
    train_cell(tiny_cell(tmp, frog, epochs=1), run, log=lambda _: None)
    return run


def test_a_lora_run_writes_its_best_checkpoints_lora_in_peft_format(lora_run):
    from peft import PeftModel

    config, state, _ = read_checkpoint(lora_run / "model.safetensors")
    saved = load_file(str(lora_run / "adapter" / WEIGHTS))
    assert saved.keys() == adapter_state(state).keys() and len(saved) == 8  # 2 layers, q v
    assert all(torch.equal(saved[k], t) for k, t in adapter_state(state).items())
    adapter_config = json.loads((lora_run / "adapter" / "adapter_config.json").read_text())
    assert (adapter_config["r"], adapter_config["lora_alpha"]) == (4, 8)
    assert adapter_config["base_model_name_or_path"] == "tiny-llama"

    peft_model = PeftModel.from_pretrained(load_backbone(config.backbone),
                                           lora_run / "adapter").eval()
    model, _ = load_model(lora_run / "model.safetensors")
    ids = torch.randint(3, 100, (2, 9))
    with torch.no_grad():
        want = model.eval().backbone(input_ids=ids, use_cache=False).last_hidden_state
        got = peft_model(input_ids=ids, use_cache=False).last_hidden_state
    assert torch.equal(got, want)


def test_a_frozen_backbones_run_has_no_adapter(tmp_path):
    frog = tmp_path / "frog"
    write_frog_like(frog, seed=0, n_easy=24, n_hard=8)
    cell = tiny_cell(tmp_path, frog, epochs=1)
    spec = yaml.safe_load(cell.read_text())
    spec["model"].update(adapter="none", heads={"feature_norm": "standardize"})
    spec["model"].pop("lora")
    cell.write_text(yaml.safe_dump(spec))
    train_cell(cell, tmp_path / "run", log=lambda _: None)
    assert not (tmp_path / "run" / "adapter").exists()
    config, state, _ = read_checkpoint(tmp_path / "run" / "model.safetensors")
    with pytest.raises(ValueError, match="holds no LoRA weights"):
        save_adapter(state, config, tmp_path / "adapter")
    assert not (tmp_path / "adapter").exists()
