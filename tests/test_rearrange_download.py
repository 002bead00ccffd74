"""`python -m rearrange.download` against a local HTTP server on 127.0.0.1 that honours Range
requests and can break a transfer midway: good file, corrupted file, resumed transfers (inside
one run and across runs), no server, and the official table itself."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

import rearrange.download as dl
from local_http import LOCAL_ENV, Server, free_port, serve
from rearrange.official_files import CHECKPOINTS, DATA_FILES, MAP_WEIGHTS, YEARS, OfficialFile

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
#: the official table's facts, vendored (source named inside; tests/fixtures/README.md)
REFERENCE = ROOT / "tests" / "fixtures" / "rearrangement_downloads.json"
OFFICIAL_VAL_2023 = SHARED / "data" / "rearrangement" / "2023_val.pkl.gz"


@pytest.fixture
def server(monkeypatch) -> Iterator[Server]:
    for k, v in LOCAL_ENV.items():
        monkeypatch.setenv(k, v)
    with serve() as state:
        yield state


def _blob(n: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(n)


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture
def fake_val(server: Server, monkeypatch) -> bytes:
    """A made-up 2023 val file in the table (its own size and sha256), served at 2023/val.pkl.gz."""
    body = _blob(300_000)
    server.files["2023/val.pkl.gz"] = body
    monkeypatch.setattr(
        dl, "DATA_FILES", {(2023, "val"): OfficialFile("2023/val.pkl.gz", len(body), _sha(body))}
    )
    return body


def _run(args: List[str], capsys) -> Tuple[int, str, str]:
    try:
        code = dl.main(args + ["--no-progress"])
    except SystemExit as e:  # usage errors exit through common.cli.fail
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_good_file_is_verified_then_skipped(server, fake_val, tmp_path, capsys):
    args = ["data", "--years", "2023", "--base-url", server.base_url, "--out", str(tmp_path)]
    code, out, err = _run(args, capsys)
    dest = tmp_path / "2023" / "val.pkl.gz"
    assert code == 0, err
    assert dest.read_bytes() == fake_val and "sha256 verified" in out
    assert sorted(p.name for p in dest.parent.iterdir()) == ["val.pkl.gz"]
    assert server.log == [("2023/val.pkl.gz", None)]
    code, out, _ = _run(args, capsys)
    assert code == 0 and "already present" in out and len(server.log) == 1  # no second request


def test_corrupted_file_is_rejected_and_removed(server, fake_val, tmp_path, capsys):
    bad = bytearray(fake_val)
    bad[1234] ^= 0xFF
    server.files["2023/val.pkl.gz"] = bytes(bad)
    code, _, err = _run(
        ["data", "--years", "2023", "--base-url", server.base_url, "--out", str(tmp_path)], capsys
    )
    line = _one_line(err)
    assert code == 1
    assert (
        "val.pkl.gz" in line
        and _sha(fake_val) in line
        and _sha(bytes(bad)) in line
        and "sha256 mismatch" in line
    )
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []  # neither the file nor its .part


def test_broken_transfer_resumes_with_a_range_request(
    server, fake_val, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(dl, "download", _no_backoff(dl.download))
    server.cut["2023/val.pkl.gz"] = [100_000]
    code, _, err = _run(
        ["data", "--years", "2023", "--base-url", server.base_url, "--out", str(tmp_path)], capsys
    )
    assert code == 0, err
    assert (tmp_path / "2023" / "val.pkl.gz").read_bytes() == fake_val
    assert server.log == [("2023/val.pkl.gz", None), ("2023/val.pkl.gz", "bytes=100000-")]


def test_interrupted_run_keeps_part_and_next_run_resumes(server, fake_val, tmp_path, capsys):
    server.cut["2023/val.pkl.gz"] = [70_000]
    args = ["data", "--years", "2023", "--base-url", server.base_url, "--out", str(tmp_path)]
    code, _, err = _run(args + ["--retries", "0"], capsys)
    assert code == 1 and "interrupted after 70000 bytes" in _one_line(err) and "resume" in err
    part = tmp_path / "2023" / "val.pkl.gz.part"
    assert (
        part.read_bytes() == fake_val[:70_000] and not (tmp_path / "2023" / "val.pkl.gz").exists()
    )
    code, _, err = _run(args, capsys)
    assert code == 0, err
    assert (tmp_path / "2023" / "val.pkl.gz").read_bytes() == fake_val and not part.exists()
    assert server.log[-1] == ("2023/val.pkl.gz", "bytes=70000-")


def test_server_ignoring_range_restarts_from_zero(server, fake_val, tmp_path, capsys):
    part = tmp_path / "2023" / "val.pkl.gz.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"x" * 5000)  # not even a prefix: the 200 answer must overwrite it
    server.ignore_range = True
    code, _, err = _run(
        ["data", "--years", "2023", "--base-url", server.base_url, "--out", str(tmp_path)], capsys
    )
    assert code == 0, err
    assert server.log == [("2023/val.pkl.gz", "bytes=5000-")]
    assert (tmp_path / "2023" / "val.pkl.gz").read_bytes() == fake_val


def test_whole_part_file_is_finished_without_refetching(server, tmp_path, capsys, monkeypatch):
    """A run stopped between the last byte and the rename: the server's 416 says the part is whole."""
    ckpt = _blob(40_000, 3)
    server.files["walkthrough/map.pt"] = ckpt
    monkeypatch.setattr(dl, "MAP_WEIGHTS", OfficialFile("walkthrough/map.pt", dest="map.pt"))
    (tmp_path / "map.pt.part").write_bytes(ckpt)
    code, _, err = _run(
        ["checkpoints", "--configs", "map", "--base-url", server.base_url, "--out", str(tmp_path)],
        capsys,
    )
    assert code == 0, err
    assert server.log == [("walkthrough/map.pt", "bytes=40000-")]
    assert (
        sorted(p.name for p in tmp_path.iterdir()) == ["map.pt"]
        and (tmp_path / "map.pt").read_bytes() == ckpt
    )


