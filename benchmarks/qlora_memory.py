"""Does a 72B backbone fit one GPU in 4-bit? Measured on a few real layers, extrapolated.

Builds the backbone's architecture (default Qwen2.5-72B) with only ``--layers`` decoder
layers (random weights, saved once), loads each through the project's own 4-bit path
(NF4 with double quantisation and bf16 compute, ``dfil.model.lora.prepare_kbit``: float32
norms, bf16 embeddings and residual stream; LoRA; the DFIL heads) and trains a few steps
at the paper's batch (8 prompts of ~120 tokens, bf16 autocast), reading the peak memory.
Memory grows linearly in the number of layers (weights, LoRA, optimizer state and saved
activations are per layer; embeddings, heads and the batch are not), so the full depth's
figure is extrapolated from two measured depths and printed as such, never as measured::

    python benchmarks/qlora_memory.py                       # Qwen2.5-72B, 2 and 4 layers
    python benchmarks/qlora_memory.py --checkpointing       # with activation checkpointing
    python benchmarks/qlora_memory.py --pack 3              # 3 seeds over one 4-bit base

With ``--pack K`` the K seeds of one configuration train together over the one 4-bit
base (``dfil.model.pack``, ``dfil.train.pack``), ``--batch`` prompts a seed; it also
prints the tokens/s of the steps after the first, all seeds' tokens counted.

Needs CUDA and bitsandbytes: the 4-bit kernels and the memory measured are the GPU's.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from archs import arch
from train_throughput import nf4_weight_gib, synthetic

from dfil.config.cell import BackboneConfig, LoraConfig, ModelConfig
from dfil.engine.loader import Loader
from dfil.model import build_model
from dfil.model.losses import inverse_frequency_weights
from dfil.model.pack import build_pack
from dfil.train.pack import PackSetup, pack_step
from dfil.train.step import StepSetup, make_optimizer, train_step

GIB = 2**30


def save_truncated(name: str, layers: int, out: Path) -> dict:
    """``name``'s architecture with ``layers`` decoder layers, random bf16 weights, saved
    to ``out``; returns its config."""
    from transformers import AutoConfig, AutoModel

    cfg = dict(arch(name), num_hidden_layers=layers)
    config = AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    with torch.device("cuda"):  # initialising billions of weights is quick on the GPU
        model = AutoModel.from_config(config, dtype=torch.bfloat16)
    model.save_pretrained(out)
    del model
    torch.cuda.empty_cache()
    return config.to_dict()


def measure(model_dir: Path, batch: int, steps: int, mean_len: float,
            checkpointing: bool, pack: int = 1) -> dict:
    """Peak and resident GPU memory of LoRA training through the project's 4-bit path
    (``pack`` > 1: that many seeds in one pack, ``batch`` prompts each), and the tokens/s
    of the steps after the first."""
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    backbone = BackboneConfig(name="truncated", model_id=str(model_dir), quantized=True,
                              dtype="bfloat16", gradient_checkpointing=checkpointing)
    cfg = ModelConfig(method="dfil", backbone=backbone, lora=LoraConfig(r=16, alpha=32))
    model = build_pack(cfg, list(range(pack))) if pack > 1 else build_model(cfg, seed=0)
    model.heads.to("cuda")  # the backbone is already placed by its device_map
    loaded = torch.cuda.memory_allocated() - before
    base = model.backbone if pack > 1 else model.backbone
    dtypes = sorted({str(p.dtype) for p in base.parameters()})
    rows = batch * pack
    data = synthetic(rows * steps, base.config.vocab_size, 0, mean_len, 30.0)
    loader = Loader(data, torch.device("cuda"), "padded", pad_id=0)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = make_optimizer([{"params": trainable, "lr": 1e-4}], (0.9, 0.999), 1e-8, 0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    weights = inverse_frequency_weights(loader.labels, 8)
    if pack > 1:
        setup = PackSetup(model, [optimizer], [scheduler], cfg.loss, [weights] * pack, 1.0,
                          torch.bfloat16)
    else:
        setup = StepSetup(model, optimizer, scheduler, cfg.loss, weights, 1.0, torch.bfloat16)
    model.train()
    plan = [np.arange(i, i + rows) for i in range(0, rows * steps, rows)]
    started = None
    for i, b in enumerate(loader(plan)):
        if i == 1:
            torch.cuda.synchronize()
            started = time.perf_counter()
        (pack_step if pack > 1 else train_step)(setup, b)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - started if started is not None else float("nan")
    tokens = int(data.lengths[np.concatenate(plan[1:])].sum()) if steps > 1 else 0
    peak = torch.cuda.max_memory_allocated() - before
    del model, optimizer, loader
    torch.cuda.empty_cache()
    return {"resident_after_load_gib": loaded / GIB, "peak_training_gib": peak / GIB,
            "param_dtypes": dtypes, "longest_prompt": int(data.lengths.max()),
            "seeds": pack, "tokens_per_s_after_first_step": tokens / seconds}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="qwen2.5-72b")
    ap.add_argument("--layers", default="2,4", help="two depths to measure, e.g. 2,4")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--mean-len", type=float, default=120.0)
    ap.add_argument("--checkpointing", action="store_true")
    ap.add_argument("--pack", type=int, default=1, help="seeds trained together (1: solo)")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("qlora_memory.py needs CUDA: bitsandbytes' 4-bit kernels and the "
                         "memory it measures are a GPU's; run it on a GPU machine")
    if args.steps < 2:
        raise SystemExit(f"--steps {args.steps}: give at least 2 (the first is not timed)")
    k1, k2 = sorted(int(k) for k in args.layers.split(","))
    if k1 < 1 or k1 == k2:
        raise SystemExit(f"--layers {args.layers}: give two different depths >= 1")
    full = arch(args.arch)["num_hidden_layers"]
    measured = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k in (k1, k2):
            out = Path(tmp) / f"l{k}"
            save_truncated(args.arch, k, out)
            measured[k] = measure(out, args.batch, args.steps, args.mean_len,
                                  args.checkpointing, args.pack)
    per_layer = {key: (measured[k2][key] - measured[k1][key]) / (k2 - k1)
                 for key in ("resident_after_load_gib", "peak_training_gib")}
    extrapolated = {key: measured[k1][key] + (full - k1) * per_layer[key] for key in per_layer}
    total = torch.cuda.get_device_properties(0).total_memory / GIB
    from transformers import AutoConfig, AutoModel

    with torch.device("meta"):
        c = arch(args.arch)
        n_params = sum(p.numel() for p in AutoModel.from_config(
            AutoConfig.for_model(c.pop("model_type"), **c)).parameters())
    report = {
        "arch": args.arch, "device": torch.cuda.get_device_name(0), "gpu_total_gib": total,
        "batch": args.batch, "seeds": args.pack, "mean_len": args.mean_len,
        "checkpointing": args.checkpointing,
        "measured": {str(k): v for k, v in measured.items()},
        "per_layer_gib": per_layer,
        "extrapolated_full_depth": {"layers": full, **extrapolated,
                                    "label": f"EXTRAPOLATED linearly from measured {k1}- and "
                                             f"{k2}-layer models, not measured"},
        "fits_one_gpu_extrapolated": extrapolated["peak_training_gib"] < 0.95 * total,
        "nf4_weights_gib_analytic": nf4_weight_gib(n_params),
    }
    print(json.dumps(report, indent=2))
    print(f"{args.arch} 4-bit, {args.pack} seed(s) of batch {args.batch}, {full} layers: "
          f"peak {extrapolated['peak_training_gib']:.1f} GiB "
          f"EXTRAPOLATED from {k1} and {k2} measured layers "
          f"({per_layer['peak_training_gib']:.3f} GiB per layer) on a {total:.0f} GiB GPU: "
          f"{'fits' if report['fits_one_gpu_extrapolated'] else 'does NOT fit'}")


if __name__ == "__main__":
    main()
