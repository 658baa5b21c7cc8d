"""Published architecture configs of the paper's backbones: :mod:`dfil.cost.archs`, where
the cost model reads them too (re-exported here for the benchmarks and tests)."""

from dfil.cost.archs import ARCHS, MODEL_IDS, arch

__all__ = ["ARCHS", "MODEL_IDS", "arch"]
