"""experiments/alfred_seq2seq/compare.py: a call that evaluates only some agents (`--evaluate`)
trains nothing else (separate calls side by side, then a report)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_evaluating_only_random_trains_no_variant(tmp_path):
    out = tmp_path / "o"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments.alfred_seq2seq.compare",
            "--data",
            str(REPO / "data" / "alfred_lite"),
            "--evaluate",
            "random",
            "--splits",
            "valid_seen",
            "--limit",
            "1",
            "--subgoals",
            "none",
            "--max-steps",
            "5",
            "--workers",
            "1",
            "--out",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not (out / "train").exists()  # no variant was trained for a random-only call
    assert (out / "eval" / "random").is_dir()
    table = (out / "compare.md").read_text()
    assert "| random | 1 |" in table and "| seq2seq_pm |" not in table


def test_bad_agent_kwargs_is_one_line_before_any_work(tmp_path):
    out = tmp_path / "o"
    for bad, why in (("{nope", "invalid JSON"), ("[1]", "expected a JSON object")):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "experiments.alfred_seq2seq.compare",
                "--data",
                str(REPO / "data" / "alfred_lite"),
                "--evaluate",
                "random",
                "--agent-kwargs",
                bad,
                "--out",
                str(out),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        assert proc.returncode != 0 and "Traceback" not in proc.stderr
        assert (
            "--agent-kwargs" in proc.stderr
            and why in proc.stderr
            and len(proc.stderr.strip().splitlines()) == 1
        )
        assert not out.exists()


def test_ship_half_halves_the_weights_and_loads_back_into_the_float32_model(tmp_path):
    import torch

    from alfred_task.training.ship_checkpoint import ship

    from alfred_task.evaluation.agents import CheckpointAgent
    from experiments.alfred_seq2seq.il_fit import save_policy
    from alfred_task.models.actor_critic import build_actor_critic
    from alfred_task.models.agent import AGENT_REF
    from alfred_task.models.trained import AlfredSeq2SeqTrainedPolicy
    from alfred_task.data.vocabulary import AlfredVocab, lookup

    kw = dict(
        num_words=12,
        demb=8,
        dhid=16,
        dframe=24,
        progress_monitor=True,
        mask_lang_padding=False,
        subcell_mask=True,
    )
    vocab = AlfredVocab.new()
    while len(vocab.word) < kw["num_words"]:
        lookup(vocab.word, f"w{len(vocab.word)}", True)
    torch.manual_seed(0)
    plain_policy = build_actor_critic(dict(kw))
    record = {
        "agent": AGENT_REF,
        "kwargs": {
            "model_kwargs": kw,
            "vocab": vocab.to_record(),
            "visual_encoder": "random_resnet18",
        },
    }
    policy = AlfredSeq2SeqTrainedPolicy(
        plain_policy.action_space, plain_policy.observation_space, eval_record=record, **kw
    )
    save_policy(policy, tmp_path / "run.pt")
    full = {
        **torch.load(tmp_path / "run.pt", weights_only=True),
        "optimizer_state_dict": {"junk": torch.zeros(3)},
    }
    torch.save(full, tmp_path / "run.pt")
    plain, half = (
        ship(tmp_path / "run.pt", tmp_path / "a"),
        ship(tmp_path / "run.pt", tmp_path / "b", half=True),
    )
    assert half.stat().st_size < 0.6 * plain.stat().st_size
    stored = torch.load(half, weights_only=True)
    assert "optimizer_state_dict" not in stored
    floats = {
        k: v
        for k, v in stored["model_state_dict"].items()
        if isinstance(v, torch.Tensor) and v.is_floating_point()
    }
    assert floats and all(v.dtype == torch.float16 for v in floats.values())
    agent = CheckpointAgent(half).inner  # strict load into the float32 model
    for k, v in agent.policy.state_dict().items():
        if k in floats:
            assert v.dtype == torch.float32 and torch.equal(v, floats[k].float())
    assert not agent.obstruction_evasion and agent.mask_rule.spec == "threshold"
    # the inference options it was evaluated with ride along; the CLI's overrides still win
    opts = ship(
        tmp_path / "run.pt",
        tmp_path / "c",
        half=True,
        agent_kwargs={"obstruction_evasion": True, "mask_rule": "top_k:50@PickupObject"},
    )
    agent = CheckpointAgent(opts).inner
    assert agent.obstruction_evasion and agent.mask_rule.spec == "top_k:50@PickupObject"
    assert CheckpointAgent(opts, mask_rule="threshold").inner.mask_rule.spec == "threshold"


def test_trajectory_clustered_interval_counts_a_trajectorys_annotations_once():
    """Three annotations that always end alike are one sample: the clustered interval of 10
    trajectories is wider than Wilson's over their 30 annotations, and equals the bootstrap over
    the 10 per-trajectory rates."""
    from experiments.alfred_seq2seq.compare import by_trajectory, ratio_ci, trajectory_ci, wilson

    recs = [{"task": f"t{i}/trial", "trial": "trial"} for i in range(10) for _ in range(3)]
    ok = [
        1.0 if int(r["task"][1:].split("/")[0]) < 4 else 0.0 for r in recs
    ]  # 4 of 10 trajectories succeed
    num, den = by_trajectory(recs, ok, [1.0] * len(recs))
    assert sorted(num) == [0.0] * 6 + [3.0] * 4 and den == [3.0] * 10
    lo, hi = trajectory_ci(recs, ok, [1.0] * len(recs), seed=0)
    assert (lo, hi) == ratio_ci([n / 3 for n in num], [1.0] * 10, seed=0)
    w_lo, w_hi = wilson(12, 30)
    assert lo <= 0.4 <= hi and hi - lo > w_hi - w_lo


def test_paired_difference_sees_a_consistent_gain_that_separate_intervals_miss():
    """Agent a succeeds on one more of 6 evaluations than b in every trajectory, while trajectories
    range from easy to hopeless: the separate clustered intervals overlap, the paired one excludes 0.
    Records only one agent has are left out; identical agents differ by exactly 0."""
    from experiments.alfred_seq2seq.compare import paired_difference, trajectory_ci

    def recs(extra: int) -> list:
        out = []
        for t in range(12):
            base = t % 6  # 0 to 5 of 6 evaluations succeed for b
            out += [
                {"task": f"t{t}/x", "repeat_idx": i, "success": i < base + extra} for i in range(6)
            ]
        return out

    a, b = recs(1), recs(0)
    a.append({"task": "only_a/x", "repeat_idx": 0, "success": True})  # not in b: ignored
    succ = (lambda r: 1.0 if r["success"] else 0.0, lambda r: 1.0)
    d, (lo, hi) = paired_difference(a, b, *succ, seed=0)
    assert max(abs(d - 1 / 6), abs(lo - d), abs(hi - d)) < 1e-9  # the same gain in every trajectory
    sep_a = trajectory_ci(a[:-1], [succ[0](r) for r in a[:-1]], [1.0] * 72, seed=0)
    sep_b = trajectory_ci(b, [succ[0](r) for r in b], [1.0] * 72, seed=0)
    assert sep_a[0] < sep_b[1]  # the separate intervals overlap
    assert paired_difference(b, b, *succ, seed=0) == (0.0, (0.0, 0.0))
    noisy = [
        dict(r, success=r["success"] if r["task"] != "t0/x" else True) for r in b
    ]  # one trajectory better
    d, (lo, hi) = paired_difference(noisy, b, *succ, seed=0)
    assert d > 0 and lo == 0.0 < hi  # one trajectory better is not significant


def test_claims_add_the_requested_pairs_after_the_must_show_ones():
    """--pair A,B adds A > B rows (here task GC only: no subgoal records) after the must-show
    comparisons, with the paired difference on the same episodes; pairs naming an absent agent are skipped."""
    from experiments.alfred_seq2seq.compare import claims, subgoal_summary, task_summary

    from alfred_task.evaluation.metrics import episode_record

    def recs(
        done: int,
    ) -> list:  # `done` of 2 goal conditions in every episode of 10 trajectories x 3
        return [
            episode_record(
                f"t{t}",
                "pick_two_obj_and_place",
                i,
                "g",
                done == 2,
                done,
                2,
                10,
                10,
                0.0,
                task=f"t{t}/x",
            )
            for t in range(10)
            for i in range(3)
        ]

    by_agent = {"seq2seq_pm": recs(1), "random": recs(0), "pm_new": recs(2)}
    recs_all = {k: {"task": v, "subgoal": []} for k, v in by_agent.items()}
    summary = {
        k: {"task": task_summary(v, 0), "subgoal": subgoal_summary([], 0)}
        for k, v in by_agent.items()
    }
    rows = claims(summary, recs_all, 0, pairs=[("pm_new", "seq2seq_pm"), ("pm_new", "absent")])
    assert [r[0] for r in rows] == ["seq2seq_pm > random: task GC", "pm_new > seq2seq_pm: task GC"]
    name, sep, sep_traj, (d, (lo, hi)) = rows[1]
    assert (
        sep and sep_traj and abs(d - 0.5) < 1e-9 and abs(lo - 0.5) < 1e-9 and abs(hi - 0.5) < 1e-9
    )
