"""Render thor_lite scenes to image files, for looking at what the simulator sees.

    python -m thor_lite.view FloorPlan1 [FloorPlan201 ...] --out out/view \
        [--width 300 --height 300] [--steps 20] [--seed 0]

For every scene this writes, into the output folder:

- ``<scene>_rgb.png``      the agent's first-person RGB frame at the start pose
- ``<scene>_depth.png``    the depth frame, colour-mapped over 0..5 m (black: nothing hit)
- ``<scene>_seg.png``      the instance segmentation frame
- ``<scene>_topdown.png``  a top-down map: reachable grid, object footprints (coloured by
                           pickupable / receptacle / other), the agent's start pose and,
                           after a walk, its path
- ``<scene>_walk.gif``     a seeded random walk (``--steps``, 0 to skip): RGB | depth per step

The functions here (``render_scene``, ``depth_to_rgb``, ``topdown_map``) are also used
by the repo's ``example.py``.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from PIL import Image, ImageDraw, ImageFont

DEPTH_MAX_M = 5.0
WALK_ACTIONS = ("MoveAhead", "RotateLeft", "RotateRight", "LookUp", "LookDown")
WALK_WEIGHTS = (0.5, 0.18, 0.18, 0.07, 0.07)

# Top-down colours (RGBA fills; outlines use the same RGB, opaque).
COLOR_BG = (255, 255, 255, 255)
COLOR_FLOOR = (236, 236, 236, 255)
COLOR_REACHABLE = (120, 200, 120, 255)
COLOR_PICKUPABLE = (245, 140, 30, 150)
COLOR_RECEPTACLE = (60, 110, 220, 90)
COLOR_OTHER = (130, 130, 130, 90)
COLOR_AGENT = (220, 30, 30, 255)
COLOR_PATH = (200, 40, 160, 255)

# Anchor colours of a perceptually ordered map (approximately matplotlib's "turbo").
_TURBO_ANCHORS = np.array(
    [
        [48, 18, 59],
        [70, 107, 227],
        [40, 187, 236],
        [50, 241, 152],
        [164, 252, 60],
        [237, 208, 58],
        [251, 128, 34],
        [213, 52, 5],
        [122, 4, 3],
    ],
    dtype=np.float32,
)


# ------------------------------------------------------------------ image helpers
def colormap(values: np.ndarray) -> np.ndarray:
    """Map floats in [0, 1] to uint8 RGB with a turbo-like colour map."""
    v = np.clip(np.nan_to_num(values, nan=0.0), 0.0, 1.0) * (len(_TURBO_ANCHORS) - 1)
    lo = np.floor(v).astype(np.int64)
    hi = np.minimum(lo + 1, len(_TURBO_ANCHORS) - 1)
    t = (v - lo)[..., None]
    rgb = _TURBO_ANCHORS[lo] * (1 - t) + _TURBO_ANCHORS[hi] * t
    return np.round(rgb).astype(np.uint8)


def depth_to_rgb(depth: np.ndarray, max_m: float = DEPTH_MAX_M) -> np.ndarray:
    """Colour-mapped depth (near: blue, far: red), 0..max_m; pixels with no hit are black."""
    depth = np.asarray(depth, dtype=np.float32)
    rgb = colormap(depth / max_m)
    rgb[~(depth > 0)] = 0
    return rgb


def depth_to_gray(depth: np.ndarray, max_m: float = DEPTH_MAX_M) -> np.ndarray:
    """Depth linearly normalised to uint8 0..255 over 0..max_m."""
    d = np.clip(np.nan_to_num(np.asarray(depth, np.float32)), 0.0, max_m)
    return np.round(d / max_m * 255.0).astype(np.uint8)


def _font(size: int = 12):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


# ------------------------------------------------------------------ top-down map
def _footprint(obj: dict) -> Optional[Tuple[float, float, float, float]]:
    """(xmin, zmin, xmax, zmax) of an object's axis-aligned bounding box, or None."""
    aabb = obj.get("axisAlignedBoundingBox") or {}
    pts = aabb.get("cornerPoints")
    if not pts:
        return None
    arr = np.asarray(pts, dtype=np.float64).reshape(-1, 3)
    return (
        float(arr[:, 0].min()),
        float(arr[:, 2].min()),
        float(arr[:, 0].max()),
        float(arr[:, 2].max()),
    )


