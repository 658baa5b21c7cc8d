"""Host-side batches in numpy and their trip to the device: hand-computed layouts, the
length-grouped epoch plan, a cost per batch independent of its size, and no tensor left
on the ambient default device."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from dfil.engine.batching import Encoded, batches, grouped_batches, packed, padded
from dfil.engine.loader import Loader, to_device
from dfil.engine.predict import predict
from dfil.model import build_model
from dfil.model.losses import inverse_frequency_weights
from tinymodel import tiny_config


def tiny_set() -> Encoded:
    ids = ((7, 8), (9, 4, 5), (6,))
    return Encoded(ids=ids, labels=np.array([1, 0, 2]), p=np.array([.1, .2, .3], np.float32))


def test_padded_batch_hand_computed():
    out = padded(tiny_set(), [2, 0, 1], pad_id=0)
    assert out["input_ids"].tolist() == [[6, 0, 0], [7, 8, 0], [9, 4, 5]]
    assert out["attention_mask"].tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    # flat index into [B * T] = 3 * 3: row b's last real column
    assert out["last"].tolist() == [0, 4, 8]
    assert out["rows"].tolist() == [2, 0, 1]


def test_packed_batch_hand_computed():
    out, longest = packed(tiny_set(), [2, 0, 1])
    assert out["input_ids"].tolist() == [[6, 7, 8, 9, 4, 5]]
    assert out["position_ids"].tolist() == [[0, 0, 1, 0, 1, 2]]
    assert out["cu_seq_lens"].tolist() == [0, 1, 3, 6]
    assert out["last"].tolist() == [0, 2, 5]
    assert longest == 3


def test_an_empty_prompt_is_refused_by_name():
    enc = Encoded(ids=((1,), ()), labels=np.zeros(2, np.int64), p=np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=r"rows \[0, 1\] have lengths \[1, 0\]"):
        padded(enc, [0, 1], 0)


def test_grouped_batches_cover_the_epoch_once_with_similar_lengths():
    lengths = np.array([5, 1, 9, 2, 8, 3, 7, 4, 6, 10])
    order = np.arange(10)
    plan = grouped_batches(order, lengths, batch_size=2, seed=0, epoch=0, window=5)
    assert len(plan) == len(batches(order, 2)) == 5
    assert sorted(np.concatenate(plan).tolist()) == list(range(10))
    # one window of 5 batches: sorted longest first, so each batch holds neighbours
    assert sorted(sorted(lengths[b].tolist()) for b in plan) == [
        [1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]
    again = grouped_batches(order, lengths, 2, seed=0, epoch=0, window=5)
    assert all(np.array_equal(a, b) for a, b in zip(plan, again, strict=True))
    other = grouped_batches(order, lengths, 2, seed=0, epoch=1, window=5)
    assert not all(np.array_equal(a, b) for a, b in zip(plan, other, strict=True))


def test_grouped_batches_windows_keep_a_single_short_batch():
    lengths = np.arange(1, 12)
    plan = grouped_batches(np.arange(11), lengths, batch_size=3, seed=1, epoch=0, window=2)
    assert sorted(len(b) for b in plan) == [2, 3, 3, 3]


def test_to_device_sends_every_array_in_one_copy():
    arrays = {"a": np.arange(6).reshape(2, 3), "b": np.array([7, 8])}

    class Copies(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if "copy" in str(func) or "_to_copy" in str(func):
                Copies.n += 1
            return func(*args, **(kwargs or {}))

    with Copies():
        out = to_device(arrays, torch.device("cpu"))
    assert out["a"].tolist() == [[0, 1, 2], [3, 4, 5]] and out["b"].tolist() == [7, 8]
    assert Copies.n <= 1


def count_ops(fn) -> int:
    class Ops(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Ops.n += 1
            return func(*args, **(kwargs or {}))

    with Ops():
        fn()
    return Ops.n


@pytest.mark.parametrize("layout", ["padded", "packed"])
def test_a_batch_costs_the_same_torch_work_whatever_its_size(layout):
    """No per-example torch call: 4 and 64 examples dispatch the same number of ops."""
    rng = np.random.default_rng(0)
    ids = tuple(tuple(int(t) for t in rng.integers(1, 96, n)) for n in rng.integers(1, 30, 64))
    enc = Encoded(ids=ids, labels=rng.integers(0, 8, 64), p=rng.random(64).astype(np.float32))
    loader = Loader(enc, "cpu", layout, pad_id=0)
    assert count_ops(lambda: loader.batch(range(4))) == count_ops(
        lambda: loader.batch(range(64)))


def test_collation_weights_and_prediction_under_a_meta_default_device():
    """Every tensor the engine makes names its device: with the ambient default device
    set to meta, batches, loss weights and predictions still come out on the CPU."""
    model = build_model(tiny_config(), seed=0).eval()
    rng = np.random.default_rng(1)
    enc = Encoded(ids=tuple(tuple(int(t) for t in rng.integers(1, 96, n)) for n in (3, 7, 5)),
                  labels=np.array([0, 3, 3]), p=np.array([.1, .5, .6], np.float32))
    expected = predict(model, enc, pad_id=0, batch_size=2)
    with torch.device("meta"):
        batch = Loader(enc, "cpu", "padded", pad_id=0).batch([0, 1])
        weights = inverse_frequency_weights(torch.tensor([0, 3, 3], device="cpu"), 8)
        got = predict(model, enc, pad_id=0, batch_size=2)
    assert batch.input_ids.device.type == "cpu" and batch.y.tolist() == [0, 3]
    assert weights.device.type == "cpu"
    # w_k = N / (Q_present n_k): 3 / (2 * 1) and 3 / (2 * 2)
    assert weights.tolist() == pytest.approx([1.5, 0, 0, 0.75, 0, 0, 0, 0])
    np.testing.assert_allclose(got.p, expected.p, rtol=1e-6)


def test_padded_lengths_round_up_to_a_multiple():
    out = padded(tiny_set(), [0, 2], pad_id=0, multiple=4)
    assert out["input_ids"].tolist() == [[7, 8, 0, 0], [6, 0, 0, 0]]
    assert out["last"].tolist() == [1, 4]
