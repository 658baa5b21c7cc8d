"""CPU hot paths of evaluation: pairwise violations over 10^6 predictions against one numpy
argsort of the same array (target: within 20x), and the vectorised 10^6-point grid check.

    python benchmarks/hot_paths.py [--n 1000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dfil.core.metrics import pairwise_violations
from dfil.core.quantifiers import QURE_CENTERS
from dfil.evaluate.protocols import grid_check


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    p = rng.random(args.n)
    pred = rng.integers(0, 8, args.n)
    t_sort = best_of(lambda: np.argsort(p), args.repeats)
    t_pv = best_of(lambda: pairwise_violations(p, pred), args.repeats)
    t_grid = best_of(lambda: grid_check(QURE_CENTERS, [0.1] * 8, [args.n]), args.repeats)
    print(f"argsort of {args.n:,} floats:        {t_sort * 1e3:8.1f} ms")
    print(f"pairwise_violations, {args.n:,}:      {t_pv * 1e3:8.1f} ms  "
          f"ratio {t_pv / t_sort:5.1f}x argsort (target <= 20x)")
    print(f"grid check, {args.n:,} points, nearest + argmax: {t_grid * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
