"""Frozen-backbone features: one backbone pass gives the last-token features and every
token's states, and heads on those cached states equal the live model (attention pooling
included). Tiny random Llama, no download."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from dfil.engine.batching import Encoded, encode_ids
from dfil.engine.loader import Loader
from dfil.engine.predict import forward_batch, frozen_states, predict
from dfil.model import build_model
from tinymodel import tiny_config

PAD = 0


def encoded(lengths=(5, 9, 3, 12, 7, 1), seed=0) -> Encoded:
    rng = np.random.default_rng(seed)
    ids = tuple(tuple(int(t) for t in rng.integers(1, 96, n)) for n in lengths)
    n = len(lengths)
    return Encoded(ids=ids, labels=rng.integers(0, 8, n), p=rng.random(n).astype(np.float32))


def frozen_model(method: str):
    model = build_model(tiny_config(method, adapter="none"), seed=3)
    with torch.no_grad():  # make the attention scores non-uniform
        for prm in model.heads.parameters():
            prm.add_(0.1 * torch.randn_like(prm))
    return model.eval()


def test_offsets_index_the_flat_token_array():
    enc = encoded(lengths=(2, 3, 1))
    assert enc.offsets().tolist() == [0, 2, 5, 6]


def test_take_keeps_each_prompts_features_and_states():
    enc = encoded(lengths=(2, 3, 1))
    enc = replace(enc, features=torch.arange(3.0).unsqueeze(1),
                  states=torch.arange(6.0).unsqueeze(1))
    sub = enc.take([2, 0])
    assert sub.ids == (enc.ids[2], enc.ids[0])
    assert sub.labels.tolist() == [enc.labels[2], enc.labels[0]]
    assert sub.features[:, 0].tolist() == [2, 0]
    assert sub.states[:, 0].tolist() == [5, 0, 1] and sub.offsets().tolist() == [0, 1, 3]


def test_encode_ids_rebuilds_prompts_from_flat_ids():
    enc = encode_ids(torch.tensor([7, 8, 9, 4, 5, 6]), torch.tensor([2, 3, 1]), [1, 0, 2])
    assert enc.ids == ((7, 8), (9, 4, 5), (6,))
    assert enc.labels.tolist() == [1, 0, 2] and np.isnan(enc.p).all()


def test_frozen_states_are_each_prompts_own_states():
    model = frozen_model("dfil")
    enc = encoded()
    pooled, tokens = frozen_states(model, enc, PAD, batch_size=4)
    offsets = enc.offsets()
    assert pooled.shape == (len(enc), 32) and tokens.shape == (offsets[-1], 32)
    for i, row in enumerate(enc.ids):  # each prompt alone: no padding anywhere
        with torch.no_grad():
            alone = model.encode(torch.tensor([row]), torch.ones(1, len(row), dtype=torch.long))
        torch.testing.assert_close(tokens[offsets[i]:offsets[i + 1]], alone[0],
                                   atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(pooled[i], alone[0, -1], atol=1e-5, rtol=1e-5)


def test_cached_states_batch_pads_right_with_its_mask():
    enc = encoded(lengths=(2, 3, 1))
    enc = replace(enc, features=torch.zeros(3, 4),
                  states=torch.arange(1.0, 7.0).unsqueeze(1).repeat(1, 4))
    batch = Loader(enc, "cpu", "features").batch([2, 0, 1])
    assert batch.attention_mask.tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert batch.states[:, :, 0].tolist() == [[6, 0, 0], [1, 2, 0], [3, 4, 5]]


@pytest.mark.parametrize("method", ["dfil", "attn_pool"])
def test_heads_on_cached_states_equal_the_live_model(method):
    model = frozen_model(method)
    enc = encoded()
    pooled, tokens = frozen_states(model, enc, PAD, batch_size=3)
    cached = replace(enc, features=pooled, states=tokens if method == "attn_pool" else None)
    index = [3, 0, 5, 1]
    live_batch = Loader(enc, "cpu", "padded", PAD).batch(index)
    fast_batch = Loader(cached, "cpu", "features").batch(index)
    with torch.no_grad():
        live, fast = forward_batch(model, live_batch), forward_batch(model, fast_batch)
    assert torch.equal(live_batch.y, fast_batch.y)
    for field in ("main_logits", "p", "mf_scores"):
        torch.testing.assert_close(getattr(fast, field), getattr(live, field),
                                   atol=1e-5, rtol=1e-5)
    a, b = predict(model, enc, PAD, batch_size=4), predict(model, cached, PAD, batch_size=4)
    np.testing.assert_allclose(b.p, a.p, atol=1e-5)


def test_attention_pooling_reads_more_than_the_last_token():
    model = frozen_model("attn_pool")
    enc = encoded()
    pooled, tokens = frozen_states(model, enc, PAD)
    moved = tokens.clone()
    moved[enc.offsets()[1]] += 1.0  # the first token of prompt 1 only
    with torch.no_grad():
        base = forward_batch(model, Loader(replace(enc, features=pooled, states=tokens),
                                           "cpu", "features").batch([1])).p
        shifted = forward_batch(model, Loader(replace(enc, features=pooled, states=moved),
                                              "cpu", "features").batch([1])).p
    assert not torch.allclose(base, shifted)


@pytest.mark.parametrize("method", ["coral", "corn", "finetune"])
def test_main_labels_follow_each_heads_decision_rule(method):
    """CORAL/CORN predict by their rank rules (coral-pytorch), never by the argmax of the
    class probabilities derived from P(y > k), which for CORAL favours the end classes."""
    from dfil.model import main_labels

    model = frozen_model(method)
    enc = encoded()
    feats, _ = frozen_states(model, enc, PAD)
    enc = replace(enc, features=feats)
    preds = predict(model, enc, None)
    with torch.no_grad():
        out = model.heads(feats)
    expected = main_labels(out, model.heads.spec).numpy()
    np.testing.assert_array_equal(preds.main_labels, expected)
    assert (preds.main_pred is None) == (method == "finetune")


def test_main_labels_prefer_the_rank_rule_over_argmax():
    from dfil.engine.predict import Predictions

    # P(y > k) = (.6, .55, .45): rank 2; derived class probs (.4, .05, .1, .45): argmax 3
    probs = np.array([[0.4, 0.05, 0.1, 0.45]])
    assert Predictions(probs, None, None).main_labels.tolist() == [3]
    assert Predictions(probs, None, None, main_pred=np.array([2])).main_labels.tolist() == [2]


def test_distinct_finds_each_prompts_first_occurrence():
    enc = Encoded(ids=((1, 2), (3,), (1, 2), (3,), (4, 5)), labels=np.zeros(5), p=np.zeros(5))
    first, inverse = enc.distinct()
    assert first.tolist() == [0, 1, 4] and inverse.tolist() == [0, 1, 0, 1, 2]
    # the same prompt at another width is another item
    first, inverse = enc.distinct(np.array([2, 1, 3, 1, 2]))
    assert first.tolist() == [0, 1, 2, 4] and inverse.tolist() == [0, 1, 2, 1, 3]


@pytest.fixture
def one_thread():
    """One intra-op thread, as the DAG's jobs run (OMP_NUM_THREADS=cpus_per_task=1): a
    prompt's states then do not depend on the other rows of its batch."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_frozen_states_run_each_prompt_once_per_width(one_thread):
    model = frozen_model("dfil")
    base = encoded(lengths=(5, 9, 3))
    enc = base.take([0, 1, 2, 1, 0])  # lengths 5, 9, 3, 9, 5
    # By length, in batches of 2: rows [2, 0] (width 5), [4, 1] (width 9), [3] (width 9).
    # Row 3 repeats row 1 at width 9 and runs no more; row 4 repeats row 0 at another
    # width and runs again: 3 + 5 + 5 + 9 real tokens in 2 batches of widths 5 and 9.
    seen = []
    padded_states = model.padded_states

    def counting(input_ids, attention_mask):
        seen.append((int(attention_mask.sum()), input_ids.shape[1]))
        return padded_states(input_ids, attention_mask)

    model.padded_states = counting
    pooled, tokens = frozen_states(model, enc, PAD, batch_size=2)
    assert seen == [(3 + 5, 5), (5 + 9, 9)]
    model.padded_states = padded_states
    # Every row run in its own batch of the length-sorted plan, as without the reuse.
    offsets = enc.offsets()
    for index in ([2, 0], [4, 1], [3]):
        batch = Loader(enc, "cpu", "padded", PAD).batch(index)
        with torch.no_grad():
            states = model.padded_states(batch.input_ids, batch.attention_mask)
        for b, row in enumerate(index):
            n = len(enc.ids[row])
            assert torch.equal(tokens[offsets[row]:offsets[row + 1]], states[b, :n])
            assert torch.equal(pooled[row], states[b, n - 1])


def test_frozen_states_run_every_row_with_several_threads():
    model = frozen_model("dfil")
    enc = encoded(lengths=(5, 9, 3)).take([0, 1, 2, 1, 0])
    seen = []
    padded_states = model.padded_states
    model.padded_states = lambda ids, mask: seen.append(int(mask.sum())) or padded_states(ids,
                                                                                        mask)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        frozen_states(model, enc, PAD, batch_size=2)
    finally:
        torch.set_num_threads(before)
    assert seen == [3 + 5, 5 + 9, 9]  # the length-sorted batches, duplicates included
