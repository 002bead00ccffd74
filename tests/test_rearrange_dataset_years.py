"""Choosing a stage from the official files by year (`load_stage(..., year=Y)`, `rearrange.eval
--year`), the `train_unseen` stage, and the errors that name the exact download command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import rearrange.dataset as ds
from rearrange.dataset import STAGES, DatasetError, dataset_path, load_dataset, load_stage

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "rearrangement"
OFFICIAL = {split: SHARED / f"2023_{split}.pkl.gz" for split in ("val", "train")}


def _official_root(tmp_path: Path, *splits: str) -> Path:
    """A data root laid out as `python -m rearrange.download data` leaves it: <root>/2023/<split>.pkl.gz."""
    for split in splits:
        if not OFFICIAL[split].is_file():
            pytest.skip(f"needs {OFFICIAL[split]}")
        (tmp_path / "2023").mkdir(exist_ok=True)
        (tmp_path / "2023" / f"{split}.pkl.gz").symlink_to(OFFICIAL[split])
    return tmp_path


@pytest.mark.parametrize("split,scenes,episodes", [("val", 20, 1000), ("train", 80, 4000)])
def test_official_split_by_year(tmp_path, split, scenes, episodes):
    root = _official_root(tmp_path, split)
    data = load_stage(split, data_dir=root, year=2023)
    assert (len(data), sum(map(len, data.values()))) == (scenes, episodes)
    assert {ep["stage"] for eps in data.values() for ep in eps} == {split}
    assert data == load_dataset(OFFICIAL[split], stage=split)
    # a year folder given as data_dir (as a config's "data_dir": "data/2023" does) reads the same file
    assert load_stage(split, data_dir=root / "2023") == data
    ours = (
        load_stage(split) if split == "val" else None
    )  # our thor_lite val differs from the official one
    assert ours is None or ours != data


def test_missing_official_file_names_the_download_command(tmp_path, monkeypatch):
    with pytest.raises(DatasetError) as e:
        load_stage("test", data_dir=tmp_path, year=2022)
    assert str(e.value) == (
        f"{tmp_path}/2022/test.pkl.gz: no such dataset file; download it with "
        f"`python -m rearrange.download data --years 2022 --splits test --out {tmp_path}`"
    )
    monkeypatch.setattr(
        ds, "OFFICIAL_DATA_DIR", tmp_path
    )  # the default root: the command needs no --out
    with pytest.raises(
        DatasetError,
        match=re.escape("`python -m rearrange.download data --years 2021 --splits train_unseen`"),
    ):
        load_stage("train_unseen", year=2021)
    with pytest.raises(DatasetError, match=re.escape("--years 2023 --splits val`")):
        load_stage("val", data_dir=tmp_path / "2023")
    assert list(tmp_path.iterdir()) == []


def test_train_unseen_is_a_stage_from_the_2021_files(tmp_path):
    assert "train_unseen" in STAGES
    assert dataset_path("train_unseen", tmp_path, 2021) == tmp_path / "2021" / "train_unseen.pkl.gz"
    with pytest.raises(DatasetError, match="2023 has no official 'train_unseen' split"):
        load_stage("train_unseen", data_dir=tmp_path, year=2023)
    with pytest.raises(
        DatasetError, match=r"exists only as an official file \(year 2021\).*--splits train_unseen"
    ):
        load_stage("train_unseen", data_dir=tmp_path)


def test_bad_year_and_our_stages_unchanged(tmp_path):
    with pytest.raises(DatasetError, match="unknown dataset year 2020"):
        load_stage("val", year=2020)
    with pytest.raises(DatasetError, match="no official 'train_subset' split"):
        load_stage("train_subset", data_dir=tmp_path, year=2023)
    assert dataset_path("val") == ds.DATA_DIR / "val.pkl.gz"
    with pytest.raises(DatasetError, match=r"`python -m rearrange\.gen --stage val --out "):
        load_stage("val", data_dir=tmp_path)


def test_eval_year_reads_the_official_file(tmp_path, capfd):
    """`rearrange.eval --year` reads <data_dir>/<year>/<stage>.pkl.gz (the root alone holds no
    split, so success means the year file was used), or says how to download a missing one."""
    from rearrange import eval as ev

    (tmp_path / "d").mkdir()
    root = _official_root(tmp_path / "d", "val")
    common = [
        "--agents",
        "done",
        "--year",
        "2023",
        "--config-kwargs",
        f'{{"data_dir": "{root}"}}',
        "--scenes",
        "FloorPlan21",
        "--episodes-per-scene",
        "1",
    ]
    assert ev.main(common + ["--stage", "val", "--table", str(tmp_path / "t.md")]) == 0
    assert re.search(r"^\| done \| 1 \|", (tmp_path / "t.md").read_text(), re.M)
    capfd.readouterr()
    with pytest.raises(SystemExit) as e:
        ev.main(common + ["--stage", "test", "--table", str(tmp_path / "t2.md")])
    err = capfd.readouterr().err
    assert e.value.code == 2 and not (tmp_path / "t2.md").exists()
    assert f"--years 2023 --splits test --out {root}`" in err and len(err.strip().splitlines()) == 1
