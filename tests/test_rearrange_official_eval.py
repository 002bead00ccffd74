"""`python -m rearrange.eval --official <config>` against a local HTTP server: list, dry run, good,
corrupted, resumed and unreachable downloads, and one evaluated episode end to end."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest
from local_http import LOCAL_ENV, free_port, serve

import rearrange.official_eval as oe
from rearrange.eval import main
from rearrange.official_files import CHECKPOINTS, OfficialFile

ROOT = Path(__file__).resolve().parents[1]
NAME = "one_phase_rgb_dagger"
CKPT = CHECKPOINTS[NAME].file
VAL = "2023/val.pkl.gz"


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture
def server(monkeypatch):
    for k, v in LOCAL_ENV.items():
        monkeypatch.setenv(k, v)
    with serve() as s:
        monkeypatch.setenv("REARRANGE_CHECKPOINT_BASE_URL", s.base_url + "ckpt/")
        monkeypatch.setenv("REARRANGE_DATA_BASE_URL", s.base_url + "data/")
        yield s


def _table_entry(monkeypatch, body: bytes) -> None:
    """The official table's 2023 val entry, for a made-up file (its own size and sha256)."""
    monkeypatch.setitem(oe.DATA_FILES, (2023, "val"), OfficialFile(VAL, len(body), _sha(body)))


def _serve_fakes(server, monkeypatch, val: bytes, ckpt: bytes = b"", announced: bytes = None):
    server.files["ckpt/" + CKPT.url_path] = ckpt or random.Random(1).randbytes(50_000)
    server.files["data/" + VAL] = val
    _table_entry(monkeypatch, announced if announced is not None else val)


def _run(args: List[str], capsys) -> Tuple[int, str, str]:
    try:
        code = main(args + ["--no-progress"])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def _where(tmp_path: Path) -> List[str]:
    return ["--data-root", str(tmp_path / "data"), "--checkpoint-dir", str(tmp_path / "ckpt")]


def test_list_names_every_config_and_fetches_nothing(server, tmp_path, capsys):
    code, out, _ = _run(["--list", *_where(tmp_path)], capsys)
    assert code == 0
    for name in CHECKPOINTS:
        assert f"{name}  (official % Fixed Strict" in out
    assert f"missing {tmp_path / 'ckpt' / CKPT.local_path}" in out
    assert f"missing {tmp_path / 'data' / VAL}" in out
    assert "map weights" in out  # the frozen-map configs bring the map along
    assert not server.log and not (tmp_path / "data").exists()


def test_dry_run_says_what_would_happen_and_warns(server, tmp_path, capsys):
    code, out, _ = _run(["--official", NAME, "--dry-run", *_where(tmp_path)], capsys)
    assert code == 0 and not server.log
    assert f"would fetch {NAME} checkpoint: {server.base_url}ckpt/{CKPT.url_path}" in out
    assert "would run: python -m rearrange.eval --config baseline_configs/one_phase/" in out
    assert out.strip().splitlines()[-1] == oe.LEADERBOARD_WARNING
    code, out, _ = _run(
        ["--official", NAME, "--dry-run", "--backend", "thor", *_where(tmp_path)], capsys
    )
    assert code == 0 and oe.LEADERBOARD_WARNING not in out  # real THOR: comparable


def test_good_download_then_present(server, tmp_path, capsys, monkeypatch):
    val = random.Random(0).randbytes(30_000)
    _serve_fakes(server, monkeypatch, val)
    code, out, err = _run(["--official", NAME, "--fetch-only", *_where(tmp_path)], capsys)
    assert code == 0, err
    assert (tmp_path / "data" / VAL).read_bytes() == val
    assert (tmp_path / "ckpt" / CKPT.local_path).stat().st_size == 50_000
    code, out, _ = _run(["--official", NAME, "--fetch-only", *_where(tmp_path)], capsys)
    assert code == 0 and out.count("already present at") == 2


def test_corrupted_file_is_one_line_and_leaves_no_half_file(server, tmp_path, capsys, monkeypatch):
    val = random.Random(0).randbytes(30_000)
    bad = bytes([val[0] ^ 1]) + val[1:]  # same size, other bytes
    _serve_fakes(server, monkeypatch, bad, announced=val)
    code, _, err = _run(["--official", NAME, "--fetch-only", *_where(tmp_path)], capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 1 and len(lines) == 1 and "sha256 mismatch" in lines[0]
    assert sorted(p.name for p in (tmp_path / "data" / "2023").iterdir()) == []


def test_broken_transfer_is_resumed(server, tmp_path, capsys, monkeypatch):
    val = random.Random(0).randbytes(200_000)
    _serve_fakes(server, monkeypatch, val)
    server.cut["data/" + VAL] = [70_000]  # the first answer breaks after 70,000 bytes
    code, _, err = _run(["--official", NAME, "--fetch-only", *_where(tmp_path)], capsys)
    assert code == 0, err
    assert (tmp_path / "data" / VAL).read_bytes() == val
    assert ("data/" + VAL, "bytes=70000-") in server.log


def test_no_network_is_one_line(tmp_path):
    env = dict(
        os.environ,
        **LOCAL_ENV,
        PYTHONPATH=str(ROOT),
        REARRANGE_CHECKPOINT_BASE_URL=f"http://127.0.0.1:{free_port()}/",
    )
    p = subprocess.run(
        [sys.executable, "-m", "rearrange.eval", "--official", NAME, *_where(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 1 and len(lines) == 1, p.stderr
    assert "cannot reach" in lines[0] and CKPT.url_path in lines[0]
    assert not (tmp_path / "ckpt").exists()


def test_bad_arguments(tmp_path, capsys):
    code, _, err = _run(["--official", "nope", "--dry-run"], capsys)
    assert code == 2 and "unknown config" in err
    code, _, err = _run(["--official", NAME, "--checkpoint", "x.pt", "--dry-run"], capsys)
    assert code == 2 and "drop --config/--checkpoint" in err
    code, _, err = _run(["--dry-run"], capsys)
    assert code == 2 and "go with --official" in err
    code, _, err = _run(["--official", NAME, "--stage", "train_unseen", "--dry-run"], capsys)
    assert code == 2 and "no official 2023 file" in err


def test_fetch_then_evaluate_one_episode(server, tmp_path, capsys, monkeypatch):
    """The whole path: fetched checkpoint (a real state dict of the config's model at 64 px)
    and split (our val file served as the official one), one episode, the warning last."""
    import io

    import torch

    from rearrange.eval import load_config

    config = load_config(str(ROOT / CHECKPOINTS[NAME].config), {"screen_size": 64})
    buf = io.BytesIO()
    torch.save({"model_state_dict": config.create_model().state_dict()}, buf)
    val = (ROOT / "data" / "rearrange" / "val.pkl.gz").read_bytes()
    _serve_fakes(server, monkeypatch, val, ckpt=buf.getvalue())
    args = ["--official", NAME, "--agents", "checkpoint", "--episodes-per-scene", "1"]
    args += ["--scenes", "FloorPlan21", "--config-kwargs", '{"screen_size": 64}']
    code, out, err = _run(args + _where(tmp_path), capsys)
    assert code == 0, err
    assert "| checkpoint | 1 |" in out
    assert out.strip().splitlines()[-1] == oe.LEADERBOARD_WARNING
    assert oe.LEADERBOARD_WARNING in err  # also before the run starts
