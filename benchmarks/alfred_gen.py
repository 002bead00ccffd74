"""ALFRED generation speed, planner time per problem and online-expert query rate.

    python benchmarks/alfred_gen.py --demos 28 --workers 2 --problems 14 --episodes 14

1. demonstrations per minute of ``alfred_task.gen.generate`` (Fast Downward planner, replay check on);
2. per-problem planning time of Fast Downward and of the template planner on the problems of
   sampled tasks (same ProblemState for both; medians, plus whether their costs agree);
3. online-expert queries per second on one core: the expert answers every step of episodes in
   which the learner does something else with probability --deviate (DAgger-like rollouts):
   a random navigation action, or, in a second pass, a random interaction on a visible object
   (objects change, so the expert must replan). Time inside ``next_action`` counts, setup
   included. Reports replans, goal success and expert errors (no plan from a state).

Writes benchmarks/results/alfred_gen.json and prints a table.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from alfred_task import constants as C
from alfred_task.env.environment import AlfredEnv
from alfred_task.planning.expert import AlfredExpert, ExpertError
from alfred_task.gen.generate import GenerationError, generate, generate_one
from alfred_task.env.goal_conditions import goal_satisfied
from alfred_task.env.navigation import GridNavigator, agent_node
from alfred_task.planning import load_domain, make_problem, plan_cost, solve, template_plan
from alfred_task.planning.scene_state import LocationIndex, build_problem_state

from _common import RESULTS_DIR, write_json


def bench_generation(n: int, workers: int, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        summary = generate(Path(d), n, seed=seed, workers=workers)
        dt = time.perf_counter() - t
    ok = n - summary["failed"]
    return {
        "demos": n,
        "ok": ok,
        "failed": summary["failed"],
        "seconds": round(dt, 1),
        "demos_per_min": round(60 * ok / dt, 2),
        "workers": workers,
    }


def _episodes(env: AlfredEnv, n: int, seed: int):
    """Start states of n valid generated demonstrations (their recorded scenes)."""
    out = []
    for i in range(n):
        try:
            split, traj, _ = generate_one(env, seed, i, planner="template")
        except GenerationError:
            continue
        out.append(traj)
    return out


def bench_planners(env: AlfredEnv, trajs) -> dict:
    fd, tp, agree = [], [], 0
    domain = load_domain()
    for traj in trajs:
        env.init_episode(traj)
        nav = GridNavigator.from_controller(env.controller)
        index = LocationIndex(env.controller, nav, agent_node(env.last_event.metadata["agent"]))
        state = build_problem_state(
            env.last_event.metadata, index, traj["task_type"], traj["pddl_params"]
        )
        t = time.perf_counter()
        p_t = template_plan(state, traj["task_type"], traj["pddl_params"])
        tp.append(time.perf_counter() - t)
        t = time.perf_counter()
        p_f = solve(domain, make_problem(state, traj["task_type"], traj["pddl_params"]))
        fd.append(time.perf_counter() - t)
        agree += plan_cost(state, p_t) == plan_cost(state, p_f)
    return {
        "problems": len(trajs),
        "fast_downward_median_s": round(statistics.median(fd), 3),
        "fast_downward_max_s": round(max(fd), 3),
        "template_median_ms": round(1000 * statistics.median(tp), 2),
        "same_cost": agree,
    }


def _random_interaction(env: AlfredEnv, rng: np.random.Generator) -> None:
    """A learner mistake that changes objects: a random interaction on a random visible object."""
    masks = env.last_event.instance_masks
    visible = sorted(oid for oid, m in masks.items() if m.sum() >= C.MIN_VISIBLE_PIXELS)
    if not visible:
        env.va_interact(str(rng.choice(C.NAV_ACTIONS)), None)
        return
    oid = visible[int(rng.integers(len(visible)))]
    env.va_interact(str(rng.choice(C.INTERACT_ACTIONS)), masks[oid])


def bench_online_expert(
    env: AlfredEnv, trajs, deviate: float, seed: int, interact: bool = False
) -> dict:
    """`deviate`: chance per step that the learner does something else than the expert says:
    a random navigation action, or (``interact``) a random interaction on a visible object."""
    rng = np.random.default_rng(seed)
    q_time, queries, replans, success, errors = 0.0, 0, 0, 0, 0
    messages = []
    for traj in trajs:
        env.init_episode(traj)
        t = time.perf_counter()
        expert = AlfredExpert(env, traj["task_type"], traj["pddl_params"])
        setup = time.perf_counter() - t
        q_time += setup
        for _ in range(C.MAX_STEPS):
            t = time.perf_counter()
            try:
                a = expert.next_action()
            except ExpertError as e:
                errors += 1
                messages.append(f"{traj['task_type']}: {e}"[:300])
                break
            q_time += time.perf_counter() - t
            queries += 1
            if a.is_stop:
                break
            if rng.random() < deviate:
                if interact:
                    _random_interaction(env, rng)
                else:
                    env.va_interact(str(rng.choice(C.NAV_ACTIONS)), None)
            else:
                env.va_interact(a.action, a.mask)
        md = env.last_event.metadata
        success += goal_satisfied(
            traj["task_type"],
            traj["pddl_params"],
            md["objects"],
            env.cleaned_objects,
            env.heated_objects,
            env.cooled_objects,
            md["inventoryObjects"],
        )
        replans += expert.replans
    return {
        "episodes": len(trajs),
        "deviate": deviate,
        "mistakes": "interactions" if interact else "navigation",
        "queries": queries,
        "queries_per_s": round(queries / q_time, 1),
        "replans": replans,
        "goal_success": success,
        "expert_errors": errors,
        "error_messages": messages,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--demos", type=int, default=28)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--episodes", type=int, default=14, help="tasks for the planner and expert benchmarks"
    )
    ap.add_argument("--deviate", type=float, nargs="*", default=[0.0, 0.1])
    ap.add_argument("--seed", type=int, default=101)
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "alfred_gen.json")
    args = ap.parse_args(argv)
    res = {"generation": bench_generation(args.demos, args.workers, args.seed)}
    print("generation:", res["generation"], flush=True)
    env = AlfredEnv(width=C.SCREEN_WIDTH, height=C.SCREEN_HEIGHT)
    trajs = _episodes(env, args.episodes, args.seed + 1)
    res["planners"] = bench_planners(env, trajs)
    print("planners:", res["planners"], flush=True)
    res["online_expert"] = [bench_online_expert(env, trajs, d, args.seed) for d in args.deviate]
    res["online_expert"] += [
        bench_online_expert(env, trajs, d, args.seed, interact=True) for d in args.deviate if d > 0
    ]
    for r in res["online_expert"]:
        print("online expert:", r, flush=True)
    write_json(args.out, res)
    g, p = res["generation"], res["planners"]
    print(
        f"\n| measure | value |\n|---|---|\n| demonstrations/min ({g['workers']} workers) | {g['demos_per_min']} "
        f"({g['ok']}/{g['demos']} ok) |\n| Fast Downward per problem (median / max) | {p['fast_downward_median_s']} s / "
        f"{p['fast_downward_max_s']} s |\n| template planner per problem (median) | {p['template_median_ms']} ms |\n"
        f"| plans of equal cost | {p['same_cost']}/{p['problems']} |"
    )
    for r in res["online_expert"]:
        print(
            f"| online expert queries/s, {r['mistakes']} mistakes {r['deviate']:.0%} | {r['queries_per_s']} "
            f"({r['replans']} replans, goal {r['goal_success']}/{r['episodes']}, "
            f"{r['expert_errors']} expert errors) |"
        )
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)
