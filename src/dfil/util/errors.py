"""Every error class of the project, kept free of heavy imports.

:class:`InputError` and its subclasses are conditions a user must fix (a bad config key,
a damaged file, a missing input, a full disk, a read-only output): ``dfil`` reports them
as one line naming the file, key or flag and exits 2. Any other exception is a bug and
keeps its traceback. ``dfil.cli`` catches these around every subcommand, so this module
must not import torch, scipy or transformers: a CPU-only subcommand such as ``dfil grid
cell`` starts in well under a second only if catching its errors does not load them.
"""

from __future__ import annotations

import difflib
import errno
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path


def did_you_mean(value: object, known: Iterable[object], n: int = 1,
                 cutoff: float = 0.6) -> str:
    """``"did you mean 'ft'? "`` for the closest of ``known`` to ``value`` (up to ``n``,
    comma-separated), or ``""`` when none is close: the hint every unknown-name error gives."""
    close = difflib.get_close_matches(str(value), [str(k) for k in known], n=n, cutoff=cutoff)
    return f"did you mean {', '.join(map(repr, close))}? " if close else ""


class InputError(Exception):
    """Something the user must fix; the message names the file, key or flag, and the fix."""


class ConfigError(InputError, ValueError):
    """A configuration value or key is invalid (a grid, cell or table file, a command-line
    value); the message names the file and the dotted key."""


class UsageError(InputError, ValueError):
    """A command was called with flags that are missing or do not go together."""


class DataError(InputError, ValueError):
    """Bad dataset input; the message names the file and line (or the offending value)."""


class MetricsError(InputError, ValueError):
    """A metrics.json breaks its contract; the message names the file and the key."""


class RunFileError(InputError, ValueError):
    """A run directory's file (a training summary, the attempts record) is damaged or
    unreadable; the message names it and what re-creates it."""


class CheckpointError(InputError, RuntimeError):
    """A checkpoint file is missing, truncated, corrupt or does not fit its model."""


class MissingInputError(InputError, FileNotFoundError):
    """An input a command needs has not been made yet; the message names the file and the
    command (or Snakemake target) that makes it."""


class HubError(InputError, ValueError):
    """A hub fetch failed, or a repo is not (completely) fetched; the message names the
    backbone or dataset, its repo and revision, and the fix (a token, the revision, the
    fetch command)."""


class GatedRepo(HubError):
    """A gated hub repo refused its files to this machine (no token, or a token whose
    account has not accepted the repo's licence): every rerun is refused the same way
    until a token with access is given."""


class RefusedError(InputError):
    """A command refused to replace a result with less; the message says how to force it."""


class RunBusyError(InputError):
    """Another process is the run directory's writer (:mod:`dfil.cluster.writer`); the message
    names the holder (pid, host, command, SLURM job) and how to stop it."""


class LatexError(InputError, RuntimeError):
    """pdflatex is missing or failed; the message names the log's first error."""


class DiskFullError(InputError, OSError):
    """A write ran out of disk space (ENOSPC); names the path being written, the space
    left on its filesystem and what to free. Nothing half-written keeps the final name."""

    @classmethod
    def from_oserror(cls, err: OSError, path: str | Path) -> DiskFullError:
        path = Path(path)
        try:
            free = f"{shutil.disk_usage(path.parent).free / 2**20:.1f} MiB free"
        except OSError:
            free = "free space unknown"
        return cls(errno.ENOSPC, f"{path}: no space left on its filesystem ({free}); free "
                   "space there (a run directory's superseded/ outputs, the feature cache, "
                   "other grids' results) and rerun the same command")

    def __str__(self) -> str:
        return self.strerror or super().__str__()


class WriteRefusedError(InputError, OSError):
    """The filesystem refused a write (EACCES or EPERM: no permission; EROFS: a read-only
    filesystem); names the path being written and the fix. Nothing half-written keeps
    the final name."""

    @classmethod
    def from_oserror(cls, err: OSError, path: str | Path) -> WriteRefusedError:
        if err.errno == errno.EROFS:
            why, fix = "read-only filesystem", "remount it read-write"
        else:
            why, fix = "permission denied", "give this user access to it and its directory"
        return cls(err.errno, f"{path}: {why}; {fix}, or point the output elsewhere, then "
                   "rerun the same command")

    def __str__(self) -> str:
        return self.strerror or super().__str__()


class Preempted(RuntimeError):
    """Training stopped on SIGTERM after saving its resume state (exit 143); not an input
    error: rerunning the same command resumes it."""


class NonFiniteLoss(RuntimeError):
    """Training's loss became NaN or infinite: the run diverged, and a retry of the same
    config diverges the same way (deterministic); the message names the first such step
    and what to change."""


class OutOfMemory(RuntimeError):
    """A CUDA out-of-memory error in training; ``retry``: the run's memory plan names what
    the retry changes (``dfil.train.memory``); else nothing is left to try."""

    def __init__(self, message: str, retry: bool = False):
        super().__init__(message)
        self.retry = retry


def or_exit(make, *args):
    """``make(*args)``; an input error (a bad grid or table file) ends the process with
    one line on stderr naming the file and key instead of a traceback, and exit status 2
    as ``dfil``'s (the Snakefile's loads)."""
    try:
        return make(*args)
    except InputError as err:
        print(f"dfil: error: {' '.join(str(err).split())}", file=sys.stderr, flush=True)
        sys.exit(2)
