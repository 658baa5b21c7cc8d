"""Training throughput of the paper's recipe: the project's step vs a plain loop.

Builds a backbone from its published config with random weights drawn on the device (no
download; seconds for a 7B model on a GPU, where a CPU takes a minute or more), draws
FRoG-like prompt lengths, and times the same batches through

- ``dfil``: the project's training step (``dfil.train.step.train_step``: numpy batches
  sent one step ahead by ``dfil.engine.loader.Loader``, the full DFIL loss, fused AdamW,
  no host synchronisation), in the layout the project picks for the backbone's attention
  (packed with flash attention, right-padded otherwise);
- ``dfil-padded``: the same step, right-padded batches whatever the attention;
- ``dfil-grouped``: right-padded batches grouped by length (``train.group_by_length``,
  the default): other batches of the same examples, so compare tokens/s;
- ``pack``: ``--pack`` seeds of one configuration trained together over one frozen base
  (``dfil.train.pack.pack_step``: one forward and backward of the base, each seed's own
  LoRA, heads, dropout stream and clipping), each step taking ``--pack`` of the plan's
  batches, one a seed: the same examples as ``dfil``, so compare tokens/s (its steps/s
  counts a seed's batch as a step);
- ``plain``: a plain transformers + peft loop (LoRA on the same modules, a linear
  classifier on the last token of right-padded batches built per example, blocking
  copies, gradient clipping, AdamW, ``loss.item()`` every step).

Every path takes ``--warmup`` steps first; then ``--rounds`` rounds of ``--steps`` steps
each, the paths' order reversed every other round, so a slow spell of a shared machine
hits all of them. Prints the JSON report (``results[].path``, ``steps_per_s`` the median
over rounds, each round's figure) and a table. Example::

    python benchmarks/train_throughput.py --arch qwen2.5-7b --batch 8 --steps 30
    python benchmarks/train_throughput.py --arch tiny-llama --device cpu --batch 8
    python benchmarks/train_throughput.py --arch qwen2.5-7b --paths dfil,pack,plain --pack 3

MFU counts 6 N FLOPs per trained token (N = all backbone parameters, the usual convention)
and also 4 N (a frozen backbone needs no weight gradients) plus attention, against the
device's dense bf16 peak (H100/H200 SXM: 989 TFLOP/s) or, on a CPU, a measured matmul peak.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F
from archs import arch

from dfil.config.cell import BackboneConfig, LoraConfig, ModelConfig
from dfil.engine.batching import Encoded, batches, grouped_batches
from dfil.engine.device import deterministic
from dfil.engine.loader import Loader
from dfil.engine.predict import layout_for
from dfil.model import build_model
from dfil.model.backbone import load_backbone
from dfil.model.lora import apply_lora
from dfil.model.losses import inverse_frequency_weights
from dfil.model.pack import build_pack
from dfil.train.pack import PackSetup, batch_bounds, pack_step
from dfil.train.step import StepSetup, make_optimizer, train_step

PEAK_BF16 = {"H100": 989e12, "H200": 989e12, "A100": 312e12}
PAPER_CELL_EXAMPLES = 1636 * 20
PATHS = ("dfil", "dfil-padded", "dfil-grouped", "pack", "plain")


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


class DfilPath:
    """The project's training step over a plan of batches."""

    def __init__(self, name, backbone_cfg, data, device, dtype, compile_layers=False,
                 pad_multiple=1, **_):
        cfg = ModelConfig(method="dfil", backbone=backbone_cfg, lora=LoraConfig(r=16, alpha=32))
        with torch.device(device):  # random weights drawn there: a 7B model in seconds
            self.model = build_model(cfg, seed=0).to(device)
        if compile_layers:  # each decoder layer on its own: one graph, dynamic lengths
            for layer in self.model.backbone.get_base_model().layers:
                layer.compile(dynamic=True)
        trainable = [p for p in self.model.parameters() if p.requires_grad]
        optimizer = make_optimizer([{"params": trainable, "lr": 1e-4}], (0.9, 0.999), 1e-8,
                                   0.01)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
        layout = layout_for(self.model, data, "auto" if name == "dfil" else "padded")
        self.layout = layout
        self.loader = Loader(data, device, layout, pad_id=0, pad_multiple=pad_multiple)
        self.step = StepSetup(self.model, optimizer, scheduler, cfg.loss,
                              inverse_frequency_weights(self.loader.labels, 8), 1.0, dtype)
        self.grouped = name == "dfil-grouped"
        self.model.train()

    def run(self, plan):
        if self.grouped:  # the same examples, batched by length
            rows = np.concatenate(plan)
            plan = grouped_batches(rows, self.loader.enc.lengths, len(plan[0]), 0, 0)
        for batch in self.loader(plan):
            train_step(self.step, batch)
        return plan


