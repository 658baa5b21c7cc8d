"""Why an input path cannot be read, in words a one-line error can end with.

``Path.exists()`` says False alike for a path that is not there, a symlink that loops
back to itself and a symlink whose target is gone, and ``datasets`` or ``open`` then
fail far from the config key that named the path. :func:`path_problem` tells them apart
(``os.stat``'s errno), so an error names the path and what is wrong with it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def path_problem(path: str | Path, want: str = "") -> str | None:
    """What keeps ``path`` from being read, or None when it can be.

    Parameters
    ----------
    path : the file or directory an input names.
    want : ``"file"`` when only a regular file will do (a directory is then a problem);
        ``""`` for either.

    Returns
    -------
    A phrase to follow the path in a message ("does not exist", "is a symlink loop
    ...", "is a symlink to X, which does not exist", "is a directory, not a file",
    "cannot be read (permission denied)"), or None.
    """
    path = Path(path)
    try:
        info = os.stat(path)
    except OSError as err:
        if err.errno == errno.ELOOP:
            return ("is a symlink loop (it, or a directory above it, links back to itself); "
                    "point the link at the real file or directory")
        if path.is_symlink():
            return f"is a symlink to {os.readlink(path)}, which does not exist"
        if err.errno == errno.EACCES:
            return "cannot be read (permission denied)"
        return "does not exist"
    if want == "file" and stat.S_ISDIR(info.st_mode):
        return "is a directory, not a file"
    return None
