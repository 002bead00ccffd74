"""scripts/main_job.py builds its ALFRED tables from the result JSON files, not from log lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import load_script

from alfred_task.evaluation.cli import task_results
from alfred_task.evaluation.metrics import episode_record, format_task_table

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "main_job.py"


@pytest.fixture(scope="module")
def main_job():
    return load_script(SCRIPT)


def _write(folder: Path, split: str, ts: str, successes: int) -> dict:
    recs = [
        episode_record(
            f"trial_{i}",
            "pick_and_place_simple",
            0,
            "goal",
            i < successes,
            1 if i < successes else 0,
            2,
            10,
            12,
        )
        for i in range(3)
    ]
    res = task_results(recs)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"task_results_{split}_{ts}.json").write_text(json.dumps(res))
    return res


def test_tables_come_from_this_runs_result_files(tmp_path, main_job):
    stale = _write(tmp_path, "valid_seen", "20000101_000000_000000", 0)
    existing = set(tmp_path.glob("*.json"))
    seen = _write(tmp_path, "valid_seen", "20300101_000000_000000", 2)
    unseen = _write(tmp_path, "valid_unseen", "20300101_000000_000000", 1)
    text = main_job.alfred_tables(tmp_path, ("valid_seen", "valid_unseen"), existing)
    assert text == (
        format_task_table(seen["results"], "task evaluation: valid_seen (3 episodes)")
        + "\n\n"
        + format_task_table(unseen["results"], "task evaluation: valid_unseen (3 episodes)")
    )
    assert "66.67" in text and stale["results"]["all"]["sr"] == 0.0


def test_a_missing_result_file_fails_the_job(tmp_path, main_job):
    _write(tmp_path, "valid_seen", "20300101_000000_000000", 1)
    with pytest.raises(SystemExit, match="task_results_valid_unseen"):
        main_job.alfred_tables(tmp_path, ("valid_seen", "valid_unseen"))


def test_shipped_checkpoint_is_small_and_loads_strictly(main_job):
    from rearrange import curriculum as cur
    from rearrange.curriculum import SliceSpec, load_agent

    assert main_job.SHIPPED.stat().st_size <= 20 * 2**20
    config, model, meta = load_agent(main_job.SHIPPED, main_job.REPO)  # load_state_dict is strict
    assert (
        meta["config"] == main_job.CONFIG
        and config.SCREEN_SIZE == meta["config_kwargs"]["screen_size"]
    )
    spec = SliceSpec(**meta["slice"])
    from rearrange.dataset import load_dataset

    held = cur.held_out_of(spec, load_dataset(main_job.HELD_OUT))
    assert set(held) <= set(spec.scenes) and sum(map(len, held.values())) >= 10
    assert all(cur.episode_kind(e) in spec.kinds for v in held.values() for e in v)


def test_main_job_evaluates_the_shipped_agent(tmp_path, main_job):
    """The default path on two held-out episodes (the first 2 of 3, `--held-out-per-scene 2`):
    the protocol's five rows with CIs and paired comparisons, GIF, JSON naming the files."""
    from rearrange.dataset import load_dataset, save_dataset

    from rearrange.curriculum import episode_kind, load_agent, SliceSpec

    kinds = SliceSpec(**load_agent(main_job.SHIPPED, main_job.REPO)[2]["slice"]).kinds
    held = load_dataset(main_job.HELD_OUT)
    scene = next(iter(held))
    small = tmp_path / "held.pkl.gz"
    save_dataset({scene: [e for e in held[scene] if episode_kind(e) in kinds][:3]}, small)
    assert (
        main_job.main(
            [
                "--out",
                str(tmp_path / "o"),
                "--held-out",
                str(small),
                "--skip-alfred",
                "--held-out-per-scene",
                "2",
            ]
        )
        == 0
    )
    from rearrange.protocol import ROWS, sha256_of

    text = (tmp_path / "o" / "results.md").read_text()
    report = json.loads((tmp_path / "o" / "results.json").read_text())
    rows = report["rows"]
    assert tuple(rows) == ROWS and all(r["episodes"] == 2 for r in rows.values())
    assert rows["done at step 0"]["fixed_strict"]["pct"] == 0.0
    assert report["held_out"]["sha256"] == sha256_of(small)
    assert report["training_episodes"]["sha256"] == sha256_of(main_job.TRAIN_EPISODES)
    assert set(report["comparisons"]) == set(ROWS[1:])
    assert "% Fixed Strict [95% CI]" in text and (tmp_path / "o" / "episode.gif").stat().st_size > 0
    assert "The agent " in text and report["held_out"]["sha256"] in text
    # the agents ran in 2 worker processes (the default); one process gives the same numbers
    assert (
        main_job.main(
            [
                "--out",
                str(tmp_path / "o1"),
                "--held-out",
                str(small),
                "--skip-alfred",
                "--held-out-per-scene",
                "2",
                "--processes",
                "1",
            ]
        )
        == 0
    )
    assert json.loads((tmp_path / "o1" / "results.json").read_text()) == report


def _results(gc_pairs) -> dict:
    """{split: results} whose 'all' GC is completed/total of 1 episode per pair."""
    out = {}
    for split, (done, total) in gc_pairs.items():
        rec = episode_record("t", "pick_and_place_simple", 0, "goal", False, done, total, 10, 12)
        out[split] = task_results([rec])["results"]
    return out


def test_step0_row_deltas_and_a_plain_verdict(main_job):
    splits = ("valid_seen", "valid_unseen")
    results = {
        "step0": _results({"valid_seen": (1, 4), "valid_unseen": (0, 4)}),
        "expert": _results({"valid_seen": (4, 4), "valid_unseen": (4, 4)}),
        "random": _results({"valid_seen": (1, 4), "valid_unseen": (0, 4)}),
        "seq2seq_pm_checkpoint": _results({"valid_seen": (1, 4), "valid_unseen": (2, 4)}),
    }
    text = main_job.alfred_over_step0(results, splits)
    assert "| valid_seen | step0 | 1 | 0.00 | 25.00 |  |" in text
    assert "| valid_seen | expert | 1 | 0.00 | 100.00 | +75.00 |" in text
    assert "| valid_seen | seq2seq_pm_checkpoint | 1 | 0.00 | 25.00 | +0.00 |" in text
    assert "| valid_unseen | seq2seq_pm_checkpoint | 1 | 0.00 | 50.00 | +50.00 |" in text
    assert (
        "- valid_seen: seq2seq_pm_checkpoint does NOT beat random (GC 25.00 vs random 25.00; "
        "step 0 25.00)." in text
    )
    assert "- valid_unseen: seq2seq_pm_checkpoint GC 50.00 is above random's 0.00" in text
    assert "no confidence interval" in text


def test_step0_agent_stops_before_any_action(main_job):
    flags = main_job.alfred_agents()["step0"]
    assert flags[:2] == ["--agent", "random"] and json.loads(flags[3]) == {"stop_prob": 1.0}
    assert list(main_job.alfred_agents())[0] == "step0"
