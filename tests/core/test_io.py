"""atomic_output: old content or the whole new one, never half; devices written through."""

from __future__ import annotations

import os
import stat

import pytest

from v22sdk._io import atomic_output
from v22sdk.errors import InputError, OutputError


def test_a_failure_while_writing_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    out = tmp_path / "tokens.npz"
    out.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_output(out) as fh:
        fh.write(b"half of the new")
        raise RuntimeError("tokenizer broke")
    assert out.read_bytes() == b"old" and os.listdir(tmp_path) == ["tokens.npz"]
    with atomic_output(out) as fh:
        fh.write(b"new")
    assert out.read_bytes() == b"new" and os.listdir(tmp_path) == ["tokens.npz"]


def test_permissions_of_a_replaced_file_are_kept_and_new_files_follow_the_umask(tmp_path):
    out = tmp_path / "a.txt"
    out.write_text("x")
    out.chmod(0o640)
    with atomic_output(out, "w", encoding="utf-8") as fh:
        fh.write("y")
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    mask = os.umask(0o022)
    try:
        with atomic_output(tmp_path / "b.txt", "w", encoding="utf-8") as fh:
            fh.write("z")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "b.txt").stat().st_mode) == 0o644  # not mkstemp's 0600


def test_a_symlink_keeps_pointing_at_its_replaced_target(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with atomic_output(link, "w", encoding="utf-8") as fh:
        fh.write("new")
    assert link.is_symlink() and real.read_text() == "new"


def test_devices_are_written_through_never_replaced():
    before = os.stat("/dev/null")
    with atomic_output("/dev/null") as fh:
        fh.write(b"discarded")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    if os.path.exists("/dev/full"):
        with pytest.raises(OutputError, match="/dev/full: No space left on device"), atomic_output("/dev/full") as fh:
            fh.write(b"x" * 65536)
            fh.flush()
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_folder_or_a_missing_folder_is_refused_before_writing(tmp_path):
    with pytest.raises(InputError, match="is a folder"):
        with atomic_output(tmp_path):
            pass
    with pytest.raises(InputError, match="does not exist"):
        with atomic_output(tmp_path / "nodir" / "x.npz"):
            pass
    assert os.listdir(tmp_path) == []