class PackPath:
    """``seeds`` seeds of one configuration in a pack: each step takes ``seeds`` of the
    plan's batches, one a seed, through one forward and backward of the shared base."""

    def __init__(self, name, backbone_cfg, data, device, dtype, seeds=3, pad_multiple=1,
                 **_):
        cfg = ModelConfig(method="dfil", backbone=backbone_cfg, lora=LoraConfig(r=16, alpha=32))
        with torch.device(device):
            self.pack = build_pack(cfg, list(range(seeds))).to(device)
        params = [p for k in range(seeds) for p in self.pack.seed_parameters(k)]
        optimizer = make_optimizer([{"params": params, "lr": 1e-4}], (0.9, 0.999), 1e-8, 0.01)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
        self.layout = layout_for(self.pack, data, "auto")
        self.loader = Loader(data, device, self.layout, pad_id=0, pad_multiple=pad_multiple)
        weights = inverse_frequency_weights(self.loader.labels, 8)
        self.setup = PackSetup(self.pack, [optimizer], [scheduler], cfg.loss, [weights] * seeds,
                               1.0, dtype)
        self.seeds = seeds
        self.pack.train()

    def run(self, plan):
        k = self.seeds
        groups = [plan[i:i + k] for i in range(0, len(plan) - k + 1, k)]
        steps = [np.concatenate(group) for group in groups]
        for group, rows, batch in zip(groups, steps, self.loader(steps), strict=True):
            sizes = [len(b) for b in group]
            pack_step(self.setup, batch, batch_bounds(self.loader, rows, sizes), sizes)
        return steps


class PlainPath:
    """A plain transformers + peft loop, as one would write it without this project."""

    def __init__(self, name, backbone_cfg, data, device, dtype, **_):
        with torch.device(device):
            base = load_backbone(backbone_cfg)
            torch.manual_seed(0)
            self.model = apply_lora(base, LoraConfig(r=16, alpha=32)).to(device)
            self.head = torch.nn.Linear(base.config.hidden_size, 8).to(device)
        self.params = [p for p in self.model.parameters() if p.requires_grad] + list(
            self.head.parameters())
        self.opt = torch.optim.AdamW(self.params, lr=1e-4, weight_decay=0.01)
        self.data, self.device, self.dtype, self.layout = data, device, dtype, "padded"
        self.model.train()

    def collate(self, index):
        rows = [torch.tensor(self.data.ids[i], dtype=torch.long) for i in index]
        ids = torch.nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=0)
        mask = torch.nn.utils.rnn.pad_sequence([torch.ones_like(r) for r in rows],
                                               batch_first=True)
        y = torch.from_numpy(self.data.labels[np.asarray(index)])
        return ids.to(self.device), mask.to(self.device), y.to(self.device)

    def run(self, plan):
        for index in plan:
            ids, mask, y = self.collate(index)
            with torch.autocast(self.device.type, dtype=self.dtype or torch.float32,
                                enabled=self.dtype is not None):
                states = self.model(input_ids=ids, attention_mask=mask).last_hidden_state
                last = mask.sum(1) - 1
                logits = self.head(states[torch.arange(len(index), device=self.device),
                                          last].float())
            loss = F.cross_entropy(logits, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.params, 1.0)
            self.opt.step()
            self.opt.zero_grad(set_to_none=True)
            loss.item()  # the usual per-step logging sync
        return plan


