"""`python -m alfred_task.download` against a local HTTP server: list, good download and unpack
(a stand-in 7z on PATH), a file that fails its check, a resumed transfer, the checkpoint zip,
and no network."""

from __future__ import annotations

import io
import json
import os
import random
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import List, Tuple

import pytest
from local_http import LOCAL_ENV, free_port, serve

import alfred_task.download as ad

ROOT = Path(__file__).resolve().parents[1]
SPLITS = json.dumps({"valid_seen": [{"task": "a/trial_T1", "repeat_idx": 0}]}).encode()

#: stands in for 7-Zip: `7z x -y -o<out> <archive>` makes <out>/json_2.1.0/ with one file
FAKE_7Z = """#!/bin/sh
out=$(echo "$3" | sed 's/^-o//')
name=$(basename "$4" .7z)
mkdir -p "$out/$name/valid_seen" && cp "$4" "$out/$name/valid_seen/archive_bytes"
"""


@pytest.fixture
def server(monkeypatch):
    for k, v in LOCAL_ENV.items():
        monkeypatch.setenv(k, v)
    with serve() as s:
        monkeypatch.setenv(ad.BUCKET_URL_ENV, s.base_url + "bucket/")
        monkeypatch.setenv(ad.REPO_DATA_URL_ENV, s.base_url + "repo/")
        yield s


def _run(args: List[str], capsys) -> Tuple[int, str, str]:
    try:
        code = ad.main(args + ["--no-progress"])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _with_fake_7z(tmp_path: Path, monkeypatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "7z"
    tool.write_text(FAKE_7Z)
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_list_says_sizes_are_unknown_and_fetches_nothing(server, tmp_path, capsys):
    code, out, _ = _run(["json", "--list", "--out", str(tmp_path)], capsys)
    assert code == 0 and not server.log
    assert f"{server.base_url}bucket/json_2.1.0.7z" in out
    assert f"{server.base_url}repo/splits/oct21.json" in out
    assert out.count("size and sha256 unknown") == 2
    assert f"unpacks to {tmp_path / 'json_2.1.0'}" in out


def test_good_download_unpacks_to_a_data_root(server, tmp_path, capsys, monkeypatch):
    archive = random.Random(0).randbytes(40_000)
    server.files["bucket/json_2.1.0.7z"] = archive
    server.files["repo/splits/oct21.json"] = SPLITS
    _with_fake_7z(tmp_path, monkeypatch)
    out_dir = tmp_path / "alfred"
    code, out, err = _run(["json", "--out", str(out_dir)], capsys)
    assert code == 0, err
    root = out_dir / "json_2.1.0"
    assert (root / "valid_seen" / "archive_bytes").read_bytes() == archive
    assert (root / "splits.json").read_bytes() == SPLITS  # what --data / data_root expect
    assert "pass it as --data / data_root" in out
    code, out, _ = _run(["json", "--out", str(out_dir), "--no-unpack"], capsys)
    assert code == 0 and out.count("already present at") == 2


def test_data_root_works_with_the_evaluator_inputs(server, tmp_path, capsys, monkeypatch):
    """The unpacked folder and its splits.json are what `resolve_entries` reads."""
    from alfred_task.evaluation.inputs import resolve_entries

    lite = ROOT / "data" / "alfred_lite"
    first = json.loads((lite / "splits.json").read_text())["valid_seen"][0]
    server.files["bucket/json_2.1.0.7z"] = b"x" * 10
    server.files["repo/splits/oct21.json"] = json.dumps({"valid_seen": [first]}).encode()
    _with_fake_7z(tmp_path, monkeypatch)
    code, _, err = _run(["json", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    root = tmp_path / "json_2.1.0"
    traj = root / "valid_seen" / first["task"]  # as in ALFRED's archive
    traj.mkdir(parents=True)
    src = lite / "valid_seen" / first["task"] / "traj_data.json"
    (traj / "traj_data.json").write_bytes(src.read_bytes())
    entries = resolve_entries(str(root), str(root / "splits.json"), ["valid_seen"], None)
    assert len(entries) == 1


def test_without_7zip_the_archive_stays_and_the_command_is_printed(
    server, tmp_path, capsys, monkeypatch
):
    server.files["bucket/json_2.1.0.7z"] = b"7z-bytes"
    server.files["repo/splits/oct21.json"] = SPLITS
    monkeypatch.setattr(ad.shutil, "which", lambda name: None)
    code, out, _ = _run(["json", "--out", str(tmp_path)], capsys)
    assert code == 0 and (tmp_path / "json_2.1.0.7z").read_bytes() == b"7z-bytes"
    assert f"7z x {tmp_path / 'json_2.1.0.7z'} -o{tmp_path}" in out


def test_file_failing_its_check_is_one_line_and_leaves_no_half_file(
    server, tmp_path, capsys, monkeypatch
):
    body = random.Random(1).randbytes(20_000)
    server.files["bucket/json_2.1.0.7z"] = body
    known = ad.AlfredFile("json_2.1.0.7z", "json_2.1.0.7z", "test", size=len(body), sha256="0" * 64)
    monkeypatch.setitem(ad.SETS, "json", [known])
    code, _, err = _run(["json", "--out", str(tmp_path)], capsys)
    assert code == 1 and "sha256 mismatch" in _one_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_broken_transfer_is_resumed(server, tmp_path, capsys, monkeypatch):
    body = random.Random(2).randbytes(150_000)
    server.files["bucket/json_2.1.0.7z"] = body
    server.files["repo/splits/oct21.json"] = SPLITS
    server.cut["bucket/json_2.1.0.7z"] = [60_000]
    code, _, err = _run(["json", "--out", str(tmp_path), "--no-unpack"], capsys)
    assert code == 0, err
    assert (tmp_path / "json_2.1.0.7z").read_bytes() == body
    assert ("bucket/json_2.1.0.7z", "bytes=60000-") in server.log


def test_checkpoint_zip_is_unzipped(server, tmp_path, capsys):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("best_seen.pth", b"a")
        z.writestr("best_unseen.pth", b"b")
    server.files["bucket/seq2seq_pm_chkpt.zip"] = buf.getvalue()
    code, out, err = _run(["checkpoints", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    assert (tmp_path / "seq2seq_pm_chkpt" / "best_unseen.pth").read_bytes() == b"b"
    assert "best_seen.pth, best_unseen.pth" in out and "convert_checkpoint" in out


def test_no_network_is_one_line(tmp_path):
    env = dict(
        os.environ,
        **LOCAL_ENV,
        PYTHONPATH=str(ROOT),
        ALFRED_BASE_URL=f"http://127.0.0.1:{free_port()}/",
    )
    p = subprocess.run(
        [sys.executable, "-m", "alfred_task.download", "json", "--out", str(tmp_path / "d")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1
    line = _one_line(p.stderr)
    assert "cannot reach" in line and "json_2.1.0.7z" in line
    assert not (tmp_path / "d").exists()


def test_bad_arguments(tmp_path, capsys):
    code, _, err = _run(["json", "--retries", "-1"], capsys)
    assert code == 2 and "--retries" in _one_line(err)
    (tmp_path / "f").write_text("x")
    code, _, err = _run(["json", "--out", str(tmp_path / "f")], capsys)
    assert code == 2 and "is a file" in _one_line(err)
    code, _, err = _run(["nope"], capsys)
    assert code == 2
