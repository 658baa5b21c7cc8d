"""Projected GPU time of a grid's cells: FLOPs from the architecture x tokens per cell /
(MFU x peak bf16 FLOP/s), by size class and in total.

A cell's training job: epochs x train examples x mean prompt tokens at the training FLOPs
per token, plus one forward pass over validation per epoch (best.pt is chosen on
validation loss), plus loading the weights. Its evaluation job: one forward pass over each
evaluated set (validation, test, and for FRoG cells the probe sets and QuRe) plus loading;
zero-shot option scoring (no training job) encodes each prompt once and then scores each
of the Q options' own tokens on the prompt's cache, every scored position through the LM
head (2 d V FLOPs). MFU comes from a measured throughput (:mod:`dfil.cost.rates`):
training at the cell's batch, evaluation at batch 32's (a forward-only proxy).

A pack of K seeds of one cell configuration (:mod:`dfil.cost.packs`) runs one forward and
backward of the frozen base per step over the K seeds' micro-batches side by side: the
same FLOPs as K solo runs, in steps of K x batch sequences. Its MFU is the measured one at
that batch: linear between the measured batches (a chord under a throughput curve that
flattens as the batch grows), capped at the largest measured batch's (no gain is claimed
beyond what was measured). Its job reads the weights once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dfil.cost.archs import arch as published_arch
from dfil.cost.flops import (
    Shape,
    decoder_params,
    forward_flops,
    lora_params,
    shape,
    train_flops,
)
from dfil.cost.memory import Memory, training_memory
from dfil.cost.rates import (
    LOAD_BYTES_PER_S,
    MEASURED,
    PEAK_BF16,
    Table,
    Throughput,
    timed,
)

#: Tokens per scored option beyond the first (FRoG's option names are 1-2 tokens; an
#: upper bound).
OPTION_TOKENS = 2


@dataclass(frozen=True)
class CellWork:
    """What one cell computes: the projection's whole input.

    ``examples`` maps each split or evaluated set (``train`` per epoch, ``val``, ``test``,
    probe sets, ``qure``) to its examples, ``prompt_tokens`` the same keys to their mean
    tokenized prompt length; ``longest`` is the longest prompt (padded batch length).
    ``epochs == 0`` trains nothing; ``options > 0`` scores that many options per prompt;
    no ``lora_targets`` is a frozen backbone (one forward pass over the training set).
    """

    key: str
    size: str
    arch: Mapping
    examples: Mapping[str, int]
    prompt_tokens: Mapping[str, float]
    longest: int
    epochs: int
    batch_size: int
    lora_targets: tuple[str, ...] = ("q", "v")
    lora_r: int = 16
    quantized: bool = False
    checkpointing: bool = False
    options: int = 0


@dataclass(frozen=True)
class CellCost:
    """A cell's projection, or a pack's (``seeds`` > 1): FLOPs and GPU-seconds of its
    training job and its evaluation jobs (each with its weights' load), and its training
    step's memory."""

    key: str
    size: str
    train_flops: float
    eval_flops: float
    train_s: float
    eval_s: float
    memory: Memory = field(compare=False)
    seeds: int = 1


def mfu(th: Throughput) -> float:
    """The model FLOPs utilisation a measured throughput implies under this package's
    FLOPs rule (LoRA q,v r16 at the measured prompt length)."""
    s = shape(published_arch(th.arch) if isinstance(th.arch, str) else th.arch)
    per_token = train_flops(s, th.prompt_tokens, lora_params(s, ("q", "v"), 16))
    return th.tokens_per_s * per_token / PEAK_BF16[th.gpu]


def mfu_at(trainer: str, batch: int, table: Table = MEASURED) -> float:
    """``trainer``'s MFU at ``batch`` sequences a step: the measured one at a measured
    batch, linear in the batch between two, the nearest measured one outside them."""
    points = [(th.batch, mfu(th)) for th in timed(trainer, table)]
    if batch <= points[0][0]:
        return points[0][1]
    for (b0, m0), (b1, m1) in zip(points, points[1:], strict=False):
        if batch <= b1:
            return m0 + (m1 - m0) * (batch - b0) / (b1 - b0)
    return points[-1][1]


def _eval_flops(w: CellWork, s: Shape, n_lora: int) -> float:
    total = 0.0
    for name, count in w.examples.items():
        if name == "train":
            continue
        n = w.prompt_tokens[name]
        total += count * n * forward_flops(s, n, n_lora)
        if w.options:
            head = 2.0 * s.d * s.vocab
            total += count * (head + w.options * OPTION_TOKENS * (forward_flops(s, n) + head))
    return total


def project(w: CellWork, gpu: str = "h100", trainer: str = "dfil",
            table: Table = MEASURED, seeds: int = 1) -> CellCost:
    """The projection of ``seeds`` seeds of cell ``w`` trained as one pack (1: a job of
    its own) on ``gpu`` with ``trainer``'s measured throughput (``table``: the
    measurements, the acceptance run's among them where it ran). ``train_s`` is the
    pack's training job, ``eval_s`` the seeds' evaluation jobs together."""
    if gpu not in PEAK_BF16:
        raise ValueError(f"unknown GPU {gpu!r}; expected one of {sorted(PEAK_BF16)}")
    if seeds < 1:
        raise ValueError(f"a pack holds at least one seed, not {seeds}")
    s = shape(w.arch)
    n_lora = lora_params(s, w.lora_targets, w.lora_r)
    peak = PEAK_BF16[gpu]
    train_rate = mfu_at(trainer, seeds * w.batch_size, table) * peak
    eval_rate = mfu_at(trainer, 32, table) * peak
    load_s = 2.0 * decoder_params(s) / LOAD_BYTES_PER_S  # checkpoints are bf16 on disk
    evaluation = seeds * _eval_flops(w, s, n_lora)
    train, train_s = 0.0, 0.0
    if w.epochs:
        n, val_n = w.prompt_tokens["train"], w.prompt_tokens["val"]
        if w.lora_targets:
            passes = w.epochs
            step = train_flops(s, n, n_lora, w.checkpointing)
        else:  # a frozen backbone: features computed once, the heads trained on them
            passes, step = 1, forward_flops(s, n)
        train = seeds * passes * w.examples["train"] * n * step
        val = seeds * passes * w.examples["val"] * val_n * forward_flops(s, val_n, n_lora)
        train_s = train / train_rate + val / eval_rate + load_s
        train += val
    memory = training_memory(s, w.batch_size * w.longest, w.lora_targets, w.lora_r,
                             w.quantized, w.checkpointing).packed(seeds)
    return CellCost(w.key, w.size, train, evaluation, train_s,
                    evaluation / eval_rate + seeds * load_s, memory, seeds)


@dataclass
class ClassTotal:
    """A size class's projected GPU-hours, its longest jobs (a pack's training, one seed's
    evaluation) and its largest memory."""

    size: str
    gpu: str
    cells: int = 0
    trained: int = 0
    train_h: float = 0.0
    eval_h: float = 0.0
    longest_train_h: float = 0.0
    longest_eval_h: float = 0.0
    memory: Memory | None = None
    memory_key: str = ""

    def add(self, c: CellCost) -> None:
        self.cells += c.seeds
        self.trained += c.seeds if c.train_s > 0 else 0
        self.train_h += c.train_s / 3600
        self.eval_h += c.eval_s / 3600
        self.longest_train_h = max(self.longest_train_h, c.train_s / 3600)
        self.longest_eval_h = max(self.longest_eval_h, c.eval_s / c.seeds / 3600)
        if c.train_s and (self.memory is None or c.memory.total > self.memory.total):
            self.memory, self.memory_key = c.memory, c.key


def by_class(costs, gpus: Mapping[str, str]) -> dict[str, ClassTotal]:
    """Per size class totals of ``costs``; ``gpus`` names each class's GPU."""
    out: dict[str, ClassTotal] = {}
    for c in costs:
        out.setdefault(c.size, ClassTotal(c.size, gpus.get(c.size, "h100"))).add(c)
    return out
