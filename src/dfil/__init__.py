"""Reference reproduction of the Differentiable Fuzzy Inference Layer (DFIL) paper."""

__version__ = "0.1.0"
