"""rearrange.eval's output files: atomic, deterministic, in the formats readers expect."""

from __future__ import annotations

import gzip
import json

import imageio.v2 as imageio
import numpy as np

from rearrange.eval import write_gif, write_submission


def test_submission_is_deterministic_gzipped_json(tmp_path):
    res = [
        {
            "task_info": {
                "unique_id": "FloorPlan1__val__0",
                "scene": "FloorPlan1",
                "index": np.int64(0),
            },
            "unshuffle/success": np.float32(0.5),
            "unshuffle/energy": np.arange(2),
        }
    ]
    a, b = tmp_path / "a" / "submission.json.gz", tmp_path / "b.json.gz"
    write_submission(res, a)
    write_submission(res, b)
    assert a.read_bytes() == b.read_bytes()  # gzip mtime fixed
    sub = json.loads(gzip.decompress(a.read_bytes()))
    assert sub == {
        "FloorPlan1__val__0": {
            "scene": "FloorPlan1",
            "index": 0,
            "unique_id": "FloorPlan1__val__0",
            "unshuffle/success": 0.5,
            "unshuffle/energy": [0, 1],
        }
    }
    assert sorted(p.name for p in a.parent.iterdir()) == ["submission.json.gz"]  # no temporary left


def test_gif_matches_a_direct_write(tmp_path):
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 255, (24, 52, 3), dtype=np.uint8) for _ in range(3)]
    write_gif(frames, tmp_path / "episode.gif", fps=4)
    imageio.mimsave(tmp_path / "direct.gif", frames, duration=250, loop=0)
    assert (tmp_path / "episode.gif").read_bytes() == (tmp_path / "direct.gif").read_bytes()
    assert len(imageio.mimread(tmp_path / "episode.gif")) == 3


def test_gif_plays_at_its_frame_rate(tmp_path):
    """Each frame is shown 1000 / fps ms (imageio's `duration` is in ms; seconds gave 0 ms)."""
    from PIL import Image

    frames = [np.full((8, 8, 3), v, dtype=np.uint8) for v in (0, 120, 240)]
    write_gif(frames, tmp_path / "episode.gif", fps=5)
    with Image.open(tmp_path / "episode.gif") as im:
        durations = []
        for i in range(im.n_frames):
            im.seek(i)
            durations.append(im.info.get("duration", 0))
    assert durations == [200, 200, 200]
