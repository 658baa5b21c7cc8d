"""A pack of seeds over one frozen base (dfil.model.pack): each seed starts where its
solo model starts, a pack of one computes what the peft model computes, and each seed's
LoRA saved from a pack loads with ``peft.PeftModel.from_pretrained`` and gives its
states. Tiny random Llama, CPU."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dfil.engine.batching import Encoded
from dfil.engine.loader import Loader
from dfil.model import build_model
from dfil.model.adapter import save_adapter
from dfil.model.backbone import load_backbone
from dfil.model.pack import build_pack, seed_spans
from tinymodel import tiny_config

SEEDS = (3, 5, 7)


def batch(n: int = 6, seed: int = 0):
    rng = np.random.default_rng(seed)
    enc = Encoded(ids=tuple(tuple(int(t) for t in rng.integers(1, 96, k))
                            for k in rng.integers(2, 20, n)),
                  labels=rng.integers(0, 8, n), p=rng.random(n).astype(np.float32))
    return Loader(enc, "cpu", "padded", pad_id=0).batch(range(n))


def test_each_seed_starts_from_its_solo_models_weights():
    config = tiny_config()
    pack = build_pack(config, SEEDS)
    for k, seed in enumerate(SEEDS):
        solo = build_model(config, seed=seed)
        trained = [p for p in solo.parameters() if p.requires_grad]
        assert len(trained) == len(pack.seed_parameters(k))
        assert all(torch.equal(a, b) for a, b in zip(trained, pack.seed_parameters(k),
                                                    strict=True))
    first = pack.seed_parameters(0)[0]  # a LoRA A: drawn from each seed's own stream
    assert not torch.equal(first, pack.seed_parameters(1)[0])


def test_a_pack_of_one_computes_what_the_peft_model_computes():
    config = tiny_config()
    solo, pack = build_model(config, seed=3).eval(), build_pack(config, [3]).eval()
    for model in (solo, pack):  # B is zero at init: move every trained tensor alike
        torch.manual_seed(0)
        for p in (p for p in model.parameters() if p.requires_grad):
            p.data = torch.randn_like(p) * 0.1
    b = batch()
    with torch.no_grad():
        want = solo.forward_padded(b.input_ids, b.attention_mask, b.last)
        [got] = pack.forward_padded(b.input_ids, b.attention_mask, b.last)
    assert torch.equal(want.main_logits, got.main_logits) and torch.equal(want.p, got.p)
    assert torch.equal(want.mf_scores, got.mf_scores)


def test_a_seeds_saved_lora_loads_in_peft_and_gives_its_states(tmp_path):
    from peft import PeftModel

    config = tiny_config()
    pack = build_pack(config, SEEDS).eval()
    torch.manual_seed(0)
    for p in (p for p in pack.parameters() if p.requires_grad):
        p.data = torch.randn_like(p) * 0.1
    b = batch(n=6)  # two examples a seed
    with torch.no_grad():
        pack.step.set([k * 2 * b.input_ids.shape[1] for k in range(4)], None)
        states = pack.padded_states(b.input_ids, b.attention_mask)
    save_adapter(pack.seed_state(1), config, tmp_path / "seed5")
    peft_model = PeftModel.from_pretrained(load_backbone(config.backbone), tmp_path / "seed5")
    with torch.no_grad():
        own = peft_model(input_ids=b.input_ids[2:4], use_cache=False).last_hidden_state
    assert torch.allclose(own, states[2:4], atol=1e-6)
    with torch.no_grad():  # not another seed's
        theirs = peft_model(input_ids=b.input_ids[0:2], use_cache=False).last_hidden_state
    assert not torch.allclose(theirs, states[0:2], atol=1e-3)


def test_seed_spans_bound_each_seeds_tokens():
    assert seed_spans([3, 4, 5, 6], 2) == [0, 7, 18]
    assert seed_spans([2, 2, 2], 1) == [0, 6]
    assert seed_spans([3, 4, 5, 6], [1, 3]) == [0, 3, 18]  # a short last batch's shares


def test_seeds_of_unequal_shares_each_get_their_own_rows():
    """A step whose seeds bring different row counts (a grouped epoch's short batch):
    seed k's outputs are those of its own rows, as in a pack of equal shares."""
    config = tiny_config()
    pack = build_pack(config, SEEDS[:2]).eval()
    b = batch(n=6)
    with torch.no_grad():
        uneven = pack.forward_padded(b.input_ids, b.attention_mask, b.last, [2, 4])
        first = pack.forward_padded(b.input_ids[:4], b.attention_mask[:4], b.last[:4])
    assert uneven[0].p.shape == (2,) and uneven[1].p.shape == (4,)
    assert torch.allclose(uneven[0].p, first[0].p[:2], atol=1e-6)
    with pytest.raises(ValueError, match="do not split"):
        pack.forward_padded(b.input_ids, b.attention_mask, b.last, [2, 3])


def test_a_frozen_backbones_pack_is_its_seeds_heads_on_cached_features():
    config = tiny_config(adapter="none")
    pack = build_pack(config, SEEDS)
    assert pack.backbone is None and pack.packed == []
    for k, seed in enumerate(SEEDS):
        solo = build_model(config, seed=seed, backbone=False)
        assert all(torch.equal(a, b) for a, b in zip(solo.heads.state_dict().values(),
                                                    pack.heads[k].state_dict().values(),
                                                    strict=True))
    d = next(pack.heads[0].parameters()).shape[-1]
    features = torch.randn(6, d)
    with torch.no_grad():
        outs = pack.eval().forward_features(features)
        alone = pack.heads[2](features[4:])
    assert torch.equal(outs[2].p, alone.p)


def test_a_seeds_view_is_its_solo_model_to_checkpoints_and_optimizers():
    """SeedView: the solo model's names in its order, over the pack's own tensors, so
    loading into the view writes into the pack."""
    from dfil.engine.checkpoint import load_into, trained_state
    from dfil.model.pack import SeedView

    config = tiny_config()
    pack = build_pack(config, SEEDS)
    view = SeedView(pack, 1)
    solo = build_model(config, seed=5)
    assert [n for n, p in view.named_parameters()] == [
        n for n, p in solo.named_parameters() if p.requires_grad]
    assert all(a is b for a, b in zip(view.parameters(), pack.seed_parameters(1),
                                      strict=True))
    others = pack.seed_state(0)
    state = {k: v + 1 for k, v in trained_state(view).items()}
    load_into(view, state, "test")
    assert all(torch.equal(pack.seed_state(1)[k], v) for k, v in state.items())
    assert all(torch.equal(pack.seed_state(0)[k], v) for k, v in others.items())


def test_a_seeds_checkpoint_is_its_solo_models_and_loads_as_one(tmp_path):
    """A seed's trained tensors carry its solo model's names (today's checkpoint schema),
    and the one loader of trained models rebuilds it to give the pack's outputs."""
    from dfil.engine.checkpoint import load_model, save_state, trained_state

    config = tiny_config()
    pack = build_pack(config, SEEDS).eval()
    torch.manual_seed(0)
    for p in (p for p in pack.parameters() if p.requires_grad):
        p.data = torch.randn_like(p) * 0.1
    assert set(pack.seed_state(1)) == set(trained_state(build_model(config, seed=5)))
    save_state(pack.seed_state(1), config, tmp_path / "model.safetensors")
    model, _ = load_model(tmp_path / "model.safetensors")
    b = batch(n=6)
    with torch.no_grad():
        outs = pack.forward_padded(b.input_ids, b.attention_mask, b.last)
        width = b.input_ids.shape[1]
        alone = model.eval().forward_padded(b.input_ids[2:4], b.attention_mask[2:4],
                                            b.last[2:4] - 2 * width)
    assert torch.allclose(alone.main_logits, outs[1].main_logits, atol=1e-5)
    assert torch.allclose(alone.p, outs[1].p, atol=1e-6)
