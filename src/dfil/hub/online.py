"""The hub's offline flags, lifted for a fetch and only there.

Quickstart and CI export ``HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1``
for every process, so a job that reaches for the network fails at once instead of
downloading. huggingface_hub reads ``HF_HUB_OFFLINE`` when it is imported
(``huggingface_hub.constants.HF_HUB_OFFLINE``, looked up at each request), so lifting the
flag for a fetch inside a running process sets that constant as well as the environment,
and :func:`online` puts both back when the fetch ends.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

#: The variables that keep huggingface_hub, transformers and datasets off the network.
OFFLINE_FLAGS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


@contextlib.contextmanager
def online() -> Iterator[None]:
    """Within the block the hub clients may use the network; afterwards the flags are as
    they were (set again if they were set)."""
    from huggingface_hub import constants

    saved_env = {k: os.environ.get(k) for k in OFFLINE_FLAGS}
    saved_const = constants.HF_HUB_OFFLINE
    for key in OFFLINE_FLAGS:
        os.environ[key] = "0"
    constants.HF_HUB_OFFLINE = False
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = saved_const
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def is_offline() -> bool:
    """Whether huggingface_hub in this process refuses the network."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)
