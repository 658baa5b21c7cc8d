"""Training throughput of the paper's recipe: the project's path vs a plain loop.

Builds a backbone from its published config with random weights (no download), draws
FRoG-like prompt lengths, and times the same batches through

- ``dfil``: the project's path (``dfil.model`` DualPathModel, full DFIL loss, padding-free
  packed batches, bf16 autocast on GPU, no per-step host synchronisation);
- ``plain``: a plain transformers + peft loop (LoRA on the same modules, a linear
  classifier on the last token of right-padded batches, ``loss.item()`` every step).

Prints tokens/s, steps/s, model FLOPs utilisation, peak memory and the projected time of
one paper cell (20 epochs x 1,636 examples, batch 8) for both. Example::

    python benchmarks/train_throughput.py --arch qwen2.5-7b --batch 8 --steps 30
    python benchmarks/train_throughput.py --arch tiny-llama --device cpu --steps 10

MFU counts 6 N FLOPs per trained token (N = all backbone parameters, the usual convention)
and also 4 N (a frozen backbone needs no weight gradients) plus attention, against the
device's dense bf16 peak (H100/H200 SXM: 989 TFLOP/s) or, on a CPU, a measured matmul peak.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
import torch.nn.functional as F
from archs import arch

from dfil.config import BackboneConfig, LoraConfig, ModelConfig
from dfil.engine.batching import Encoded, collate, collate_packed
from dfil.methods import method_spec
from dfil.model import build_model, compute_loss
from dfil.model.backbone import apply_lora, load_backbone
from dfil.model.losses import inverse_frequency_weights

PEAK_BF16 = {"H100": 989e12, "H200": 989e12, "A100": 312e12}
PAPER_CELL_EXAMPLES = 1636 * 20


def lengths_like_frog(n: int, seed: int, mean: float, spread: float) -> np.ndarray:
    """Prompt lengths ~ N(mean, spread) clipped to [48, 256] (App. C.2 prompt + question)."""
    rng = np.random.default_rng(seed)
    return np.clip(np.round(rng.normal(mean, spread, n)), 48, 256).astype(int)


def synthetic(n: int, vocab: int, seed: int, mean: float, spread: float) -> Encoded:
    rng = np.random.default_rng(seed + 1)
    ids = tuple(tuple(rng.integers(3, vocab, size=k).tolist())
                for k in lengths_like_frog(n, seed, mean, spread))
    return Encoded(ids=ids, labels=rng.integers(0, 8, n), p=rng.random(n).astype(np.float32))


def peak_flops(device: torch.device) -> tuple[float, str]:
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        for key, value in PEAK_BF16.items():
            if key in name:
                return value, f"{name} dense bf16 peak"
        return float("nan"), f"{name} (peak unknown)"
    a = torch.randn(2048, 2048)
    torch.mm(a, a)
    start = time.perf_counter()
    for _ in range(5):
        torch.mm(a, a)
    return 5 * 2 * 2048**3 / (time.perf_counter() - start), "measured fp32 matmul peak (CPU)"


def train_flops_per_token(cfg: dict, n_params: int, mean_len: float) -> tuple[float, float]:
    """(6N, 4N + attention) FLOPs per token."""
    attn = 4 * cfg["num_hidden_layers"] * cfg["hidden_size"] * mean_len  # QK^T and AV, fwd
    return 6 * n_params, 4 * n_params + 3 * attn


def nf4_weight_gib(n_params: int) -> float:
    """Weight memory of an NF4 double-quantised model: 4 bits a weight plus 8-bit absmax
    per 64-block with a second-level fp32 constant per 256 blocks (QLoRA, Dettmers 2023)."""
    bits = 4 + 8 / 64 + 32 / (64 * 256)
    return n_params * bits / 8 / 2**30


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(step, data: Encoded, batch: int, steps: int, warmup: int, device) -> tuple:
    """Run ``step(index)`` on consecutive batches; seconds and tokens after ``warmup``."""
    tokens = 0
    for i in range(warmup + steps):
        if i == warmup:
            sync(device)
            start, tokens = time.perf_counter(), 0
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
        index = np.arange(i * batch, (i + 1) * batch) % len(data)
        step(index)
        tokens += sum(len(data.ids[j]) for j in index)
    sync(device)
    return time.perf_counter() - start, tokens


def run_dfil(backbone_cfg, data, batch, steps, warmup, device, dtype, packed=True):
    cfg = ModelConfig(method="dfil", backbone=backbone_cfg, lora=LoraConfig(r=16, alpha=32))
    model = build_model(cfg, seed=0).to(device)
    spec = method_spec("dfil")
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01)
    weights = inverse_frequency_weights(torch.from_numpy(data.labels), 8).to(device)

    def step(index):
        with torch.autocast(device.type, dtype=dtype or torch.float32, enabled=dtype is not None):
            if packed:
                ids, pos, last, y, p = collate_packed(data, index, device)
                out = model.forward_packed(ids, pos, last)
            else:
                ids, mask, y, p = collate(data, index, 0, device)
                out = model(ids, mask)
        compute_loss(out, y, p, spec, cfg.loss, weights).total.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    return (*timed(step, data, batch, steps, warmup, device), model)


def run_plain(backbone_cfg, data, batch, steps, warmup, device, dtype):
    base = load_backbone(backbone_cfg)
    torch.manual_seed(0)
    model = apply_lora(base, LoraConfig(r=16, alpha=32)).to(device)
    head = torch.nn.Linear(base.config.hidden_size, 8).to(device)
    params = [p for p in model.parameters() if p.requires_grad] + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01)

    def step(index):
        ids, mask, y, _ = collate(data, index, 0, device)
        with torch.autocast(device.type, dtype=dtype or torch.float32, enabled=dtype is not None):
            states = model(input_ids=ids, attention_mask=mask).last_hidden_state
            last = mask.sum(1) - 1
            logits = head(states[torch.arange(len(index), device=device), last].float())
        loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()  # the usual per-step logging sync

    return (*timed(step, data, batch, steps, warmup, device), model)


def report(name, seconds, tokens, steps, n_params, flops_tok, peak, device, mean_len) -> dict:
    tps = tokens / seconds
    cell_tokens = PAPER_CELL_EXAMPLES * mean_len
    row = {"path": name, "tokens_per_s": tps, "steps_per_s": steps / seconds,
           "mfu_6N": tps * flops_tok[0] / peak, "mfu_4N_attn": tps * flops_tok[1] / peak,
           "projected_cell_minutes": cell_tokens / tps / 60}
    if device.type == "cuda":
        row["peak_gpu_gib"] = torch.cuda.max_memory_allocated(device) / 2**30
    return row


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="qwen2.5-7b")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--mean-len", type=float, default=120.0)
    ap.add_argument("--len-spread", type=float, default=30.0)
    ap.add_argument("--paths", default="dfil,dfil-padded,plain")
    args = ap.parse_args(argv)
    device = torch.device(args.device)
    cfg = arch(args.arch)
    dtype = torch.bfloat16 if device.type == "cuda" else None
    backbone = BackboneConfig(name=args.arch, arch=cfg,
                              dtype="bfloat16" if device.type == "cuda" else "float32")
    n_items = (args.warmup + args.steps) * args.batch
    data = synthetic(n_items, cfg["vocab_size"], 0, args.mean_len, args.len_spread)
    mean_len = float(np.mean([len(x) for x in data.ids]))
    peak, peak_note = peak_flops(device)
    with torch.device("meta"):
        from transformers import AutoConfig, AutoModel

        c = dict(cfg)
        n_params = sum(p.numel() for p in AutoModel.from_config(
            AutoConfig.for_model(c.pop("model_type"), **c)).parameters())
    flops_tok = train_flops_per_token(cfg, n_params, mean_len)
    rows = []
    with torch.device(device) if device.type == "cuda" else _null():
        for path in args.paths.split(","):
            if path == "plain":
                seconds, tokens, model = run_plain(backbone, data, args.batch, args.steps,
                                                   args.warmup, device, dtype)
            else:
                seconds, tokens, model = run_dfil(backbone, data, args.batch, args.steps,
                                                  args.warmup, device, dtype,
                                                  packed=path == "dfil")
            rows.append(report(path, seconds, tokens, args.steps, n_params, flops_tok, peak,
                               device, mean_len))
            del model
            if device.type == "cuda":
                torch.cuda.empty_cache()
    print(json.dumps({"arch": args.arch, "device": str(device), "peak_flops": peak,
                      "peak_note": peak_note, "params": n_params, "batch": args.batch,
                      "mean_len": mean_len, "results": rows,
                      "nf4_weights_gib_estimate": nf4_weight_gib(n_params)}, indent=2))
    for r in rows:
        print(f"{r['path']:>12}: {r['tokens_per_s']:10.0f} tok/s  {r['steps_per_s']:6.2f} step/s"
              f"  MFU(6N) {100 * r['mfu_6N']:5.1f}%  MFU(4N+attn) {100 * r['mfu_4N_attn']:5.1f}%"
              f"  paper cell {r['projected_cell_minutes']:7.1f} min"
              + (f"  peak {r['peak_gpu_gib']:.1f} GiB" if "peak_gpu_gib" in r else ""))


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    main()
