"""Atomic writes leave whole files with the permissions of an ordinary write under the user's umask."""

from __future__ import annotations

import os
import stat
import tempfile

import pytest

from olmes.core.atomic import atomic_dir, atomic_path, make_dir_public, write_json_atomic, write_text_atomic


@pytest.fixture
def umask():
    def set_mask(mask: int) -> None:
        os.umask(mask)

    previous = os.umask(0o022)
    yield set_mask
    os.umask(previous)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize(("mask", "file_mode", "dir_mode"), [(0o022, 0o644, 0o755), (0o027, 0o640, 0o750)])
def test_written_files_and_folders_follow_the_umask(tmp_path, umask, mask, file_mode, dir_mode):
    umask(mask)
    write_text_atomic(tmp_path / "a" / "page.html", "<p>hi</p>")
    write_json_atomic(tmp_path / "s.scores.json", {"x": 1})
    assert mode(tmp_path / "a" / "page.html") == mode(tmp_path / "s.scores.json") == file_mode
    staging = tempfile.mkdtemp(dir=tmp_path)
    assert mode(staging) == 0o700
    make_dir_public(staging)
    assert mode(staging) == dir_mode


def test_a_failed_write_leaves_the_old_file(tmp_path):
    target = tmp_path / "t.txt"
    write_text_atomic(target, "old")
    with pytest.raises(RuntimeError), atomic_path(target) as temp:
        temp.write_text("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["t.txt"]


def test_a_folder_is_swapped_in_whole_or_not_at_all(tmp_path, umask):
    umask(0o022)
    target = tmp_path / "site"
    with atomic_dir(target, "building") as staging:
        (staging / "old.html").write_text("old")
    assert mode(target) == 0o755 and [p.name for p in target.iterdir()] == ["old.html"]
    with pytest.raises(RuntimeError), atomic_dir(target, "building") as staging:
        (staging / "half.html").write_text("half")
        raise RuntimeError("interrupted")
    assert [p.name for p in target.iterdir()] == ["old.html"]
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no staging or old folder left behind
    with atomic_dir(target, "building") as staging:
        assert staging.parent == tmp_path and staging.name.startswith(".site.building-")
        (staging / "new.html").write_text("new")
    assert [p.name for p in target.iterdir()] == ["new.html"]
    assert [p.name for p in tmp_path.iterdir()] == ["site"]
