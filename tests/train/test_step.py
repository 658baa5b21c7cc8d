"""One training step reads nothing back from the device, and packed batches reach the
attention kernel as boundaries, never as a [.., S, S] mask. Tiny random Llama, CPU."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from dfil.config.cell import LossConfig
from dfil.engine.batching import Encoded
from dfil.engine.loader import Loader
from dfil.engine.predict import forward_batch, predict
from dfil.model import build_model
from dfil.model.losses import inverse_frequency_weights
from dfil.train.step import StepSetup, make_optimizer, train_step
from syncops import SyncOps
from tinymodel import tiny_config
from varlen import pretend_flash


def examples(n=16, seed=0) -> Encoded:
    rng = np.random.default_rng(seed)
    ids = tuple(tuple(int(t) for t in rng.integers(1, 96, k)) for k in rng.integers(1, 20, n))
    return Encoded(ids=ids, labels=rng.integers(0, 8, n), p=rng.random(n).astype(np.float32))


def two_steps(model, loader, monitor_second):
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = make_optimizer([{"params": trainable, "lr": 1e-3}], (0.9, 0.999), 1e-8, 0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0 / (s + 1))
    weights = inverse_frequency_weights(loader.labels, 8)
    plan = [np.arange(8), np.arange(8, 16)]
    batches = loader(plan)
    setup = StepSetup(model, optimizer, scheduler, LossConfig(), weights, 1.0, None)
    model.train()
    train_step(setup, next(batches))  # the first step creates optimizer state
    with monitor_second:
        return train_step(setup, next(batches))


@pytest.mark.parametrize("method,adapter", [("dfil", "lora"), ("attn_pool", "lora"),
                                            ("coral", "lora"), ("dfil", "none")])
def test_a_training_step_has_no_host_sync(method, adapter):
    model = build_model(tiny_config(method, adapter=adapter), seed=0)
    enc = examples()
    if adapter == "none":
        from dataclasses import replace

        from dfil.engine.predict import frozen_states

        feats, states = frozen_states(model, enc, pad_id=0)
        enc = replace(enc, features=feats, states=states if method == "attn_pool" else None)
    layout = "features" if adapter == "none" else "padded"
    watch = SyncOps()
    terms = two_steps(model, Loader(enc, "cpu", layout, pad_id=0), watch)
    assert watch.found == []
    assert torch.isfinite(terms.total)


def test_a_packed_training_step_has_no_host_sync(monkeypatch):
    model = build_model(tiny_config(), seed=0)
    kernel = pretend_flash(model, monkeypatch)
    watch = SyncOps()
    two_steps(model, Loader(examples(), "cpu", "packed"), watch)
    assert watch.found == [] and len(kernel.calls) == 2 * 2  # 2 layers x 2 forwards


class Shapes(TorchDispatchMode):
    """Every op's output shapes."""

    def __init__(self):
        super().__init__()
        self.shapes = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor):
                self.shapes.append((str(func), tuple(t.shape)))
        return out


def test_packed_batches_reach_attention_as_boundaries_and_equal_padded(monkeypatch):
    enc = Encoded(ids=((5, 17, 3, 9, 9, 2, 40, 41, 7, 8, 1, 4, 6), (60, 61, 62, 63),
                       tuple(range(10, 36)), (70,)),
                  labels=np.array([2, 6, 7, 0]), p=np.array([.2, .8, 1., 0.], np.float32))
    total = sum(len(x) for x in enc.ids)  # 44: no other dimension of the model is 44
    model = build_model(tiny_config(), seed=0).eval()
    with torch.no_grad():
        padded = forward_batch(model, Loader(enc, "cpu", "padded", 0).batch(range(4)))
    kernel = pretend_flash(model, monkeypatch)
    batch = Loader(enc, "cpu", "packed").batch(range(4))
    with torch.no_grad(), Shapes() as seen:
        packed = forward_batch(model, batch)
    square = [(f, s) for f, s in seen.shapes if len(s) >= 2 and s[-2:] == (total, total)]
    assert square == []
    call = kernel.calls[0]
    assert call["attention_mask"] is None and call["is_causal"]
    assert call["cu_seq_lens_q"].tolist() == call["cu_seq_lens_k"].tolist() == [0, 13, 17, 43, 44]
    assert call["max_length_q"] == call["max_length_k"] == 26
    for field in ("main_logits", "p", "mf_scores"):
        torch.testing.assert_close(getattr(packed, field), getattr(padded, field),
                                   atol=1e-5, rtol=1e-5)


def test_packed_examples_do_not_attend_to_each_other(monkeypatch):
    model = build_model(tiny_config(), seed=0).eval()
    pretend_flash(model, monkeypatch)
    a = Encoded(ids=((5, 6, 7), (8, 9)), labels=np.zeros(2, np.int64), p=np.zeros(2, np.float32))
    b = Encoded(ids=((50, 6, 7), (8, 9)), labels=np.zeros(2, np.int64), p=np.zeros(2, np.float32))
    with torch.no_grad():
        pa = forward_batch(model, Loader(a, "cpu", "packed").batch([0, 1])).p
        pb = forward_batch(model, Loader(b, "cpu", "packed").batch([0, 1])).p
    torch.testing.assert_close(pa[1], pb[1], atol=1e-6, rtol=1e-6)
    assert not torch.allclose(pa[0], pb[0])


def test_packing_without_a_varlen_attention_is_refused():
    from dfil.engine.predict import layout_for

    model = build_model(tiny_config(), seed=0)
    enc = examples(4)
    assert layout_for(model, enc, "auto") == "padded"
    with pytest.raises(ValueError, match="batching: packed needs an attention"):
        layout_for(model, enc, "packed")


def test_prediction_reads_the_device_once(monkeypatch):
    """A prediction pass over several batches reads its outputs back in one transfer."""
    model = build_model(tiny_config(), seed=0)
    enc = examples()
    reads = []
    original = torch.Tensor.cpu

    def counting_cpu(self, *args, **kwargs):
        reads.append(tuple(self.shape))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "cpu", counting_cpu)
    preds = predict(model, enc, pad_id=0, batch_size=4)
    assert len(reads) == 3  # main_probs, p, mf_scores: once each, for 4 batches
    assert preds.p.shape == (16,)


def test_padded_batches_on_flash_run_its_dense_kernel_without_positions(monkeypatch):
    """With flash attention a right-padded batch (attention pooling, evaluation) goes to
    the dense causal kernel with no mask and no position_ids (which transformers would
    test for packing on the host), and equals SDPA's result."""
    enc = examples(6)
    model = build_model(tiny_config(), seed=0).eval()
    with torch.no_grad():
        sdpa = forward_batch(model, Loader(enc, "cpu", "padded", 0).batch(range(6)))
    kernel = pretend_flash(model, monkeypatch)
    with torch.no_grad(), SyncOps() as watch:
        flash = forward_batch(model, Loader(enc, "cpu", "padded", 0).batch(range(6)))
    assert watch.found == []
    assert kernel.calls and all(c["attention_mask"] is None and c["position_ids"] is None
                                and "cu_seq_lens_q" not in c for c in kernel.calls)
    for field in ("main_logits", "p", "mf_scores"):
        torch.testing.assert_close(getattr(flash, field), getattr(sdpa, field),
                                   atol=1e-5, rtol=1e-5)
