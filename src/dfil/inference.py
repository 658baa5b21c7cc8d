"""The public name of :mod:`dfil.core.inference`: nearest-center inference, composition and
entailment (Thm 1, 2)."""

from dfil.core.inference import *  # noqa: F403
from dfil.core.inference import __all__  # noqa: F401
