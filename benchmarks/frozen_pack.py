"""A frozen backbone's pack step on the CPU: the K seeds' heads one after the other, as
the pack trains them (:func:`dfil.train.pack.pack_step`), against one stacked computation
of all K (``torch.func.vmap`` over the heads' stacked parameters, the same losses,
per-seed clipping and one fused AdamW over the stacked tensors), and K solo steps
(:func:`dfil.train.step.train_step`). Cached features of SmolLM2-135M's width, random.

    python benchmarks/frozen_pack.py [--method dfil] [--seeds 3] [--batch 8] [--steps 300]

Prints each path's milliseconds a step (median of ``--rounds``, paths alternating) and
the stacked / loop ratio. First the stacked heads are checked against the loop: the same
outputs from the same start, and the same clipped gradients after one step of each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from torch.func import functional_call, vmap

from dfil.config.cell.model import LossConfig, ModelConfig
from dfil.engine.loader import Batch
from dfil.model.dual_path import DualPathModel, HeadOutputs, build_heads
from dfil.model.objective import compute_loss
from dfil.model.pack import PackedModel, PackStep
from dfil.train.pack import PackSetup, pack_step
from dfil.train.step import StepSetup, make_optimizer, train_step

#: SmolLM2-135M's hidden size: the embedded default's cached features.
WIDTH = 576
#: Every path's gradient clipping (the recipe's max norm, per seed).
GRAD_CLIP = 1.0


def seeds_heads(method: str, k: int) -> list:
    """K seeds' heads (feature standardisation fitted on random features), as the pack
    builds them: the global RNG seeded with each seed first."""
    config = ModelConfig(method=method, adapter="none", heads={"feature_norm": "standardize"})
    out = []
    for seed in range(k):
        torch.manual_seed(seed)
        heads = build_heads(config, WIDTH)
        heads.fit_feature_norm(torch.randn(256, WIDTH))
        out.append(heads)
    return out


def optimizer(params) -> tuple:
    opt = make_optimizer([{"params": list(params), "lr": 1e-3}], (0.9, 0.999), 1e-8, 0.01)
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda _: 1.0)


def loop_path(method: str, k: int, batch: Batch):
    """The pack's own step over K seeds."""
    heads = seeds_heads(method, k)
    pack = PackedModel(None, heads, PackStep(k), list(range(k)))
    opts = [optimizer(p for p in h.parameters() if p.requires_grad) for h in heads]
    setup = PackSetup(pack, [o for o, _ in opts], [s for _, s in opts], LossConfig(),
                      [None] * k, GRAD_CLIP, None)
    pack.train()
    return (lambda: pack_step(setup, batch)), setup


def solo_path(method: str, k: int, batch: Batch, b: int):
    """K solo steps, one a seed, each on its own rows."""
    steps = []
    for heads in seeds_heads(method, k):
        model = DualPathModel(None, heads)
        opt, sched = optimizer(p for p in heads.parameters() if p.requires_grad)
        steps.append(StepSetup(model, opt, sched, LossConfig(), None, GRAD_CLIP, None))
        model.train()
    parts = [Batch(size=b, rows=batch.rows[i * b:(i + 1) * b], y=batch.y[i * b:(i + 1) * b],
                   p=batch.p[i * b:(i + 1) * b], features=batch.features[i * b:(i + 1) * b])
             for i in range(k)]

    def step():
        for setup, part in zip(steps, parts, strict=True):
            train_step(setup, part)
    return step


