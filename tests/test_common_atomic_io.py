import gzip
import json
import os

import pytest

from common.atomic_io import atomic_open, write_bytes_atomic, write_json_atomic, write_text_atomic


def test_writes_and_replaces(tmp_path):
    p = tmp_path / "sub" / "a.json"
    write_json_atomic(p, {"b": 1, "a": [1, 2]}, indent=None)
    assert json.loads(p.read_text()) == {"a": [1, 2], "b": 1}
    assert p.read_text() == '{"a": [1, 2], "b": 1}'
    write_text_atomic(p, "new")
    assert p.read_text() == "new"
    assert oct(os.stat(p).st_mode & 0o777) == oct(0o644)
    assert sorted(x.name for x in p.parent.iterdir()) == ["a.json"]


def test_failure_keeps_old_file_and_leaves_no_temp(tmp_path):
    p = tmp_path / "data.bin"
    write_bytes_atomic(p, b"old")
    with pytest.raises(RuntimeError):
        with atomic_open(p, "wb") as f:
            f.write(b"half")
            raise RuntimeError("interrupted")
    assert p.read_bytes() == b"old"
    assert [x.name for x in tmp_path.iterdir()] == ["data.bin"]


def test_gzip_is_deterministic(tmp_path):
    a, b = tmp_path / "a.gz", tmp_path / "b.gz"
    for p in (a, b):
        with atomic_open(p, "wb", gzip_mtime=0) as f:
            f.write(b"payload" * 100)
    assert a.read_bytes() == b.read_bytes()
    assert gzip.decompress(a.read_bytes()) == b"payload" * 100


def test_text_mode_gzip(tmp_path):
    p = tmp_path / "t.json.gz"
    with atomic_open(p, "w", gzip_mtime=0) as f:
        f.write("héllo")
    assert gzip.decompress(p.read_bytes()).decode() == "héllo"


def test_bad_mode(tmp_path):
    with pytest.raises(ValueError, match="mode"):
        with atomic_open(tmp_path / "x", "a"):
            pass