def _category(obj: dict) -> str:
    if obj.get("pickupable"):
        return "pickupable"
    if obj.get("receptacle"):
        return "receptacle"
    return "other"


def topdown_map(
    metadata: dict,
    reachable: Sequence[dict],
    grid_size: float = 0.25,
    px_per_m: float = 80.0,
    max_px: int = 900,
    path: Sequence[Tuple[float, float]] = (),
) -> Image.Image:
    """Draw a top-down map (+x to the right, +z up) of one event's metadata.

    ``reachable`` is ``GetReachablePositions``' list of {x, y, z}; ``path`` optional (x, z)
    points of an agent walk.
    """
    objects = list(metadata.get("objects") or [])
    agent = metadata["agent"]
    ax, az = float(agent["position"]["x"]), float(agent["position"]["z"])
    yaw = float(agent["rotation"]["y"])

    # Bounds: floor if present, else everything we draw.
    feet = [(o, _footprint(o)) for o in objects]
    feet = [(o, f) for o, f in feet if f is not None]
    xs = [ax] + [p["x"] for p in reachable] + [p[0] for p in path]
    zs = [az] + [p["z"] for p in reachable] + [p[1] for p in path]
    floors = [f for o, f in feet if o.get("objectType") == "Floor"]
    for f in floors or [f for _, f in feet]:
        xs += [f[0], f[2]]
        zs += [f[1], f[3]]
    margin = 0.3
    xmin, xmax = min(xs) - margin, max(xs) + margin
    zmin, zmax = min(zs) - margin, max(zs) + margin
    scale = min(px_per_m, max_px / max(xmax - xmin, zmax - zmin))
    w = int(math.ceil((xmax - xmin) * scale))
    h = int(math.ceil((zmax - zmin) * scale))

    def to_px(x: float, z: float) -> Tuple[float, float]:
        return (x - xmin) * scale, (zmax - z) * scale

    img = Image.new("RGBA", (w, h), COLOR_BG)
    draw = ImageDraw.Draw(img)
    for f in floors:
        x0, y0 = to_px(f[0], f[3])
        x1, y1 = to_px(f[2], f[1])
        draw.rectangle([x0, y0, x1, y1], fill=COLOR_FLOOR)

    # Reachable grid cells, slightly inset so the grid pattern stays visible.
    half = grid_size / 2 * 0.8
    for p in reachable:
        x0, y0 = to_px(p["x"] - half, p["z"] + half)
        x1, y1 = to_px(p["x"] + half, p["z"] - half)
        draw.rectangle([x0, y0, x1, y1], fill=COLOR_REACHABLE)

    # Object footprints: large first so small objects stay visible on top.
    colors = {"pickupable": COLOR_PICKUPABLE, "receptacle": COLOR_RECEPTACLE, "other": COLOR_OTHER}
    overlay = Image.new("RGBA", img.size, (0, 0, 0, 0))
    odraw = ImageDraw.Draw(overlay)
    order = sorted(
        ((o, f) for o, f in feet if o.get("objectType") != "Floor"),
        key=lambda of: -(of[1][2] - of[1][0]) * (of[1][3] - of[1][1]),
    )
    for o, f in order:
        fill = colors[_category(o)]
        x0, y0 = to_px(f[0], f[3])
        x1, y1 = to_px(f[2], f[1])
        odraw.rectangle(
            [x0, y0, max(x1, x0 + 1), max(y1, y0 + 1)], fill=fill, outline=fill[:3] + (255,)
        )
    img = Image.alpha_composite(img, overlay)
    draw = ImageDraw.Draw(img)

    if len(path) > 1:
        draw.line([to_px(x, z) for x, z in path], fill=COLOR_PATH, width=2)

    _draw_agent(draw, to_px(ax, az), yaw, scale)
    return _with_legend(img.convert("RGBA"), walk=len(path) > 1)


