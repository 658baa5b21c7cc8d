import pytest
import torch

from dfil.config.cell import LossConfig
from dfil.core.methods import METHODS, method_spec
from dfil.engine.checkpoint import CheckpointError, load_model, read_checkpoint, save_checkpoint
from dfil.model import (
    build_model,
    compute_loss,
    last_token_pool,
    main_class_probs,
    main_labels,
)
from dfil.model.losses import inverse_frequency_weights
from dfil.model.objective import effective_lambda_dfil
from tinymodel import tiny_config

TRAINED = sorted(name for name, spec in METHODS.items() if spec.trains)


def batch(seed=0, b=4, t=9):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, 96, (b, t), generator=g)
    lengths = torch.tensor([t, t - 3, t - 1, 2])[:b]
    mask = (torch.arange(t)[None, :] < lengths[:, None]).long()
    return ids * mask, mask, lengths


def left_pad(ids, mask, lengths):
    t = ids.shape[1]
    left_ids, left_mask = torch.zeros_like(ids), torch.zeros_like(mask)
    for i, n in enumerate(lengths.tolist()):
        left_ids[i, t - n:] = ids[i, :n]
        left_mask[i, t - n:] = 1
    return left_ids, left_mask


def test_last_token_pool_picks_last_real_token():
    states = torch.arange(2 * 4).float().view(2, 4, 1)
    right = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]])
    left = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1]])
    assert last_token_pool(states, right).flatten().tolist() == [1.0, 7.0]
    assert last_token_pool(states, left).flatten().tolist() == [3.0, 7.0]


