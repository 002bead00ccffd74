"""``dataset_meta.json``: what produced a generated ALFRED dataset (encoder, seeds, planner).

Why: ``feat_conv.pt`` files are only comparable when one encoder made them all, and a resumed
run must continue the run it resumes. The generator records the visual encoder once per dataset
and its own settings once per split it generated; a later run that disagrees (another encoder,
seed or planner for the same split) is refused with one line instead of mixing data. Readers
(training, evaluation) copy ``visual_encoder`` into their result files.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Mapping, Optional

from common.atomic_io import write_json_atomic

META_FILE = "dataset_meta.json"
FORMAT = "alfred json_2.1.0 layout + splits.json; feat_conv.pt = float32 [len(low_actions)+1, 512, 7, 7]"


class DatasetMetaError(ValueError):
    """The dataset on disk was made with other settings than the ones asked for now."""


def read_meta(root: Path) -> Optional[Dict[str, Any]]:
    """The dataset's metadata, or None when it has none (e.g. a downloaded ALFRED tree)."""
    path = Path(root) / META_FILE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise DatasetMetaError(f"{path}: not valid JSON ({e})") from None


def record_run(root: Path, split_key: str, run: Mapping[str, Any], encoder: Optional[Mapping[str, Any]]) -> Path:
    """Check `run`/`encoder` against what `root` already holds and record them (atomic).

    `split_key` is the split a generator run was restricted to ("any" when none); `encoder`
    is ``ResnetFeatures.describe()`` or None (no features written).
    """
    root = Path(root)
    meta = read_meta(root) or {"format": FORMAT, "visual_encoder": encoder, "runs": {}}
    if meta.get("visual_encoder") != (dict(encoder) if encoder is not None else None):
        raise DatasetMetaError(f"{root / META_FILE}: dataset features were made with visual_encoder "
                               f"{_name(meta.get('visual_encoder'))}, this run asks for {_name(encoder)}; "
                               "use another --out or the same --features")
    old = meta["runs"].get(split_key)
    if old is not None and old != dict(run):
        diff = {k: (old.get(k), run.get(k)) for k in set(old) | set(run) if old.get(k) != run.get(k)}
        raise DatasetMetaError(f"{root / META_FILE}: split {split_key!r} was generated with other settings "
                               f"(recorded vs now: {diff}); resume with the same ones or use another --out")
    meta["runs"][split_key] = dict(run)
    return write_json_atomic(root / META_FILE, meta, indent=2)


def _name(encoder: Optional[Mapping[str, Any]]) -> str:
    if encoder is None:
        return "none (no feat_conv.pt)"
    seed = f", seed {encoder['seed']}" if encoder.get("seed") is not None else ""
    return f"{encoder.get('name')!r}{seed} (weights sha256 {str(encoder.get('weights_sha256'))[:12]})"


def visual_encoder_of(root: Path) -> Optional[Dict[str, Any]]:
    """The encoder record of a dataset (None when unknown or no features)."""
    meta = read_meta(root)
    return None if meta is None else meta.get("visual_encoder")
