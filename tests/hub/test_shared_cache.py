"""A hub cache shared by two users of one group (dfil.hub.shared): the second user's fetch
takes the first one's locks, heals a file the first one fetched and writes the stamp
again; a cache set up without group write is one line naming the path and the fix.

The users are two uids of a group made up for the test (root runs it: skipped elsewhere);
each runs ``dfil hub fetch`` as a process of its own, with an ordinary umask of 022."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest
from hubids import TINY

from dfil.hub import stamp_path
from dfil.hub.shared import group_writable, is_shared, lock_mode
from dfil.hub.store import lock_path

GROUP, ALICE, BOB = 61000, 61001, 61002
RUN = ("import site, sys; site.addsitedir(sys.argv[1]); from dfil.cli import main; "
       "sys.exit(main(sys.argv[2:]))")


def test_a_shared_cache_makes_what_it_creates_group_writable(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chmod(cache, 0o755)
    assert not is_shared(cache)
    os.chmod(cache, 0o2755)
    assert is_shared(cache)
    old = os.umask(0o022)
    try:
        with group_writable(cache):
            (cache / "locks").mkdir()
            assert lock_mode() == 0o664
        assert lock_mode() == 0o644
    finally:
        os.umask(old)
    assert stat.S_IMODE((cache / "locks").stat().st_mode) & 0o070 == 0o070


def _python() -> str:
    """An interpreter the test users can run: this one's, unless it lies in a directory
    they cannot enter (a root-only pyenv), then the system's of the same version."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (os.path.realpath(sys.executable), f"/usr/bin/{version}"):
        try:
            subprocess.run([candidate, "-c", "import sys"], user=ALICE, group=GROUP,
                           capture_output=True, check=True)
        except (OSError, subprocess.CalledProcessError):
            continue
        return candidate
    pytest.skip(f"no {version} that a second user can run")


@pytest.fixture
def shared(hub):
    """A cache directory of GROUP (setgid, g+w, as a site sets one up) and a runner of
    ``dfil hub fetch`` as a user of that group."""
    if os.geteuid() != 0:
        pytest.skip("two users need root to run as")
    python = _python()
    root = Path(tempfile.mkdtemp(prefix="dfil-shared-"))
    os.chmod(root, 0o755)
    cache = root / "cache"
    cache.mkdir()
    os.chown(cache, 0, GROUP)
    os.chmod(cache, 0o2775)
    site_dir = sysconfig.get_paths()["purelib"]

    def fetch(user: int, revision: str) -> subprocess.CompletedProcess:
        home = root / f"home-{user}"
        home.mkdir(exist_ok=True)
        os.chown(home, user, GROUP)
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "HF_HOME": str(home / "hf"),
               "HF_TOKEN_PATH": str(home / "token"), "HF_ENDPOINT": hub.endpoint,
               "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
        return subprocess.run(
            [python, "-c", RUN, site_dir, "hub", "fetch", "--kind", "model", "--repo", TINY,
             "--revision", revision, "--cache", str(cache)],
            user=user, group=GROUP, extra_groups=[GROUP], umask=0o022, env=env,
            capture_output=True, text=True, timeout=300, cwd=root)

    yield cache, fetch
    shutil.rmtree(root)


@pytest.mark.slow
def test_two_users_of_one_group_share_the_cache(shared, hub):
    cache, fetch = shared
    commit = hub.commits[TINY]
    first = fetch(ALICE, "main")
    assert first.returncode == 0, first.stderr
    lock = lock_path(cache, "model", TINY)
    assert lock.stat().st_uid == ALICE and stat.S_IMODE(lock.stat().st_mode) == 0o664
    made = [p for p in cache.rglob("*") if p.stat().st_uid == ALICE and not p.is_symlink()]
    assert made and all(p.stat().st_gid == GROUP for p in made)
    assert all(p.stat().st_mode & stat.S_IWGRP for p in made), [
        (str(p), oct(p.stat().st_mode)) for p in made if not p.stat().st_mode & stat.S_IWGRP]
    # Alice's weights cut short: Bob's fetch takes her lock, downloads them again into her
    # blob directory and writes the stamp again.
    weights = (cache / "hub" / f"models--{TINY.replace('/', '--')}" / "snapshots" / commit
               / "model.safetensors").resolve()
    size = weights.stat().st_size
    with open(weights, "r+b") as fh:
        fh.truncate(50_000)
    second = fetch(BOB, commit)
    assert second.returncode == 0, second.stderr
    assert "downloading it again" in second.stderr
    assert weights.stat().st_size == size
    assert stamp_path(cache, "model", TINY, commit).stat().st_uid == BOB


@pytest.mark.slow
def test_a_cache_without_group_write_is_one_line_with_the_fix(shared, hub):
    cache, fetch = shared
    assert fetch(ALICE, "main").returncode == 0
    lock = lock_path(cache, "model", TINY)
    os.chmod(lock, 0o644)  # as a fetch that knew nothing of groups left it
    done = fetch(BOB, "main")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert f"{lock}: permission denied" in done.stderr
    assert f"chmod -R g+w {cache} && find {cache} -type d -exec chmod g+s {{}} +" in \
        done.stderr