def test_server_size_other_than_the_table_is_refused(server, fake_val, tmp_path, capsys):
    server.files["2023/val.pkl.gz"] = fake_val + b"extra"
    code, _, err = _run(
        ["data", "--years", "2023", "--base-url", server.base_url, "--out", str(tmp_path)], capsys
    )
    assert code == 1 and f"offers {len(fake_val) + 5} bytes, expected {len(fake_val)}" in _one_line(
        err
    )
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_missing_on_server_is_one_line(server, fake_val, tmp_path, capsys):
    del server.files["2023/val.pkl.gz"]
    code, _, err = _run(
        ["data", "--years", "2023", "--base-url", server.base_url, "--out", str(tmp_path)], capsys
    )
    assert code == 1 and "HTTP 404" in _one_line(err) and "2023/val.pkl.gz" in err
    assert not tmp_path.joinpath("2023").exists()


def test_checkpoints_bring_the_map_weights_along(server, tmp_path, capsys, monkeypatch):
    """A frozen-map config fetches its checkpoint and the map weights; size is the server's."""
    ckpt, amap = _blob(50_000, 1), _blob(20_000, 2)
    name = "one_phase_rgb_resnet_frozen_map_dagger"
    fake_map = OfficialFile("walkthrough/map.pt", dest="map.pt")
    monkeypatch.setattr(dl, "MAP_WEIGHTS", fake_map)
    monkeypatch.setattr(
        dl,
        "CHECKPOINTS",
        {
            name: type(CHECKPOINTS[name])(
                CHECKPOINTS[name].config, OfficialFile("one-phase/exp_x.pt", dest="exp_x.pt")
            )
        },
    )
    server.files.update({"one-phase/exp_x.pt": ckpt, "walkthrough/map.pt": amap})
    server.cut["one-phase/exp_x.pt"] = [1000, 0]  # two breaks (one with no bytes), then the rest
    monkeypatch.setattr(dl, "download", _no_backoff(dl.download))
    code, out, err = _run(
        ["checkpoints", "--configs", name, "--base-url", server.base_url, "--out", str(tmp_path)],
        capsys,
    )
    assert code == 0, err
    assert (tmp_path / "exp_x.pt").read_bytes() == ckpt and (
        tmp_path / "map.pt"
    ).read_bytes() == amap
    assert [r for p, r in server.log if p == "one-phase/exp_x.pt"] == [
        None,
        "bytes=1000-",
        "bytes=1000-",
    ]
    assert out.count("size checked") == 2