def stacked_path(method: str, k: int, batch: Batch, b: int):
    """The K seeds' heads as one vmapped computation over stacked parameters."""
    heads = seeds_heads(method, k)
    spec = heads[0].spec
    own = [dict(h.named_parameters()) for h in heads]
    stacked = {n: torch.nn.Parameter(torch.stack([o[n].detach() for o in own]))
               for n, p in own[0].items() if p.requires_grad}
    frozen = {n: torch.stack([o[n].detach() for o in own])
              for n, p in own[0].items() if not p.requires_grad}
    buffers = {n: torch.stack([dict(h.named_buffers())[n] for h in heads])
               for n, _ in heads[0].named_buffers()}
    opt, sched = optimizer(stacked.values())
    x = batch.features.view(k, b, -1)
    heads[0].train()

    with torch.no_grad():  # the outputs the method has (vmap returns tensors only)
        first = heads[0](batch.features[:b])
    fields = [f for f in ("main_logits", "p", "mf_scores") if getattr(first, f) is not None]

    def outputs(params, bufs, xs):
        out = functional_call(heads[0], (params, bufs), (xs,))
        return tuple(getattr(out, f) for f in fields)

    def forward() -> list[HeadOutputs]:
        outs = vmap(outputs)({**stacked, **frozen}, buffers, x)
        return [HeadOutputs(**{f: o[i] for f, o in zip(fields, outs, strict=True)})
                for i in range(k)]

    def step():
        total = sum(compute_loss(out, batch.y[i * b:(i + 1) * b], batch.p[i * b:(i + 1) * b],
                                 spec, LossConfig(), None).total
                    for i, out in enumerate(forward()))
        total.backward()
        grads = [p.grad for p in stacked.values() if p.grad is not None]
        norms = torch.stack([g.reshape(k, -1).norm(dim=1) for g in grads]).norm(dim=0)
        scale = (GRAD_CLIP / (norms + 1e-6)).clamp(max=1.0)  # clip_grad_norm_ per seed
        for g in grads:
            g.mul_(scale.view(-1, *[1] * (g.dim() - 1)))
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
    return step, forward, stacked, opt


def same_step(looped, stacking, batch: Batch) -> None:
    """The loop and the stacked heads compute the same thing (to float rounding): the
    same outputs from the same start, and after one step of each the same clipped
    gradients (AdamW's first moment after its first step, 0.1 x the gradient: the update
    itself is the same elementwise function on both)."""
    loop, setup = looped
    stacked, forward, params, opt = stacking
    pack = setup.pack
    with torch.no_grad():
        for mine, theirs in zip(forward(), pack.forward_features(batch.features), strict=True):
            for field in ("main_logits", "p", "mf_scores"):
                if getattr(theirs, field) is not None:
                    torch.testing.assert_close(getattr(mine, field), getattr(theirs, field))
    loop()
    stacked()
    for k, (heads, seed_opt) in enumerate(zip(pack.heads, setup.optimizers, strict=True)):
        for name, tensor in heads.named_parameters():
            if name in params:
                torch.testing.assert_close(opt.state[params[name]]["exp_avg"][k],
                                           seed_opt.state[tensor]["exp_avg"])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", default="dfil")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8, help="examples a seed a step")
    ap.add_argument("--steps", type=int, default=300, help="timed steps a round")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)  # as the DAG's jobs run
    k, b = args.seeds, args.batch
    gen = torch.Generator().manual_seed(0)
    n = k * b
    batch = Batch(size=n, rows=torch.arange(n), y=torch.randint(0, 8, (n,), generator=gen),
                  p=torch.rand(n, generator=gen), features=torch.randn(n, WIDTH, generator=gen))
    loop, setup = loop_path(args.method, k, batch)
    stacked, forward, params, opt = stacked_path(args.method, k, batch, b)
    same_step((loop, setup), (stacked, forward, params, opt), batch)
    paths = {"loop": loop, "stacked": stacked, "solo": solo_path(args.method, k, batch, b)}
    times: dict[str, list[float]] = {name: [] for name in paths}
    for r in range(args.rounds):
        order = list(paths) if r % 2 == 0 else list(reversed(paths))
        for name in order:
            for _ in range(20):  # warm-up
                paths[name]()
            start = time.perf_counter()
            for _ in range(args.steps):
                paths[name]()
            times[name].append((time.perf_counter() - start) / args.steps * 1e3)
    ms = {name: statistics.median(t) for name, t in times.items()}
    report = {"method": args.method, "seeds": k, "batch_per_seed": b, "ms_per_step": ms,
              "ms_per_step_rounds": times, "ratio_stacked_to_loop": ms["stacked"] / ms["loop"],
              "ratio_loop_to_solo": ms["loop"] / ms["solo"]}
    print(json.dumps(report, indent=2))
    for name, value in ms.items():
        print(f"{name:8s} {value:7.2f} ms a step of {k} seeds x {b} examples")
    print(f"stacked / loop: {report['ratio_stacked_to_loop']:.2f}x the time; "
          f"loop / {k} solo steps: {report['ratio_loop_to_solo']:.2f}x")


if __name__ == "__main__":
    main()
