"""Why an input path cannot be read: a missing path, a symlink loop, a dangling link and a
directory where a file is wanted are each said in their own words."""

import os

from dfil.util.paths import path_problem


def test_a_readable_file_or_directory_has_no_problem(tmp_path):
    (tmp_path / "easy.jsonl").write_text("{}\n")
    assert path_problem(tmp_path / "easy.jsonl", want="file") is None
    assert path_problem(tmp_path) is None


def test_each_unreadable_path_is_said_in_its_own_words(tmp_path):
    loop, dangling = tmp_path / "loop", tmp_path / "dangling"
    os.symlink("loop", loop)  # links to itself
    os.symlink(tmp_path / "gone", dangling)
    assert path_problem(tmp_path / "missing") == "does not exist"
    assert path_problem(loop) == ("is a symlink loop (it, or a directory above it, links "
                                  "back to itself); point the link at the real file or "
                                  "directory")
    assert path_problem(loop / "easy.jsonl").startswith("is a symlink loop")  # loop above
    assert path_problem(dangling) == f"is a symlink to {tmp_path / 'gone'}, which does not exist"
    assert path_problem(tmp_path, want="file") == "is a directory, not a file"
