"""Analytic checks of thor_lite.render.BoxRenderer (headless EGL).

The expected values are derived here from the AI2-THOR camera convention
(left-handed, y up, yaw clockwise from +z, positive horizon looks down,
vertical fov, row 0 = top, pixel centres), independently of the renderer's
own matrices.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from thor_lite.render import AMBIENT, DIFFUSE, LIGHT_DIR, BoxRenderer, RendererUnavailable

try:
    _probe = BoxRenderer(4, 4)
    _GL_NAME = _probe.gl_renderer_name
    _probe.release()
except RendererUnavailable as exc:  # pragma: no cover - depends on the machine
    pytest.skip(f"headless EGL/OpenGL unavailable: {exc}", allow_module_level=True)


# ----------------------------------------------------------------- helpers
def box(center, half, yaw_deg: float = 0.0) -> np.ndarray:
    """World-from-unit-cube matrix of a box rotated about y by yaw (Unity sense)."""
    a = math.radians(yaw_deg)
    rot = np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])
    m = np.eye(4)
    m[:3, :3] = rot @ np.diag(half)
    m[:3, 3] = center
    return m.astype(np.float32)


def scene(r: BoxRenderer, boxes, colors=None, ids=None) -> None:
    n = len(boxes)
    transforms = np.stack(boxes) if n else np.zeros((0, 4, 4), np.float32)
    if colors is None:
        colors = [(200, 150, 100)] * n
    if ids is None:
        ids = list(range(1, n + 1))
    r.set_instances(
        transforms, np.asarray(colors, np.uint8).reshape(n, 3), np.asarray(ids, np.int32)
    )


def camera_axes(yaw_deg: float, horizon_deg: float):
    y, p = math.radians(yaw_deg), math.radians(horizon_deg)
    forward = np.array([math.sin(y) * math.cos(p), -math.sin(p), math.cos(y) * math.cos(p)])
    right = np.array([math.cos(y), 0.0, -math.sin(y)])
    up = np.cross(forward, right)  # left-handed: forward x right = up
    return right, up, forward


def pixel_slopes(i: int, j: int, w: int, h: int, fov_deg: float):
    """Camera-space (x/z, y/z) of the ray through the centre of pixel (row i, col j)."""
    t = math.tan(math.radians(fov_deg) / 2)
    sx = ((j + 0.5) / w * 2 - 1) * t * w / h
    sy = (1 - (i + 0.5) / h * 2) * t
    return sx, sy


def project(point, cam, yaw_deg, horizon_deg, w, h, fov_deg):
    """(row, col, planar depth) of a world point."""
    right, up, forward = camera_axes(yaw_deg, horizon_deg)
    d = np.asarray(point, float) - np.asarray(cam, float)
    x, y, z = d @ right, d @ up, d @ forward
    t = math.tan(math.radians(fov_deg) / 2)
    col = ((x / z) / (t * w / h) + 1) / 2 * w - 0.5
    row = (1 - (y / z) / t) / 2 * h - 0.5
    return int(round(row)), int(round(col)), z


@pytest.fixture
def renderer():
    r = BoxRenderer(65, 65, fov_deg=90.0)
    yield r
    r.release()


# ------------------------------------------------------------------- tests
def test_construction_is_lazy_and_picklable():
    r = BoxRenderer(32, 24)
    assert r._ctx is None  # no GL context before the first render
    scene(r, [box((0, 1, 3), (1, 1, 1))])
    r2 = pickle.loads(pickle.dumps(r))
    _, d, _ = r2.render((0, 1, 0), 0, 0)
    assert d.shape == (24, 32)
    assert _GL_NAME  # non-empty GL_RENDERER string
    r2.release()
    r.release()


def test_planar_depth_of_front_wall(renderer):
    # Near face at z = 2, fills the 90 deg view entirely.
    scene(renderer, [box((0, 1, 3), (5, 5, 1))], ids=[42])
    rgb, depth, ids = renderer.render((0, 1, 0), 0.0, 0.0)
    assert depth.shape == (65, 65) and depth.dtype == np.float32
    assert ids.dtype == np.int32 and rgb.dtype == np.uint8 and rgb.shape == (65, 65, 3)
    for i, j in [(32, 32), (0, 0), (5, 60), (64, 3), (40, 10)]:
        assert abs(depth[i, j] - 2.0) < 1e-4, (i, j, depth[i, j])  # planar, not ray length
        assert ids[i, j] == 42
    assert np.all(ids == 42)
    np.testing.assert_allclose(depth, 2.0, atol=1e-4)


def test_floor_depth_pitched_down(renderer):
    h = w = 65
    cam_h, pitch = 1.5, 30.0
    scene(renderer, [box((0, -0.5, 0), (40, 0.5, 40))], ids=[3])
    _, depth, ids = renderer.render((0.3, cam_h, -0.7), 17.0, pitch)
    s, c = math.sin(math.radians(pitch)), math.cos(math.radians(pitch))

    def expected(i, j):
        _, sy = pixel_slopes(i, j, w, h, 90.0)
        # Ray (sx, sy, 1) in camera space has world y-slope sy*cos - sin per unit
        # of forward distance; it reaches y=0 at planar depth cam_h / (sin - sy*cos).
        denom = s - sy * c
        return cam_h / denom if denom > 0 else None

    assert abs(depth[32, 32] - cam_h / s) < 1e-4  # exact centre pixel: 1.5 / sin 30 = 3
    for i, j in [(32, 32), (40, 10), (50, 60), (64, 0), (35, 45)]:
        exp = expected(i, j)
        assert exp is not None
        assert abs(depth[i, j] - exp) < 1e-4 * max(1.0, exp), (i, j, depth[i, j], exp)
        assert ids[i, j] == 3
    # Top rows look 15 deg above the horizon: nothing there (also proves that
    # positive horizon looks down and that row 0 is the top of the image).
    assert expected(0, 32) is None
    assert np.all(depth[0] == 0.0) and np.all(ids[0] == 0)
    assert np.all(ids[-1] == 3)


def test_yaw90_orientation(renderer):
    w = h = 65
    wall = box((5, 1, 0), (1, 5, 5))  # near face at x = 4
    right_obj = box((3, 1, -1.5), (0.3, 0.3, 0.3))  # camera right at yaw 90 is -z
    high_obj = box((3, 2.5, 0), (0.3, 0.3, 0.3))
    scene(renderer, [wall, right_obj, high_obj], ids=[1, 2, 3])
    _, depth, ids = renderer.render((0, 1, 0), 90.0, 0.0)
    assert abs(depth[32, 32] - 4.0) < 1e-4
    assert ids[32, 32] == 1

    rows, cols = np.nonzero(ids == 2)
    assert cols.size > 0 and cols.min() > w // 2, (
        "object on the right must appear in the right half"
    )
    assert abs(rows.mean() - (h - 1) / 2) < 2  # same height as the camera
    rows, cols = np.nonzero(ids == 3)
    assert rows.size > 0 and rows.max() < h // 2, (
        "object above the camera must appear in the upper half"
    )
    assert abs(cols.mean() - (w - 1) / 2) < 2

    # Its near face is at x = 2.7: planar depth there is 2.7 regardless of column.
    r, c, z = project((2.7, 1.0, -1.5), (0, 1, 0), 90.0, 0.0, w, h, 90.0)
    assert ids[r, c] == 2 and abs(depth[r, c] - z) < 1e-4 and abs(z - 2.7) < 1e-9


def test_yaw0_not_mirrored(renderer):
    scene(
        renderer,
        [
            box((1.5, 1, 3), (0.3, 0.3, 0.3)),
            box((0, 1, 3), (0.2, 0.2, 0.2)),
            box((0, 1.0, -3), (0.3, 0.3, 0.3)),
        ],
    )
    _, _, ids = renderer.render((0, 1, 0), 0.0, 0.0)
    cols = np.nonzero(ids == 1)[1]
    assert cols.size and cols.min() > 32  # +x is the camera's right at yaw 0
    assert ids[32, 32] == 2
    assert not np.any(ids == 3)  # behind the camera


def test_empty_view_and_partial_outputs(renderer):
    scene(renderer, [box((0, 1, 3), (5, 5, 1))])
    renderer.render((0, 1, 0), 0, 0)  # leave content in the targets first
    scene(renderer, [])
    rgb, depth, ids = renderer.render((0, 1, 0), 0, 0)
    assert not rgb.any() and not depth.any() and not ids.any()

    scene(renderer, [box((0, 1, 3), (5, 5, 1))])
    out = renderer.render((0, 1, 0), 0, 0, rgb=False, depth=True, ids=False)
    assert out[0] is None and out[2] is None
    assert out[1].shape == (65, 65) and abs(out[1][32, 32] - 2.0) < 1e-4
    # Looking away from the box: everything is background.
    rgb, depth, ids = renderer.render((0, 1, 0), 180, 0)
    assert not rgb.any() and not depth.any() and not ids.any()


def _random_scene(seed: int, n: int = 60):
    rng = np.random.default_rng(seed)
    boxes = [
        box(rng.uniform([-4, 0, -4], [4, 2, 4]), rng.uniform(0.05, 0.6, 3), rng.uniform(0, 360))
        for _ in range(n)
    ]
    colors = rng.integers(0, 256, (n, 3))
    return boxes, colors


def test_determinism(renderer):
    boxes, colors = _random_scene(0)
    scene(renderer, boxes, colors)
    a = renderer.render((0.2, 1.5, -0.3), 33.0, 20.0)
    b = renderer.render((0.2, 1.5, -0.3), 33.0, 20.0)
    other = BoxRenderer(65, 65)
    scene(other, boxes, colors)
    c = other.render((0.2, 1.5, -0.3), 33.0, 20.0)
    other.release()
    for x, y, z in zip(a, b, c):
        assert x.tobytes() == y.tobytes() == z.tobytes()
    assert len(np.unique(a[2])) > 5  # the scene actually shows several boxes


def test_fov_changes_coverage(renderer):
    scene(renderer, [box((0, 1, 4), (1.0, 1.0, 1.0))])
    renderer.set_fov(90)
    area90 = int((renderer.render((0, 1, 0), 0, 0, rgb=False, depth=False)[2] == 1).sum())
    renderer.set_fov(60)
    area60 = int((renderer.render((0, 1, 0), 0, 0, rgb=False, depth=False)[2] == 1).sum())
    assert area60 > area90 > 0
    # Linear size scales with 1/tan(fov/2): area ratio tan(45)^2 / tan(30)^2 = 3.
    assert abs(area60 / area90 - 3.0) < 0.4


def test_resize_and_aspect():
    r = BoxRenderer(65, 65)
    scene(r, [box((0, 1, 3), (5, 5, 1))])
    r.render((0, 1, 0), 0, 0)
    r.resize(96, 48)
    rgb, depth, ids = r.render((0, 1, 0), 0, 0)
    assert rgb.shape == (48, 96, 3) and depth.shape == (48, 96) and ids.shape == (48, 96)
    # fov is vertical: a box spanning +-1 m vertically at depth 2 under fov 90
    # covers half of the rows; horizontally it uses the wider aspect.
    scene(r, [box((0, 1, 3), (1, 1, 1))])
    _, _, ids = r.render((0, 1, 0), 0, 0)
    rows = np.nonzero(ids[:, 48] == 1)[0]
    cols = np.nonzero(ids[24] == 1)[0]
    assert abs(rows.size - 24) <= 1 and abs(cols.size - 24) <= 1
    r.release()


def test_faces_have_different_shading(renderer):
    w = h = 65
    cam, yaw, pitch = (0.0, 2.0, 0.0), 0.0, 30.0
    color = np.array([200, 180, 160])
    scene(renderer, [box((0, 0.5, 3), (0.5, 0.5, 0.5))], colors=[color], ids=[9])
    rgb, _, ids = renderer.render(cam, yaw, pitch)
    rt, ct, _ = project((0, 1.0, 3.0), cam, yaw, pitch, w, h, 90.0)  # top face centre
    rf, cf, _ = project((0, 0.5, 2.5), cam, yaw, pitch, w, h, 90.0)  # front (-z) face centre
    assert ids[rt, ct] == 9 and ids[rf, cf] == 9
    top, front = rgb[rt, ct].astype(int), rgb[rf, cf].astype(int)
    assert np.abs(top - front).max() > 10
    assert top.sum() > front.sum()  # the light comes from above
    for normal, got in [((0, 1, 0), top), ((0, 0, -1), front)]:
        shade = AMBIENT + DIFFUSE * max(float(np.dot(normal, LIGHT_DIR)), 0.0)
        np.testing.assert_allclose(got, color * shade, atol=1.01)


def test_bad_inputs(renderer):
    with pytest.raises(ValueError):
        renderer.set_instances(
            np.zeros((2, 4, 4)), np.zeros((2, 3), np.uint8), np.array([0, 1], np.int32)
        )
    with pytest.raises(ValueError):
        renderer.set_instances(
            np.zeros((2, 3, 4)), np.zeros((2, 3), np.uint8), np.array([1, 2], np.int32)
        )
    with pytest.raises(ValueError):
        renderer.resize(0, 10)


def test_many_instances_grow_buffer(renderer):
    boxes, colors = _random_scene(1, n=300)  # beyond the initial capacity of 64
    scene(renderer, boxes, colors)
    _, _, ids = renderer.render((0, 9, -6), 0, 55)  # overview from above
    assert ids.max() <= 300 and len(np.unique(ids)) > 20
    assert np.any(ids > 64)


def test_colour_only_pass_matches_full_pass(renderer):
    """An RGB-only render (drawn without the id and depth targets) gives the same colours,
    and a later full render still returns the ids and depth of the current view."""
    boxes, colors = _random_scene(1)
    scene(renderer, boxes, colors)
    full = renderer.render((0.2, 1.5, -0.3), 33.0, 20.0)
    other_view = renderer.render((0.0, 1.2, 0.4), 210.0, -10.0)
    rgb_only = renderer.render((0.2, 1.5, -0.3), 33.0, 20.0, rgb=True, depth=False, ids=False)
    assert rgb_only[1] is None and rgb_only[2] is None
    assert rgb_only[0].tobytes() == full[0].tobytes()
    renderer.render((0.0, 1.2, 0.4), 210.0, -10.0, rgb=True, depth=False, ids=False)
    again = renderer.render((0.0, 1.2, 0.4), 210.0, -10.0)
    for x, y in zip(again, other_view):
        assert x.tobytes() == y.tobytes()
    assert not np.array_equal(full[2], other_view[2])
