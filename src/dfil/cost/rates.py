"""What the projection assumes, each figure with its source: GPUs' peak bf16 FLOP/s, the
trainers' measured throughput (hence their MFU), split sizes and prompt lengths.

MFU here is measured tokens/s x this package's FLOPs per token (:mod:`dfil.cost.flops`,
~4N for LoRA) / peak, so that a projection divides by the same rule it multiplied by. The
measurements' own MFU figures are stated against 6N (N = 7.07e9, Qwen2.5-7B without its
input embedding) and are ~1.6x these.

Each measurement says which trainer ran, on which device and when: ``dfil`` (the
project's training step, :mod:`dfil.train.step`) and ``plain`` (a plain
transformers+peft loop), both timed by ``benchmarks/train_throughput.py``. A site's
acceptance run (:mod:`dfil.cost.acceptance`) replaces the ``dfil`` figures with its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: Dense bf16 tensor-core peak, FLOP/s (no sparsity), from NVIDIA's datasheets (H100 SXM5
#: and H200 SXM share GH100's compute; H100 PCIe runs lower clocks and fewer SMs).
PEAK_BF16 = {"h100": 989.4e12, "h200": 989.4e12, "h100-pcie": 756.0e12, "a100": 312.0e12}
def gpu_of(device_name: str) -> str | None:
    """The :data:`PEAK_BF16` key of a CUDA device's name ("NVIDIA H100 80GB HBM3" ->
    h100, "NVIDIA H100 PCIe" -> h100-pcie); None for a GPU this model does not know."""
    name = device_name.lower()
    for key in ("h200", "h100", "a100"):
        if key in name:
            return f"{key}-pcie" if key == "h100" and "pcie" in name else key
    return None


#: GPU memory a job can use, GiB (nvidia-smi's total less ~0.5 GiB of CUDA context).
GPU_GIB = {"h100": 79.1, "h200": 139.8, "h100-pcie": 79.1, "a100": 79.5}


@dataclass(frozen=True)
class Throughput:
    """A measured training throughput and what it was measured on: the trainer that ran
    (``name``), when (``when``) and where (``where``), and the setup (``source``)."""

    name: str
    tokens_per_s: float
    batch: int
    gpu: str
    arch: str | Mapping
    """A backbone of :mod:`dfil.cost.archs` by name, or its transformers config fields."""
    prompt_tokens: float
    source: str
    when: str = ""
    where: str = ""
    by: str = ""
    """What measured it (``the acceptance run``), where that is not a session by hand."""

    def label(self) -> str:
        """One line: the speed, the trainer, when and where (and by what) it was measured."""
        by = f" by {self.by}" if self.by else ""
        return (f"{self.tokens_per_s:,.0f} tokens/s, {self.name}; measured{by} on "
                f"{self.where}, {self.when}; {self.source}")


#: The setup of the recorded measurements (``benchmarks/train_throughput.py --arch
#: qwen2.5-7b --paths dfil,plain``; padded batches, torch deterministic algorithms on).
_SETUP = ("benchmarks/train_throughput.py --arch qwen2.5-7b: random weights, bf16, LoRA q,v "
          "r16, padded batches of ~120-token prompts")
_WHERE, _WHEN = "an NVIDIA H100 80GB HBM3", "2026-11-26"
#: The benchmark holds both paths' models on the GPU at once: its peaks count two 7B
#: decoders' weights (13.2 GiB each) and one step's activations.
_PEAK = "peak {} GiB with both paths' models resident"
#: Recorded measurements, by (trainer, batch).
MEASURED = {
    ("dfil", 8): Throughput("the project's training step (dfil.train.step), batch 8", 5239, 8,
                            "h100", "qwen2.5-7b", 120,
                            _SETUP + "; 22.5% MFU by 6N; " + _PEAK.format(34.7), _WHEN,
                            _WHERE),
    ("dfil", 32): Throughput("the project's training step (dfil.train.step), batch 32", 10365,
                             32, "h100", "qwen2.5-7b", 120,
                             _SETUP + "; 44.5% MFU by 6N; " + _PEAK.format(59.1), _WHEN,
                             _WHERE),
    ("plain", 8): Throughput("a plain transformers+peft loop, batch 8", 5164, 8, "h100",
                             "qwen2.5-7b", 120, _SETUP + "; 22.1% MFU by 6N", _WHEN, _WHERE),
    ("plain", 32): Throughput("a plain transformers+peft loop, batch 32", 9911, 32, "h100",
                              "qwen2.5-7b", 120, _SETUP + "; 42.5% MFU by 6N", _WHEN, _WHERE),
}
#: Trainers a projection can use: the project's step and the plain loop it is timed against.
TRAINERS = ("dfil", "plain")


#: Measurements by (trainer, batch): :data:`MEASURED`, or it with the acceptance run's.
Table = Mapping[tuple[str, int], Throughput]


def measured(trainer: str, table: Table = MEASURED) -> list[Throughput]:
    """``trainer``'s recorded measurements, smallest batch first (none: not yet timed)."""
    return [table[k] for k in sorted(k for k in table if k[0] == trainer)]


