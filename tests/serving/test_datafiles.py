"""serving.datafiles: the data directory's listing, kept per process and listed again when
the directory changes (issue #36 item 4: pages ask on every rerun)."""

from __future__ import annotations

import os

import dpcore
from serving import datafiles


def _changed(directory, before: int) -> None:
    """A file added or removed changes the directory's mtime; on a file system with coarse
    timestamps two changes within one tick may not, so move it on by a second then."""
    if os.stat(directory).st_mtime_ns == before:
        os.utime(directory, ns=(before, before + 1_000_000_000))


def test_the_listing_is_kept_until_the_directory_changes(tmp_path, monkeypatch):
    monkeypatch.setenv(dpcore.DATA_DIR_ENV, str(tmp_path))
    listed = []
    real = dpcore.data_files
    monkeypatch.setattr(dpcore, "data_files", lambda d: listed.append(d) or real(d))
    (tmp_path / "a.idx").write_bytes(b"x")
    assert datafiles.data_files() == ["a.idx"]
    names = datafiles.data_files()
    assert names == ["a.idx"] and len(listed) == 1  # before: listed on every call
    names.append("changed by a caller")  # a copy: the kept listing stays as it is
    assert datafiles.data_files() == ["a.idx"] and len(listed) == 1

    before = os.stat(tmp_path).st_mtime_ns
    (tmp_path / "b.idx").write_bytes(b"x")
    _changed(tmp_path, before)
    assert datafiles.data_files() == ["a.idx", "b.idx"] and len(listed) == 2

    before = os.stat(tmp_path).st_mtime_ns
    (tmp_path / "a.idx").unlink()
    _changed(tmp_path, before)
    assert datafiles.data_files() == ["b.idx"] and len(listed) == 3


def test_the_stamp_names_the_directory_and_the_operators_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv(dpcore.DATA_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(dpcore.DATASET_ENV["mnist"], "one.idx")
    first = datafiles.stamp()
    assert first[0] == str(tmp_path.resolve()) and first[1] == os.stat(tmp_path).st_mtime_ns
    monkeypatch.setenv(dpcore.DATASET_ENV["mnist"], "other.idx")
    assert datafiles.stamp() != first
    monkeypatch.setenv(dpcore.DATA_DIR_ENV, str(tmp_path / "missing"))
    assert datafiles.stamp()[1] is None and datafiles.data_files() == []
