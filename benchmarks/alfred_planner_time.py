"""Planning time of Fast Downward and of the template planner on the synthetic kitchen cases.

    python benchmarks/alfred_planner_time.py --repeats 5

The cases are those of tests/test_alfred_planning.py (``alfred_task.planning.examples``): one
task per type plus sliced variants. Prints the median wall time per case and planner over
--repeats runs, and the Fast Downward / template ratio (tests check the plans, not the clock;
the test this replaces allowed 5 s for Fast Downward and 0.5 s for the template planner).
Writes benchmarks/results/alfred_planner_time.{md,json}.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable, Dict, List, Optional, Sequence

from tqdm import tqdm

from _common import RESULTS_DIR, markdown_table, write_json, write_markdown
from alfred_task.planning import load_domain, make_problem, plan_cost, solve, template_plan
from alfred_task.planning.examples import CASES, kitchen
from common.cli import OneLineArgumentParser, check_int, report_usage_errors


def _median_s(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_case(name: str, domain: str, repeats: int) -> Dict[str, object]:
    """Median seconds of both planners on one case, and whether their plan costs agree."""
    task_type, params = CASES[name]
    st = kitchen()
    problem = make_problem(st, task_type, params)
    fd_s = _median_s(lambda: solve(domain, problem), repeats)
    tp_s = _median_s(lambda: template_plan(st, task_type, params), repeats)
    same = plan_cost(st, solve(domain, problem)) == plan_cost(
        st, template_plan(st, task_type, params)
    )
    return {
        "case": name,
        "fd_s": round(fd_s, 4),
        "template_s": round(tp_s, 5),
        "ratio": round(fd_s / max(tp_s, 1e-9), 1),
        "same_cost": same,
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = OneLineArgumentParser(
        prog="benchmarks/alfred_planner_time.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--repeats", type=int, default=3, help="runs per case and planner (median)")
    args = ap.parse_args(argv)
    with report_usage_errors(ap.prog):
        check_int("--repeats", args.repeats, 1)
    domain = load_domain()
    rows: List[Dict[str, object]] = [
        time_case(c, domain, args.repeats) for c in tqdm(sorted(CASES), desc="cases")
    ]
    fd_all = statistics.median(r["fd_s"] for r in rows)
    tp_all = statistics.median(r["template_s"] for r in rows)
    lines = [f"# ALFRED planner time on the synthetic kitchen ({args.repeats} repeats, median)", ""]
    lines += markdown_table(
        ["case", "Fast Downward s", "template s", "FD / template", "same cost"],
        [(r["case"], r["fd_s"], r["template_s"], r["ratio"], r["same_cost"]) for r in rows],
        "lrrrl",
    )
    lines += [
        "",
        f"median over cases: Fast Downward {fd_all:.3f} s, template {tp_all * 1000:.2f} ms "
        f"(ratio {fd_all / max(tp_all, 1e-9):.0f})",
    ]
    text = "\n".join(lines)
    print(text)
    out = RESULTS_DIR / "alfred_planner_time.md"
    write_markdown(out, text)
    write_json(
        out.with_suffix(".json"),
        {"repeats": args.repeats, "fd_median_s": fd_all, "template_median_s": tp_all, "rows": rows},
    )
    return 0


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)
