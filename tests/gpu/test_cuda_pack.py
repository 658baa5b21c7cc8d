"""On CUDA (``pytest -m gpu``; skipped without a GPU): a pack's step reads nothing back
from the device after its first step, and a 4-bit pack (bitsandbytes NF4) trains each
seed's LoRA, which peft loads back."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dfil.config.cell import BackboneConfig, LoraConfig, LossConfig, ModelConfig
from dfil.engine.batching import Encoded
from dfil.engine.loader import Loader
from dfil.model.adapter import save_adapter
from dfil.model.losses import inverse_frequency_weights
from dfil.model.pack import build_pack
from dfil.train.pack import PackSetup, pack_step
from dfil.train.step import make_optimizer
from tinymodel import TINY_LLAMA, tiny_config

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]

SEEDS, B = (3, 5, 7), 4


def steps(config: ModelConfig, n: int = 3, watch_sync: bool = True):
    """``n`` pack steps of SEEDS on CUDA (``watch_sync``: any host sync after the first
    fails); the pack and its last step's loss terms."""
    pack = build_pack(config, SEEDS)
    (pack.heads if config.backbone.quantized else pack).to("cuda")  # 4-bit: placed on load
    rng = np.random.default_rng(0)
    rows = B * len(SEEDS) * n
    enc = Encoded(ids=tuple(tuple(int(t) for t in rng.integers(1, 96, k))
                            for k in rng.integers(2, 30, rows)),
                  labels=rng.integers(0, 8, rows), p=rng.random(rows).astype(np.float32))
    loader = Loader(enc, torch.device("cuda"), "padded", pad_id=0)
    params = [p for k in range(len(SEEDS)) for p in pack.seed_parameters(k)]
    optimizer = make_optimizer([{"params": params, "lr": 1e-3}], (0.9, 0.999), 1e-8, .01)
    constant = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1)
    setup = PackSetup(pack, [optimizer], [constant],
                      LossConfig(), [inverse_frequency_weights(loader.labels, 8)] * len(SEEDS),
                      1.0, torch.bfloat16)
    pack.train()
    plan = [np.arange(i * B * len(SEEDS), (i + 1) * B * len(SEEDS)) for i in range(n)]
    terms = None
    for i, batch in enumerate(loader(plan)):
        if i == 1 and watch_sync:
            torch.cuda.set_sync_debug_mode("error")
        try:
            terms = pack_step(setup, batch)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return pack, terms


def test_a_pack_step_on_cuda_has_no_host_sync():
    _, terms = steps(tiny_config())
    assert all(torch.isfinite(t.total).item() for t in terms)


def test_a_4bit_pack_trains_and_each_seeds_lora_loads_in_peft(tmp_path):
    from peft import PeftModel
    from transformers import AutoConfig, AutoModel

    arch = dict(TINY_LLAMA, hidden_size=64, intermediate_size=128)  # bnb blocks of 64
    config = AutoConfig.for_model(arch.pop("model_type"), **arch)
    AutoModel.from_config(config, dtype=torch.bfloat16).save_pretrained(tmp_path / "base")
    backbone = BackboneConfig(name="tiny-4bit", model_id=str(tmp_path / "base"),
                              quantized=True, dtype="bfloat16", tokenizer="char")
    model = ModelConfig(method="dfil", backbone=backbone, lora=LoraConfig(r=4, alpha=8))
    pack, terms = steps(model, watch_sync=False)  # bitsandbytes' own syncs are not ours
    assert all(torch.isfinite(t.total).item() for t in terms)
    assert not torch.equal(pack.seed_parameters(0)[1], pack.seed_parameters(1)[1])
    save_adapter(pack.seed_state(2), model, tmp_path / "seed7")
    base = AutoModel.from_pretrained(tmp_path / "base", dtype=torch.bfloat16).to("cuda")
    loaded = PeftModel.from_pretrained(base, tmp_path / "seed7")
    b = loaded.base_model.model.layers[0].self_attn.q_proj.lora_B["default"].weight
    assert torch.equal(b.float().cpu(), pack.seed_parameters(2)[1].detach().float().cpu())
