"""Atomic writes keep the user's umask: group-readable by default, never mkstemp's 0600."""

import errno
import os
import re
import stat

import pytest

from dfil.util.atomic import atomic_path, atomic_write_bytes, atomic_write_json, current_umask
from dfil.util.errors import DiskFullError


@pytest.fixture
def umask():
    old = os.umask(0o022)
    os.umask(old)

    def set_mask(mask):
        os.umask(mask)
        return mask

    yield set_mask
    os.umask(old)


@pytest.mark.parametrize("mask,mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664),
                                       (0o077, 0o600)])
def test_atomic_write_bytes_uses_the_umask(tmp_path, umask, mask, mode):
    umask(mask)
    assert current_umask() == mask
    out = tmp_path / "sub" / "metrics.json"
    atomic_write_bytes(out, b"{}\n")
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert out.read_bytes() == b"{}\n"
    assert sorted(p.name for p in out.parent.iterdir()) == ["metrics.json"]  # no temp left


def test_atomic_path_mode_holds_for_writers_that_reopen_the_file(tmp_path, umask):
    umask(0o022)
    out = tmp_path / "table.csv"
    with atomic_path(out) as tmp:
        with open(tmp, "w") as fh:  # as pandas, safetensors and torch do
            fh.write("a\n")
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    atomic_write_json(out, {"replaced": True})  # replacing keeps the umask's mode
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_atomic_path_removes_its_temporary_on_failure(tmp_path):
    out = tmp_path / "x.json"
    with pytest.raises(RuntimeError), atomic_path(out) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_names_the_path_and_removes_the_partial_file(tmp_path):
    import errno

    from dfil.util.errors import DiskFullError

    target = tmp_path / "metrics.json"
    with pytest.raises(DiskFullError, match=rf"^{target}: no space left on its filesystem"):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(BlockingIOError):  # any other OSError passes through as it was
        with atomic_path(target):
            raise BlockingIOError(errno.EAGAIN, "busy")


@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM, errno.EROFS])
def test_a_refused_write_names_the_path_and_removes_the_partial_file(tmp_path, code):
    from dfil.util.errors import WriteRefusedError

    target = tmp_path / "metrics.json"
    with pytest.raises(WriteRefusedError, match=rf"^{target}: ") as err:
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise OSError(code, os.strerror(code))
    assert err.value.errno == code and str(err.value).endswith("rerun the same command")
    assert list(tmp_path.iterdir()) == []


def test_a_file_a_library_replaced_while_writing_still_gets_the_umask(tmp_path, umask):
    """safetensors 0.8 writes its file anew with mode 0600."""
    umask(0o022)
    out = tmp_path / "model.safetensors"
    with atomic_path(out) as tmp:
        tmp.unlink()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, b"x")
        os.close(fd)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_atomic_copytree_replaces_the_old_tree_whole(tmp_path):
    from dfil.util.atomic import atomic_copytree

    src, dst = tmp_path / "staged", tmp_path / "out" / "runs"
    (src / "a").mkdir(parents=True)
    (src / "a" / "x.html").write_text("new")
    (dst / "b").mkdir(parents=True)
    (dst / "b" / "old.html").write_text("old")
    atomic_copytree(src, dst)
    assert sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*")) == ["a", "a/x.html"]
    assert (dst / "a" / "x.html").read_text() == "new"
    # nothing left beside it: no temporary copy, no old tree
    assert sorted(p.name for p in dst.parent.iterdir()) == ["runs"]


def test_atomic_copytree_failing_keeps_the_old_tree(tmp_path, monkeypatch):
    import shutil

    from dfil.util.atomic import atomic_copytree

    src, dst = tmp_path / "staged", tmp_path / "runs"
    src.mkdir()
    (src / "x.html").write_text("new")
    dst.mkdir()
    (dst / "old.html").write_text("old")

    def broken(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(shutil, "copytree", broken)
    with pytest.raises(DiskFullError, match=re.escape(str(dst))):
        atomic_copytree(src, dst)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert (dst / "old.html").read_text() == "old"


@pytest.mark.parametrize("umask,mode", [(0o022, 0o755), (0o027, 0o750)])
def test_atomic_dir_appears_whole_with_the_umasks_mode(tmp_path, umask, mode):
    from dfil.util.atomic import atomic_dir

    dst = tmp_path / "adapter"
    old = os.umask(umask)
    try:
        with atomic_dir(dst) as folder:
            (folder / "a.json").write_text("{}")
            assert not dst.exists()  # nothing there until it is whole
    finally:
        os.umask(old)
    assert [p.name for p in dst.iterdir()] == ["a.json"]
    assert stat.S_IMODE(dst.stat().st_mode) == mode
    assert [p.name for p in tmp_path.iterdir()] == ["adapter"]


def test_atomic_dir_failing_keeps_the_old_tree(tmp_path):
    from dfil.util.atomic import atomic_dir

    dst = tmp_path / "adapter"
    dst.mkdir()
    (dst / "old.json").write_text("old")
    with pytest.raises(RuntimeError, match="killed"), atomic_dir(dst) as folder:
        (folder / "new.json").write_text("new")
        raise RuntimeError("killed")
    assert [p.name for p in tmp_path.iterdir()] == ["adapter"]
    assert [p.name for p in dst.iterdir()] == ["old.json"]


def test_atomic_dir_keeps_a_shared_trees_setgid_bit(tmp_path):
    from dfil.util.atomic import atomic_dir

    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o2775)
    (shared / "plain").mkdir()  # what a plain mkdir inherits
    with atomic_dir(shared / "adapter") as folder:
        (folder / "a.json").write_text("{}")
    assert stat.S_IMODE((shared / "adapter").stat().st_mode) & stat.S_ISGID
    assert stat.S_IMODE((shared / "plain").stat().st_mode) & stat.S_ISGID


def test_atomic_dir_on_a_full_disk_names_it(tmp_path, monkeypatch):
    import tempfile

    from dfil.util.atomic import atomic_dir

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "mkdtemp", full)
    with pytest.raises(DiskFullError, match=re.escape(str(tmp_path / "adapter"))), \
            atomic_dir(tmp_path / "adapter"):
        pass
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fail_back", [False, True])
def test_atomic_dir_never_loses_the_old_tree(tmp_path, monkeypatch, fail_back):
    """The new tree's rename fails; so, in the second case, does putting the old one back:
    then it stays beside its place, not deleted."""
    from dfil.util.atomic import atomic_dir

    dst = tmp_path / "adapter"
    dst.mkdir()
    (dst / "old.json").write_text("old")
    real = os.replace

    def replace(src, target):
        if str(src).endswith(".tmp") or (fail_back and str(src).endswith(".old")):
            raise OSError(errno.EIO, "Input/output error")
        return real(src, target)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="Input/output error"), atomic_dir(dst) as folder:
        (folder / "new.json").write_text("new")
    kept = dst if not fail_back else next(tmp_path.glob(".adapter.*.old"))
    assert [p.name for p in kept.iterdir()] == ["old.json"]
    assert len(list(tmp_path.iterdir())) == 1  # no temporary tree left


def test_atomic_dir_over_a_file_leaves_nothing_beside_it(tmp_path):
    from dfil.util.atomic import atomic_dir

    (tmp_path / "adapter").write_text("a file")
    with atomic_dir(tmp_path / "adapter") as folder:
        (folder / "a.json").write_text("{}")
    assert [p.name for p in tmp_path.iterdir()] == ["adapter"]
    assert (tmp_path / "adapter" / "a.json").is_file()
