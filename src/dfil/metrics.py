"""The public name of :mod:`dfil.core.metrics`: pairwise monotonicity violations
(App. F.4)."""

from dfil.core.metrics import *  # noqa: F403
from dfil.core.metrics import __all__  # noqa: F401