def _draw_agent(
    draw: ImageDraw.ImageDraw, centre: Tuple[float, float], yaw: float, scale: float
) -> None:
    """Disc of the agent radius plus a heading arrow (yaw 0 faces +z, 90 faces +x)."""
    cx, cy = centre
    r = max(0.2 * scale, 4)
    draw.ellipse([cx - r, cy - r, cx + r, cy + r], outline=COLOR_AGENT, width=2)
    dx, dz = math.sin(math.radians(yaw)), math.cos(math.radians(yaw))
    tip = (cx + dx * 0.45 * scale, cy - dz * 0.45 * scale)
    draw.line([(cx, cy), tip], fill=COLOR_AGENT, width=3)
    left = (tip[0] - (dx * 0.12 - dz * 0.07) * scale, tip[1] + (dz * 0.12 + dx * 0.07) * scale)
    right = (tip[0] - (dx * 0.12 + dz * 0.07) * scale, tip[1] + (dz * 0.12 - dx * 0.07) * scale)
    draw.polygon([tip, left, right], fill=COLOR_AGENT)


def _with_legend(img: Image.Image, walk: bool) -> Image.Image:
    """The map above a legend strip that wraps onto more rows on narrow maps."""
    w, h = img.size
    draw = ImageDraw.Draw(img)
    font = _font(11)
    items = [
        ("reachable", COLOR_REACHABLE),
        ("pickupable", COLOR_PICKUPABLE[:3] + (255,)),
        ("receptacle", COLOR_RECEPTACLE[:3] + (255,)),
        ("other", COLOR_OTHER[:3] + (255,)),
        ("agent", COLOR_AGENT),
    ]
    if walk:
        items.append(("walk", COLOR_PATH))
    items.append(("(+x right, +z up)", None))
    placed, x, row = [], 4, 0
    for label, col in items:
        iw = (16 if col else 0) + int(draw.textlength(label, font=font)) + 8
        if x + iw > w and x > 4:
            x, row = 4, row + 1
        placed.append((label, col, x, row))
        x += iw
    legend = Image.new("RGBA", (w, h + 6 + 16 * (row + 1)), COLOR_BG)
    legend.paste(img, (0, 0))
    img = legend
    draw = ImageDraw.Draw(img)
    for label, col, x, row in placed:
        y = h + 5 + 16 * row
        if col:
            draw.rectangle([x, y, x + 10, y + 10], fill=col)
            x += 13
        draw.text((x, y - 1), label, fill=(0, 0, 0, 255) if col else (90, 90, 90, 255), font=font)
    return img.convert("RGB")


# ------------------------------------------------------------------ per-scene output
class UnknownScene(ValueError):
    """The Controller refused the scene name."""


def _pose_xz(event) -> Tuple[float, float]:
    p = event.metadata["agent"]["position"]
    return float(p["x"]), float(p["z"])


def random_walk(controller, steps: int, seed: int, progress: bool = True, desc: str = "walk"):
    """Seeded random walk; yields the event after each successful action.

    Failed actions (blocked moves, look limits) are skipped and do not count. After a
    blocked MoveAhead the agent turns (one random direction, kept until it moves again)
    and retries MoveAhead, so it does not stay stuck in a dead end. At most
    ``5 * steps`` actions are tried.
    """
    from tqdm import tqdm

    rng = random.Random(seed)
    done, tries = 0, 0
    escape: Optional[str] = None  # turn direction while getting out of a dead end
    retry_move = False
    with tqdm(total=steps, desc=desc, disable=not progress, leave=False) as bar:
        while done < steps and tries < 5 * steps:
            tries += 1
            if retry_move:
                action = "MoveAhead"
            elif escape is not None:
                action = escape
            else:
                action = rng.choices(WALK_ACTIONS, weights=WALK_WEIGHTS)[0]
            event = controller.step(action=action)
            ok = bool(event.metadata.get("lastActionSuccess", False))
            if action == "MoveAhead":
                retry_move = False
                escape = None if ok else (escape or rng.choice(("RotateLeft", "RotateRight")))
            elif escape is not None and ok:
                retry_move = True
            if ok:
                done += 1
                bar.update(1)
                yield event


