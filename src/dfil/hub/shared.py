"""A hub cache shared by a group: what a fetch creates there stays writable by the group.

A cache directory that is group-writable or setgid is taken as shared by its group (set it
up once, before the first fetch: ``chgrp -R <group> <cache> && chmod -R g+w <cache> && find
<cache> -type d -exec chmod g+s {} +``; a setgid directory gives what is created below it
its group). There a fetch runs with the group-write bit of its umask cleared, so every
directory, blob, stamp and lock file it and huggingface_hub create is group-writable, and
another member's fetch can wait on the locks, replace a damaged file and write the stamp
again. Elsewhere the umask is respected as it is. Lock files get the mode a new file gets
(0666 less the umask), not filelock's 0644. A permission error that remains is one line
naming the path and the fix (:func:`permission_error`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from dfil.util.atomic import current_umask
from dfil.util.errors import HubError
from dfil.util.lock import lock_mode


def is_shared(cache: Path) -> bool:
    """Whether the cache directory (as it is now) is meant for a group: setgid or g+w."""
    try:
        mode = cache.stat().st_mode
    except OSError:
        return False
    return bool(mode & (stat.S_ISGID | stat.S_IWGRP))


@contextlib.contextmanager
def group_writable(cache: Path) -> Iterator[None]:
    """Within the block, what this process creates is group-writable if ``cache`` is
    shared (the umask without its group-write bit); otherwise nothing changes."""
    if not is_shared(cache):
        yield
        return
    saved = os.umask(current_umask() & ~stat.S_IWGRP)
    try:
        yield
    finally:
        os.umask(saved)


def give_group(path: Path) -> None:
    """Give ``path``, a file this process wrote privately (huggingface_hub's listing of a
    commit, ``trees/<commit>.json``, made with mkstemp's 0600), the mode a new file gets,
    so that other members of a shared cache read it rather than warn and list again."""
    with contextlib.suppress(OSError):  # absent, or not ours: nothing to give
        if path.stat().st_uid == os.getuid():
            os.chmod(path, lock_mode())


def permission_error(err: PermissionError, cache: Path) -> HubError:
    """One line for a file or directory of the cache this user may not write."""
    path = err.filename or cache
    return HubError(
        f"{path}: permission denied to this user (uid {os.getuid()}) "
        f"in the hub cache {cache}. A cache shared by a group needs its files and "
        f"directories group-writable and its directories setgid: as their owner run "
        f"`chmod -R g+w {cache} && find {cache} -type d -exec chmod g+s {{}} +`, then fetch "
        "again")
