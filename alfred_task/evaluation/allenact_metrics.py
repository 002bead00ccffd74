"""ALFRED's aggregate metrics (§5.2) from an AllenAct ``--eval`` metrics file.

    python -m alfred_task.evaluation.allenact_metrics OUT/metrics/<tag>/<ts>/metrics__test_<ts>.json [--out table.json]

Why: AllenAct averages each per-episode scalar over the test episodes, but ALFRED's GC is
micro-averaged over goal conditions and its PLW scores are weighted by the expert length L*.
`alfred_task.alfred_tasks.AlfredOnlineTask.metrics` therefore reports numerators and denominators
(``gc_completed``/``gc_total``, ``plw_success_num``/``plw_gc_num``/``expert_len``), and ratios of
their means are exactly ALFRED's SR, GC, PLW-SR and PLW-GC. ``interactions`` / ``model_mask_interactions`` count the
interaction steps and those that sent the model's own mask (all of them in an ``--eval`` run;
older metrics files lack them). Written next to the input as
``alfred_metrics.json`` (atomic) unless ``--out`` says otherwise; the run's config kwargs
(visual encoder included) are copied in when AllenAct saved them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from common.atomic_io import write_json_atomic

__all__ = ["alfred_summary", "summarize_file", "main"]

_NEEDED = ("success", "gc_completed", "gc_total", "plw_success_num", "plw_gc_num", "expert_len")


def alfred_summary(tasks: Sequence[Mapping[str, Any]]) -> Dict[str, float]:
    """SR, GC, PLW-SR, PLW-GC (fractions) and the episode count of per-episode task metrics."""
    rows = [t for t in tasks if all(k in t for k in _NEEDED)]
    if not rows:
        raise ValueError(f"no episode has ALFRED's fields {list(_NEEDED)}")
    tot = {k: sum(float(t[k]) for t in rows) for k in _NEEDED}
    out = {
        "episodes": len(rows),
        "SR": tot["success"] / len(rows),
        "GC": tot["gc_completed"] / max(tot["gc_total"], 1.0),
        "PLW_SR": tot["plw_success_num"] / max(tot["expert_len"], 1.0),
        "PLW_GC": tot["plw_gc_num"] / max(tot["expert_len"], 1.0),
    }
    for k in ("interactions", "model_mask_interactions"):
        if all(k in t for t in rows):
            out[k] = int(sum(float(t[k]) for t in rows))
    return out


def _run_kwargs(metrics_file: Path) -> Optional[Dict[str, Any]]:
    """``config_kwargs.json`` AllenAct saved for the run (OUT/used_configs/<tag>/<ts>/), if any."""
    out_dir = metrics_file.parents[3] if len(metrics_file.parents) > 3 else None
    if out_dir is None:
        return None
    found = sorted((out_dir / "used_configs").glob("*/*/config_kwargs.json"))
    return json.loads(found[-1].read_text()) if found else None


def summarize_file(path: Path) -> List[Dict[str, Any]]:
    """One summary per evaluated checkpoint in an AllenAct metrics file."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a readable AllenAct metrics file ({e})") from None
    entries = data if isinstance(data, list) else [data]
    out = []
    for e in entries:
        if not isinstance(e, dict) or "tasks" not in e:
            raise ValueError(
                f"{path}: entries need 'tasks' (per-episode metrics); run allenact --eval"
            )
        out.append(
            {
                "checkpoint": e.get("ckpt_path"),
                "step": e.get("training_steps"),
                **alfred_summary(e["tasks"]),
            }
        )
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m alfred_task.evaluation.allenact_metrics",
        description=__doc__.splitlines()[0],
    )
    ap.add_argument("metrics", type=Path, help="metrics__test_<ts>.json written by allenact --eval")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output json (default: alfred_metrics.json beside it)",
    )
    args = ap.parse_args(argv)
    try:
        rows = summarize_file(args.metrics)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out = args.out or args.metrics.with_name("alfred_metrics.json")
    write_json_atomic(
        out, {"results": rows, "run_config_kwargs": _run_kwargs(args.metrics.resolve())}, indent=2
    )
    for r in rows:
        print(
            f"step {r['step']}: episodes {r['episodes']} SR {r['SR']:.3f} GC {r['GC']:.3f} "
            f"PLW-SR {r['PLW_SR']:.3f} PLW-GC {r['PLW_GC']:.3f}"
        )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)