def _walk_frame(event) -> np.ndarray:
    rgb = np.asarray(event.frame)
    if event.depth_frame is None:
        return rgb
    return np.concatenate([rgb, depth_to_rgb(event.depth_frame)], axis=1)


def render_scene(
    scene: str,
    out_dir: Path | str,
    width: int = 300,
    height: int = 300,
    steps: int = 20,
    seed: int = 0,
    progress: bool = True,
) -> Dict[str, Path]:
    """Render one scene's images (and walk GIF when steps > 0); returns {kind: path}.

    Raises UnknownScene (a ValueError) when thor_lite's Controller rejects the scene name.
    """
    import imageio.v3 as iio

    from thor_lite import Controller

    try:
        controller = Controller(
            scene=scene,
            width=width,
            height=height,
            renderDepthImage=True,
            renderInstanceSegmentation=True,
        )
    except ValueError as exc:  # thor_lite's answer to an unknown scene name
        raise UnknownScene(str(exc)) from exc
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    try:
        event = controller.last_event
        if event is None:
            event = controller.step(action="Pass")
        paths = {
            "rgb": out / f"{scene}_rgb.png",
            "depth": out / f"{scene}_depth.png",
            "seg": out / f"{scene}_seg.png",
            "topdown": out / f"{scene}_topdown.png",
        }
        Image.fromarray(np.asarray(event.frame, np.uint8)).save(paths["rgb"])
        Image.fromarray(depth_to_rgb(event.depth_frame)).save(paths["depth"])
        Image.fromarray(np.asarray(event.instance_segmentation_frame, np.uint8)).save(paths["seg"])

        start_meta = event.metadata
        reach_event = controller.step(action="GetReachablePositions")
        reachable = list(reach_event.metadata.get("actionReturn") or [])
        grid = float(
            getattr(controller, "initialization_parameters", {}).get("gridSize", 0.25) or 0.25
        )

        path_xz: List[Tuple[float, float]] = [_pose_xz(event)]
        if steps > 0:
            frames = [_walk_frame(event)]
            for ev in random_walk(controller, steps, seed, progress, desc=f"{scene} walk"):
                frames.append(_walk_frame(ev))
                xz = _pose_xz(ev)
                if xz != path_xz[-1]:
                    path_xz.append(xz)
            paths["walk"] = out / f"{scene}_walk.gif"
            iio.imwrite(paths["walk"], np.stack(frames), duration=250, loop=0)

        topdown_map(start_meta, reachable, grid_size=grid, path=path_xz).save(paths["topdown"])
        return paths
    finally:
        controller.stop()


# ------------------------------------------------------------------ CLI
def _parse(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m thor_lite.view",
        description="Render thor_lite scenes (RGB, depth, segmentation, top-down map, walk GIF).",
    )
    p.add_argument("scenes", nargs="+", metavar="SCENE", help="e.g. FloorPlan1 FloorPlan201")
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument("--width", type=int, default=300)
    p.add_argument("--height", type=int, default=300)
    p.add_argument("--steps", type=int, default=20, help="random-walk steps for the GIF (0: none)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    return p.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parse(argv)
    if args.width <= 0 or args.height <= 0 or args.steps < 0:
        print("error: --width/--height must be positive and --steps >= 0", file=sys.stderr)
        return 2
    from tqdm import tqdm

    scenes = tqdm(args.scenes, desc="scenes", disable=args.quiet or len(args.scenes) < 2)
    for scene in scenes:
        try:
            paths = render_scene(
                scene,
                args.out,
                args.width,
                args.height,
                args.steps,
                args.seed,
                progress=not args.quiet,
            )
        except UnknownScene as exc:
            first = next((ln for ln in str(exc).splitlines() if ln.strip()), str(exc))
            print(f"error: cannot load scene {scene!r}: {first}", file=sys.stderr)
            print(
                "       scene names look like FloorPlan1..30, FloorPlan201..230, "
                "FloorPlan301..330, FloorPlan401..430",
                file=sys.stderr,
            )
            return 2
        tqdm.write(f"{scene}: " + ", ".join(str(p) for p in paths.values()))
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)