def test_left_and_right_padding_pool_to_same_states():
    model = build_model(tiny_config()).eval()
    ids, mask, lengths = batch()
    lids, lmask = left_pad(ids, mask, lengths)
    with torch.no_grad():
        right = last_token_pool(model.encode(ids, mask), mask)
        left = last_token_pool(model.encode(lids, lmask), lmask)
        alone = torch.stack([
            model.encode(ids[i:i + 1, :n], mask[i:i + 1, :n])[0, -1]
            for i, n in enumerate(lengths.tolist())
        ])
    torch.testing.assert_close(right, left, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(right, alone, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("method", TRAINED)
def test_every_method_forward_loss_backward(method):
    torch.manual_seed(0)
    model = build_model(tiny_config(method))
    spec = method_spec(method)
    ids, mask, _ = batch()
    y = torch.tensor([0, 3, 7, 5])
    p = torch.tensor([0.0, 0.3, 1.0, 0.6])
    out = model(ids, mask)
    terms = compute_loss(out, y, p, spec, LossConfig(), inverse_frequency_weights(y, 8))
    assert torch.isfinite(terms.total)
    terms.total.backward()
    lora_grads = [prm.grad for name, prm in model.named_parameters() if "lora_B" in name]
    assert lora_grads and all(g is not None for g in lora_grads)
    if spec.main is not None:
        probs = main_class_probs(out, spec)
        assert probs.shape == (4, 8)
        torch.testing.assert_close(probs.sum(-1), torch.ones(4))
        assert main_labels(out, spec).shape == (4,)
    if spec.numeric:
        assert out.p.shape == (4,) and torch.all((out.p > 0) & (out.p < 1))
        assert out.mf_scores.shape == (4, 8)
    if spec.mf is not None:
        mf_grads = [prm.grad for prm in model.heads.mf.parameters()]
        if effective_lambda_dfil(spec, LossConfig()) > 0:
            assert all(g is not None for g in mf_grads)
        else:  # FT+Compose and DFIL-only: the MF never sees a class signal
            assert terms.mf.item() == 0.0 and all(g is None for g in mf_grads)


def test_only_lora_and_heads_are_trainable():
    model = build_model(tiny_config())
    names = [n for n, prm in model.named_parameters() if prm.requires_grad]
    assert names and all("lora_" in n or n.startswith("heads.") for n in names)


def test_stop_gradient_keeps_mf_loss_off_the_numerical_head():
    model = build_model(tiny_config(loss=LossConfig(stop_grad_p=True, lambda_p=0.0)))
    ids, mask, _ = batch()
    y = torch.tensor([0, 3, 7, 5])
    out = model(ids, mask)
    spec = method_spec("dfil")
    terms = compute_loss(out, y, None, spec, LossConfig(lambda_p=0.0))
    terms.mf.backward()
    assert model.heads.mf.delta_raw.grad is not None
    assert all(prm.grad is None for prm in model.heads.numeric.parameters())


def test_loss_terms_hand_computed_weights():
    spec = method_spec("dfil")
    from dfil.model.dual_path import HeadOutputs

    out = HeadOutputs(main_logits=torch.zeros(2, 8), p=torch.tensor([0.5, 0.5]),
                      mf_scores=torch.zeros(2, 8))
    y = torch.tensor([1, 2])
    terms = compute_loss(out, y, torch.tensor([0.3, 0.9]), spec,
                         LossConfig(lambda_dfil=0.1, lambda_p=0.5))
    log8 = torch.log(torch.tensor(8.0)).item()
    assert terms.main.item() == pytest.approx(log8)
    assert terms.mf.item() == pytest.approx(0.1 * log8)
    assert terms.p.item() == pytest.approx(0.5 * (0.04 + 0.16) / 2)
    assert terms.total.item() == pytest.approx(1.1 * log8 + 0.05)


@pytest.mark.parametrize("method", ["dfil", "coral", "unordered_mf", "attn_pool"])
def test_save_load_round_trip_reproduces_outputs(tmp_path, method):
    model = build_model(tiny_config(method))
    with torch.no_grad():  # move every trained tensor away from its init
        for prm in model.parameters():
            if prm.requires_grad:
                prm.add_(0.05 * torch.randn_like(prm))
    model.eval()
    ids, mask, _ = batch(seed=1)
    path = tmp_path / "ckpt" / "model.safetensors"
    save_checkpoint(model, tiny_config(method), path)
    restored, config = load_model(path)
    restored.eval()
    assert config == tiny_config(method)
    with torch.no_grad():
        a, b = model(ids, mask), restored(ids, mask)
    for field in ("main_logits", "p", "mf_scores"):
        x, z = getattr(a, field), getattr(b, field)
        assert (x is None) == (z is None)
        if x is not None:
            assert torch.equal(x, z)
    _, tensors, _ = read_checkpoint(path)
    assert all("lora_" in k or k.startswith("heads.") for k in tensors)
    assert not list(path.parent.glob(".*.tmp"))


def test_corrupt_and_truncated_checkpoints_raise_clear_errors(tmp_path):
    model = build_model(tiny_config())
    path = tmp_path / "model.safetensors"
    save_checkpoint(model, tiny_config(), path)
    data = path.read_bytes()
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="truncated.safetensors"):
        load_model(truncated)
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x00" * 64)
    with pytest.raises(CheckpointError, match="garbage.safetensors"):
        read_checkpoint(garbage)
    with pytest.raises(CheckpointError, match="not found"):
        read_checkpoint(tmp_path / "missing.safetensors")


def test_checkpoint_of_another_method_does_not_fit(tmp_path):
    from dfil.engine.checkpoint import load_into

    path = tmp_path / "ft.safetensors"
    save_checkpoint(build_model(tiny_config("finetune")), tiny_config("finetune"), path)
    _, tensors, _ = read_checkpoint(path)
    with pytest.raises(CheckpointError, match="does not fit"):
        load_into(build_model(tiny_config("dfil")), tensors, path)


def test_frozen_model_built_without_backbone_loads_it_on_demand():
    cfg = tiny_config("dfil", adapter="none")
    full, lazy = build_model(cfg, seed=5), build_model(cfg, seed=5, backbone=False)
    assert lazy.backbone is None
    for a, b in zip(full.heads.parameters(), lazy.heads.parameters(), strict=True):
        assert torch.equal(a, b)
    ids, mask, _ = batch()
    rng = torch.get_rng_state()
    with torch.no_grad():
        a, b = full.eval()(ids, mask), lazy.eval()(ids, mask)
    assert lazy.backbone is not None and not any(
        p.requires_grad for p in lazy.backbone.parameters())
    assert torch.equal(rng, torch.get_rng_state())  # loading left the RNG alone
    torch.testing.assert_close(b.p, a.p)
    with pytest.raises(ValueError, match="frozen"):
        build_model(tiny_config("dfil"), backbone=False)


def test_feature_standardizer_fit_hand_computed():
    from dfil.model.heads import FeatureStandardizer

    norm = FeatureStandardizer(2)
    with pytest.raises(RuntimeError, match="before its statistics were set"):
        norm(torch.zeros(1, 2))  # never the identity by accident
    norm.fit(torch.tensor([[1.0, 10.0], [3.0, 10.0], [5.0, 10.0]]))
    # column 0: mean 3, sample std 2; column 1 is constant: centred, never scaled up
    torch.testing.assert_close(norm.mean, torch.tensor([3.0, 10.0]))
    torch.testing.assert_close(norm.std, torch.tensor([2.0, 1.0]))
    torch.testing.assert_close(norm(torch.tensor([[7.0, 10.0]])), torch.tensor([[2.0, 0.0]]))
    with pytest.raises(ValueError, match=r"\[N >= 2, 2\]"):
        norm.fit(torch.zeros(1, 2))


def test_feature_standardizer_keeps_rounding_noise_small():
    """A dimension varying only in its last bits (as frozen features do between CPUs)
    stays at that size after standardisation; a small but real spread is scaled."""
    from dfil.model.heads import FeatureStandardizer

    norm = FeatureStandardizer(2)
    ulp = float(torch.finfo(torch.float32).eps)  # 2**-23: one ulp at 1.0
    # column 0: 1.0 and one ulp above it; column 1: 0.4995, 0.5005, 0.5 (sample std 5e-4)
    x = torch.tensor([[1.0, 0.4995], [1.0 + ulp, 0.5005], [1.0, 0.5]])
    norm.fit(x)
    torch.testing.assert_close(norm.std, torch.tensor([1.0, 5e-4]), rtol=1e-3, atol=0)
    moved = norm(torch.tensor([[1.0 + ulp, 0.5005]])) - norm(torch.tensor([[1.0, 0.5005]]))
    assert moved[0, 0].item() == pytest.approx(ulp)  # an ulp in, an ulp out


def test_feature_norm_is_saved_not_trained_and_frozen_only(tmp_path):
    from dfil.config.cell import HeadsConfig

    heads = HeadsConfig(feature_norm="standardize")
    cfg = tiny_config("attn_pool", adapter="none", heads=heads)
    model = build_model(cfg, seed=1, backbone=False)
    d = model.heads.norm.mean.numel()
    feats, states = torch.randn(10, d) * 3 + 7, torch.randn(40, d) - 2
    model.heads.fit_feature_norm(feats, states)
    assert not model.heads.norm.mean.requires_grad
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert not any("norm" in n for n in trainable)
    out = model.heads(feats, states.view(10, 4, d), torch.ones(10, 4))
    assert out.p.shape == (10,)
    save_checkpoint(model, cfg, tmp_path / "m.safetensors")
    _, tensors, _ = read_checkpoint(tmp_path / "m.safetensors")
    torch.testing.assert_close(tensors["heads.norm.mean"], feats.mean(0))
    torch.testing.assert_close(tensors["heads.state_norm.std"], states.std(0))
    loaded, _ = load_model(tmp_path / "m.safetensors")  # statistics set by the load
    torch.testing.assert_close(loaded.heads(feats, states.view(10, 4, d), torch.ones(10, 4)).p,
                               out.p)
    with pytest.raises(ValueError, match="frozen"):
        build_model(tiny_config("dfil", heads=heads))
