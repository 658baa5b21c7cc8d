"""Which ops of a training step make the host wait for the device, recorded on the CPU
(a CUDA sync's proxy): each with the innermost frame of the code that called it."""

from __future__ import annotations

import traceback

from torch.utils._python_dispatch import TorchDispatchMode

#: Ops that make the host wait for the device on CUDA (a scalar read, a data-dependent
#: shape).
SYNC_OPS = ("aten._local_scalar_dense", "aten.nonzero", "aten.masked_select")
#: Where a sync may come from without counting against the project: transformers' own
#: code, by function name. Empty: the mask-free attention (dfil.model.attention) keeps
#: transformers from testing masks and positions on the host (its find_packed_sequence_
#: indices and _ignore_causal_mask_sdpa do, with .all(), on the masked path).
ALLOWED = frozenset()
#: The CPU stand-in for flash-attn's kernel reads the boundaries on the host; it is the
#: test's, not part of the step under test.
STAND_IN = "tests/varlen.py"


class SyncOps(TorchDispatchMode):
    """Records each sync op with the innermost frame of the code that called it."""

    def __init__(self):
        super().__init__()
        self.found = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if str(func).startswith(SYNC_OPS):
            stack = traceback.extract_stack()[:-1]
            if not any(STAND_IN in f.filename for f in stack):
                caller = next((f for f in reversed(stack) if "/torch/" not in f.filename),
                              stack[-1])
                if caller.name not in ALLOWED:
                    self.found.append(f"{func} from {caller.filename}:{caller.lineno} "
                                      f"({caller.name})")
        return func(*args, **(kwargs or {}))