def test_no_network_is_one_line_and_leaves_nothing(tmp_path):
    """As a user runs it (real process, base URL from the environment variable): a port where
    nothing listens stands for a machine without network."""
    env = dict(
        os.environ,
        **LOCAL_ENV,
        PYTHONPATH=str(ROOT),
        REARRANGE_DATA_BASE_URL=f"http://127.0.0.1:{free_port()}/",
    )
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "rearrange.download",
            "data",
            "--years",
            "2023",
            "--splits",
            "val",
            "--out",
            str(tmp_path / "d"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1
    line = _one_line(p.stderr)
    assert "cannot reach" in line and "2023/val.pkl.gz" in line and "Connection refused" in line
    assert not (tmp_path / "d").exists()


def test_bad_arguments_are_usage_errors(tmp_path, capsys):
    code, _, err = _run(
        ["data", "--years", "2023", "--splits", "train_unseen", "--out", str(tmp_path)], capsys
    )
    assert code == 2 and "train_unseen" in _one_line(err)
    (tmp_path / "f").write_text("x")
    code, _, err = _run(["data", "--out", str(tmp_path / "f")], capsys)
    assert code == 2 and "is a file" in _one_line(err)
    with pytest.raises(SystemExit) as e:
        dl.main(["checkpoints", "--configs", "nope"])
    assert e.value.code == 2


def _no_backoff(fn):
    return lambda *a, **k: fn(*a, **{**k, "backoff_s": 0.0})


@pytest.mark.skipif(
    not OFFICIAL_VAL_2023.is_file(), reason="needs ../shared/data/rearrangement/2023_val.pkl.gz"
)
def test_official_2023_val_through_the_real_table(server, tmp_path, capsys):
    """The real table entry (size, sha256) accepts the real file, which then loads by year."""
    from rearrange.dataset import load_dataset, load_stage

    server.files["2023/val.pkl.gz"] = OFFICIAL_VAL_2023.read_bytes()
    code, out, err = _run(
        [
            "data",
            "--years",
            "2023",
            "--splits",
            "val",
            "--base-url",
            server.base_url,
            "--out",
            str(tmp_path),
        ],
        capsys,
    )
    assert code == 0 and "sha256 verified" in out, err
    data = load_stage("val", data_dir=tmp_path, year=2023)
    assert (len(data), sum(map(len, data.values()))) == (20, 1000)
    assert data == load_dataset(OFFICIAL_VAL_2023, stage="val")


def _reference() -> dict:
    return json.loads(REFERENCE.read_text())


def test_table_matches_the_reference():
    """Every size, hash and URL in our table equals the vendored facts (a typo would pass the
    tests above, which use made-up files)."""
    ref = _reference()
    rows = {r["path"]: (r["bytes"], r["sha256"]) for r in ref["data_files"]}
    assert {f.url_path: (f.size, f.sha256) for f in DATA_FILES.values()} == rows
    base = "https://prior-model-weights.s3.us-east-2.amazonaws.com/embodied-ai/rearrangement/"
    ours = {base + c.file.url_path for c in CHECKPOINTS.values()} | {base + MAP_WEIGHTS.url_path}
    assert ours == set(ref["checkpoint_urls"])
    assert YEARS == (2021, 2022, 2023)


def test_table_layout_and_gitignore():
    """Stage files land where load_stage(year=...) reads them; nothing downloaded gets committed."""
    for (year, split), f in DATA_FILES.items():
        assert f.local_path == f"{year}/{split}.pkl.gz" and len(f.sha256) == 64
    for name, c in CHECKPOINTS.items():
        assert c.config.endswith(f"/{name}.py") and c.file.local_path.endswith(".pt")
    paths = [f"data/{f.local_path}" for f in DATA_FILES.values()]
    paths += [
        f"pretrained_model_ckpts/{f.local_path}"
        for f in [MAP_WEIGHTS] + [c.file for c in CHECKPOINTS.values()]
    ]
    paths += [p + ".part" for p in paths]
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    p = subprocess.run(
        ["git", "check-ignore", "--no-index", *paths], cwd=ROOT, capture_output=True, text=True
    )
    assert sorted(p.stdout.split()) == sorted(paths)