def timed(path, plan, device) -> tuple[float, int, int]:
    """Seconds for ``plan`` through ``path``, the real tokens it trained on and the plan's
    batches it ran (a pack runs its seeds' batches in one step)."""
    sync(device)
    start = time.perf_counter()
    ran = path.run(plan)
    sync(device)
    seconds = time.perf_counter() - start
    rows = np.concatenate(ran)
    return seconds, int(sum(path_lengths(path)[rows])), len(rows) // len(plan[0])


def top_ops(path, plan, device, rows: int = 15) -> str:
    """torch.profiler's table of ``path``'s top ops over ``plan``, by device time on a GPU
    (self CPU time otherwise)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA]
                                           if device.type == "cuda" else [])
    sync(device)
    with profile(activities=activities) as prof:
        path.run(plan)
        sync(device)
    key = "self_device_time_total" if device.type == "cuda" else "self_cpu_time_total"
    return prof.key_averages().table(sort_by=key, row_limit=rows)


def path_lengths(path) -> np.ndarray:
    data = path.loader.enc if hasattr(path, "loader") else path.data
    return data.lengths


def report(name, layout, rounds, n_params, flops_tok, peak, device, mean_len,
           peak_mem) -> dict:
    rates = [n / s for s, _, n in rounds]
    tps = statistics.median(t / s for s, t, _ in rounds)
    cell_tokens = PAPER_CELL_EXAMPLES * mean_len
    row = {"path": name, "layout": layout, "tokens_per_s": tps,
           "steps_per_s": statistics.median(rates), "steps_per_s_rounds": rates,
           "mfu_6N": tps * flops_tok[0] / peak, "mfu_4N_attn": tps * flops_tok[1] / peak,
           "projected_cell_minutes": cell_tokens / tps / 60}
    if peak_mem is not None:
        row["peak_gpu_gib"] = peak_mem / 2**30
    return row


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="qwen2.5-7b")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=30, help="timed steps per round")
    ap.add_argument("--warmup", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mean-len", type=float, default=120.0)
    ap.add_argument("--len-spread", type=float, default=30.0)
    ap.add_argument("--paths", default="dfil,dfil-padded,plain")
    ap.add_argument("--pack", type=int, default=3, help="seeds in the pack path's pack")
    ap.add_argument("--deterministic", choices=("on", "off"), default="on",
                    help="torch deterministic algorithms for every path (train.deterministic)")
    ap.add_argument("--compile", action="store_true",
                    help="torch.compile each decoder layer of the dfil paths (dynamic=True)")
    ap.add_argument("--pad-multiple", type=int, default=None,
                    help="round padded lengths up to this (default 64 with --compile, else 1)")
    ap.add_argument("--profile", type=int, default=0, metavar="STEPS",
                    help="after timing, profile STEPS steps of each path and print its top "
                         "ops by device (or CPU) time")
    args = ap.parse_args(argv)
    paths = args.paths.split(",")
    unknown = sorted(set(paths) - set(PATHS))
    if unknown:
        raise SystemExit(f"unknown paths {unknown}; expected some of {list(PATHS)}")
    if "pack" in paths and (args.steps % args.pack or args.warmup % args.pack):
        raise SystemExit(f"--steps {args.steps}, --warmup {args.warmup}: the pack path "
                         f"takes --pack {args.pack} batches a step; give multiples of it")
    if "pack" in paths and args.compile:
        raise SystemExit("--compile: the pack path runs uncompiled; time it without")
    device = torch.device(args.device)
    cfg = arch(args.arch)
    dtype = torch.bfloat16 if device.type == "cuda" else None
    backbone = BackboneConfig(name=args.arch, arch=cfg,
                              dtype="bfloat16" if device.type == "cuda" else "float32")
    per_path = args.warmup + args.rounds * args.steps
    data = synthetic(per_path * args.batch, cfg["vocab_size"], 0, args.mean_len,
                     args.len_spread)
    mean_len = float(data.lengths.mean())
    peak, peak_note = peak_flops(device)
    with torch.device("meta"):  # parameter count only: no memory, no loop
        from transformers import AutoConfig, AutoModel

        c = dict(cfg)
        n_params = sum(p.numel() for p in AutoModel.from_config(
            AutoConfig.for_model(c.pop("model_type"), **c)).parameters())
    flops_tok = train_flops_per_token(cfg, n_params, mean_len)
    plan = batches(np.arange(len(data)), args.batch)
    with deterministic(args.deterministic == "on"):
        multiple = args.pad_multiple or (64 if args.compile else 1)
        kinds = {"plain": PlainPath, "pack": PackPath}
        built = {p: kinds.get(p, DfilPath)(p, backbone, data, device, dtype,
                                           compile_layers=args.compile, pad_multiple=multiple,
                                           seeds=args.pack) for p in paths}
        for path in built.values():
            path.run(plan[:args.warmup])
        rounds = {p: [] for p in paths}
        peaks = dict.fromkeys(paths)
        for r in range(args.rounds):
            start = args.warmup + r * args.steps
            for p in paths if r % 2 == 0 else paths[::-1]:
                if device.type == "cuda":
                    torch.cuda.reset_peak_memory_stats(device)
                rounds[p].append(timed(built[p], plan[start:start + args.steps], device))
                if device.type == "cuda":
                    peaks[p] = max(peaks[p] or 0, torch.cuda.max_memory_allocated(device))
        profiles = {p: top_ops(built[p], plan[:args.profile], device)
                    for p in paths} if args.profile else {}
    rows = [report(p, built[p].layout, rounds[p], n_params, flops_tok, peak,
                   device, mean_len, peaks[p]) for p in paths]
    rate = {r["path"]: r["steps_per_s"] for r in rows}
    out = {"arch": args.arch, "device": str(device), "torch_threads": torch.get_num_threads(),
           "deterministic": args.deterministic, "compile": args.compile,
           "pad_multiple": multiple, "peak_flops": peak, "peak_note": peak_note,
           "params": n_params, "batch": args.batch, "mean_len": mean_len,
           "warmup": args.warmup, "rounds": args.rounds, "steps_per_round": args.steps,
           "results": rows, "nf4_weights_gib_estimate": nf4_weight_gib(n_params)}
    if "dfil" in rate and "plain" in rate:
        out["ratio_dfil_to_plain_steps_per_s"] = rate["dfil"] / rate["plain"]
    tokens = {r["path"]: r["tokens_per_s"] for r in rows}
    if "pack" in tokens:
        out["pack_seeds"] = args.pack
        for other in ("dfil", "plain"):
            if other in tokens:
                out[f"ratio_pack_to_{other}_tokens_per_s"] = tokens["pack"] / tokens[other]
    print(json.dumps(out, indent=2))
    for r in rows:
        spread = f"[{min(r['steps_per_s_rounds']):.2f}-{max(r['steps_per_s_rounds']):.2f}]"
        print(f"{r['path']:>12} ({r['layout']}): {r['tokens_per_s']:10.0f} tok/s "
              f"{r['steps_per_s']:7.2f} step/s {spread:>15}  MFU(6N) {100 * r['mfu_6N']:5.1f}%"
              f"  MFU(4N+attn) {100 * r['mfu_4N_attn']:5.1f}%"
              f"  paper cell {r['projected_cell_minutes']:7.1f} min"
              + (f"  peak {r['peak_gpu_gib']:.1f} GiB" if "peak_gpu_gib" in r else ""))
    if "ratio_dfil_to_plain_steps_per_s" in out:
        print(f"dfil / plain steps/s: {out['ratio_dfil_to_plain_steps_per_s']:.2f}")
    for other in ("dfil", "plain"):
        if f"ratio_pack_to_{other}_tokens_per_s" in out:
            print(f"pack of {args.pack} / {other} tokens/s: "
                  f"{out[f'ratio_pack_to_{other}_tokens_per_s']:.2f}")
    for p, table in profiles.items():
        print(f"\n--- profile of {args.profile} {p} steps ---\n{table}")


if __name__ == "__main__":
    main()