def timed(trainer: str, table: Table = MEASURED) -> list[Throughput]:
    """``trainer``'s measurements, smallest batch first; ``ValueError`` for a trainer the
    model does not know or one ``table`` has no measurement of."""
    if trainer not in TRAINERS:
        raise ValueError(f"unknown trainer {trainer!r}; expected one of {list(TRAINERS)}")
    found = measured(trainer, table)
    if not found:
        raise ValueError(f"trainer {trainer!r} has no measurement: time it on a GPU "
                         "(benchmarks/train_throughput.py, recorded in "
                         "dfil.cost.rates.MEASURED, or `snakemake acceptance` on a cluster)")
    return found


@dataclass(frozen=True)
class Prompts:
    """Mean and longest tokenized prompt of a set (the paper's prompt style)."""

    mean: float
    longest: int


#: Measured with SmolLM2-135M's tokenizer (the one shipping offline) by
#: benchmarks/prompt_lengths.py: FRoG on the 30 real mask_quant items of
#: the FRoG repository's samples, SST-5 on its 2,210-sentence test split, QuRe on its 401
#: four-quantifier sentences, the probes on `dfil probes`' sets (csmc and entailment: both
#: sentences of each pair). STS22 is not here: its English pairs are news articles, taken
#: as filling data.max_length (256; the trainer keeps the end).
PROMPTS = {
    "frog": Prompts(142.5, 171), "sst5": Prompts(41.1, 85), "sts22": Prompts(256.0, 256),
    "qure": Prompts(118.0, 188), "compositional": Prompts(112.3, 126),
    "csmc": Prompts(79.7, 84), "ipr": Prompts(79.5, 86), "entailment": Prompts(83.0, 87),
    "naturalistic": Prompts(103.3, 111),
}
#: Tokens of another backbone's tokenizer per SmolLM2 token: assumed 1 (not measured; no
#: other tokenizer ships offline). Qwen2.5's 151k and Llama 3's 128k vocabularies likely
#: give fewer tokens on English text than SmolLM2's 49k, Mistral's and Phi-3.5's 32k more.
TOKENIZER_FACTOR = {"smollm2-135m": 1.0}
DEFAULT_TOKENIZER_FACTOR = 1.0

#: Examples per split before the 80/20 train/val cut of the pool (the paper's data section
#: and Table 15 for FRoG: 2,044 easy -> 1,636/408, 2,044 hard; SST-5's 8,544-sentence train
#: and 2,210 test splits, Socher et al. 2013; STS22 en: 1.74k train and 197 test pairs, the
#: hub viewer of mteb/sts22-crosslingual-sts).
POOL_TEST = {"frog": (2044, 2044), "sst5": (8544, 2210), "sts22": (1740, 197),
             # The stand-in task made in code (dfil.data.synthetic's ORDINAL_STANDIN_*).
             "ordinal_standin": (1000, 500)}
#: Train rows of FRoG's pool (T15); the others: round(0.8 x pool).
TRAIN_ROWS = {"frog": 1636}
#: Items of each probe set scored by an evaluation (csmc and entailment: 2 per pair), and
#: QuRe's transfer set (the paper's 401 sentences).
PROBE_ITEMS = {"compositional": 900, "csmc": 400, "entailment": 2688, "ipr": 40,
               "naturalistic": 320}
QURE_ITEMS = 401
#: Weights read per second when a job loads its backbone (an assumed shared filesystem).
LOAD_BYTES_PER_S = 1.0e9
