import pytest
import torch
from coral_pytorch.dataset import corn_label_from_logits, levels_from_labelbatch, proba_to_label
from coral_pytorch.losses import coral_loss as oracle_coral_loss
from coral_pytorch.losses import corn_loss as oracle_corn_loss

from dfil.model.losses import (
    coral_label,
    coral_levels,
    coral_loss,
    corn_label,
    corn_loss,
    distillation_loss,
    exceedance_to_class_probs,
    inverse_frequency_weights,
)

Q = 8


@pytest.mark.parametrize("seed", range(5))
def test_coral_matches_coral_pytorch(seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(32, Q - 1, generator=g, dtype=torch.float64) * 3
    y = torch.randint(0, Q, (32,), generator=g)
    levels = coral_levels(y, Q)
    assert torch.equal(levels, levels_from_labelbatch(y, Q))
    ours = coral_loss(logits, levels.double())
    assert ours.item() == pytest.approx(oracle_coral_loss(logits, levels.double()).item(), abs=1e-6)
    oracle_labels = proba_to_label(torch.sigmoid(logits))
    assert torch.equal(coral_label(logits), oracle_labels)


@pytest.mark.parametrize("seed", range(5))
def test_corn_matches_coral_pytorch(seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(32, Q - 1, generator=g, dtype=torch.float64) * 3
    y = torch.randint(0, Q, (32,), generator=g)
    ours = corn_loss(logits, y, Q)
    assert ours.item() == pytest.approx(oracle_corn_loss(logits, y, Q).item(), abs=1e-6)
    assert torch.equal(corn_label(logits), corn_label_from_logits(logits))


def test_corn_with_absent_high_classes_matches_oracle():
    logits = torch.randn(6, Q - 1, dtype=torch.float64)
    y = torch.tensor([0, 1, 1, 2, 0, 1])  # tasks k >= 3 have no training examples
    assert corn_loss(logits, y, Q).item() == pytest.approx(
        oracle_corn_loss(logits, y, Q).item(), abs=1e-6
    )


def test_coral_loss_hand_computed():
    # One example, y = 1 of Q = 3: levels (1, 0); logits 0 -> each term is log 2.
    logits = torch.zeros(1, 2)
    assert coral_loss(logits, coral_levels(torch.tensor([1]), 3)).item() == pytest.approx(
        2 * torch.log(torch.tensor(2.0)).item()
    )


def test_exceedance_to_class_probs():
    probs = exceedance_to_class_probs(torch.tensor([[0.9, 0.5, 0.1]]))
    assert probs[0].tolist() == pytest.approx([0.1, 0.4, 0.4, 0.1])
    # Non-monotone exceedances (possible for CORAL mid-training) are clipped and renormalised.
    clipped = exceedance_to_class_probs(torch.tensor([[0.4, 0.6, 0.1]]))
    assert clipped[0].tolist() == pytest.approx([0.6 / 1.2, 0.0, 0.5 / 1.2, 0.1 / 1.2])


def test_inverse_frequency_weights_hand_computed():
    y = torch.tensor([0, 0, 0, 1, 2, 2])
    w = inverse_frequency_weights(y, 4)
    # N = 6, 3 classes present: 6/(3*3), 6/(3*1), 6/(3*2), absent -> 0.
    assert w.tolist() == pytest.approx([2 / 3, 2.0, 1.0, 0.0])


def test_distillation_loss_hand_computed_and_gradient_direction():
    logits = torch.tensor([[2.0, 0.0]], requires_grad=True)
    mu = torch.tensor([[0.0, 0.0]], requires_grad=True)
    tau = 2.0
    loss = distillation_loss(logits, mu, tau)
    p = torch.softmax(torch.tensor([1.0, 0.0]), -1)
    expected = tau**2 * (p * (p.log() - torch.log(torch.tensor([0.5, 0.5])))).sum()
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    loss.backward()
    assert mu.grad is None or torch.all(mu.grad == 0)
    assert logits.grad[0, 0] > 0  # pushes the main logits towards the uniform MF target
