"""Headless OpenGL renderer of oriented boxes (moderngl + EGL).

The simulator represents every object as one or more oriented boxes; this
module turns them into the three observations an AI2-THOR agent can ask for:
an RGB frame, a planar depth map in metres and a per-pixel instance-id map.
Everything is drawn with a single instanced draw call into one framebuffer
with three colour attachments, so one frame costs one rasterisation pass plus
the read-backs that were actually requested.

Conventions follow AI2-THOR / Unity: left-handed world, y up, metres.
``yaw`` 0 looks along +z, 90 along +x; ``horizon`` is pitch in degrees with
positive values looking down; ``fov_deg`` is the vertical field of view.
Arrays come back with the top image row first and are not mirrored.
"""

from __future__ import annotations

import math
import os
from typing import Any, Optional, Sequence

import numpy as np

from .constants import CAMERA_FAR, CAMERA_NEAR
from .geometry import camera_tan_aspect

__all__ = [
    "RendererUnavailable",
    "BoxRenderer",
    "LIGHT_DIR",
    "AMBIENT",
    "DIFFUSE",
    "pattern_code",
]

# Shading constants (exported so tests and debugging tools can predict colours).
# Direction *towards* the light: mostly from above, a little from +x and -z, so
# that the top, the +x side and the -z side of a box all get different shades.
LIGHT_DIR: np.ndarray = (lambda v: v / np.linalg.norm(v))(np.array([0.35, 1.0, -0.25]))
AMBIENT: float = 0.45
DIFFUSE: float = 0.55

_UNAVAILABLE_HINT = (
    "Headless OpenGL via EGL is unavailable. On Debian/Ubuntu install "
    "libegl1 libgl1 libegl-mesa0 libgl1-mesa-dri (Mesa llvmpipe software "
    "rendering); on NVIDIA machines the driver's EGL library must be present "
    "and containers need NVIDIA_DRIVER_CAPABILITIES=graphics (or all). "
    "Set THOR_LITE_EGL_DEVICE=<index> to choose an EGL device on multi-GPU nodes."
)

# Per-instance record uploaded to the GPU: the top three rows of the
# world-from-unit-cube matrix (the last row is always 0,0,0,1), the colour as
# normalised bytes, the surface pattern byte (`pattern_code`) and the integer instance id.
_INSTANCE_DTYPE = np.dtype(
    [("rows", "<f4", (3, 4)), ("color", "u1", (3,)), ("pattern", "u1"), ("id", "<i4")]
)
_INSTANCE_FORMAT = "4f 4f 4f 3f1 1u1 1i /i"

#: pattern byte: 0 is a flat colour; otherwise bit 7 set, bits 0-1 the kind (which faces take
#: the second tone: those across the box's x, y or z axis, or every side) and bits 2-6 the
#: variant (how strongly). Chosen per face in the vertex shader: no per-pixel cost
PATTERN_KINDS = 4


def pattern_code(kind_key: str, variant_key: str) -> int:
    """The pattern byte of a surface: its kind keyed by `kind_key` (an object type, so a type
    looks alike everywhere), its variant by `variant_key` (an object's name, so the same object
    looks the same in every view and episode)."""
    import zlib

    kind = zlib.crc32(kind_key.encode()) % PATTERN_KINDS
    variant = (zlib.crc32(variant_key.encode()) >> 3) & 31
    return 128 | (variant << 2) | kind


_VERTEX_SHADER = """
#version 330
uniform mat4 u_viewproj;
uniform vec3 u_light;

in vec3 in_pos;      // unit-cube corner in [-1, 1]^3
in vec3 in_normal;   // axis-aligned face normal of that corner's face
in vec4 in_row0;     // world-from-cube matrix, row 0
in vec4 in_row1;
in vec4 in_row2;
in vec3 in_color;
in uint in_pattern;
in int in_id;

flat out vec3 v_color;
flat out int v_id;

void main() {
    vec4 p = vec4(in_pos, 1.0);
    vec3 world = vec3(dot(in_row0, p), dot(in_row1, p), dot(in_row2, p));
    // For a box (orthogonal columns R*diag(h)) the linear part maps the face
    // normal e_k onto h_k * R_k, so normalising it gives the world normal.
    vec3 n = vec3(dot(in_row0.xyz, in_normal), dot(in_row1.xyz, in_normal),
                  dot(in_row2.xyz, in_normal));
    float len = length(n);
    float lambert = len > 0.0 ? max(dot(n / len, u_light), 0.0) : 0.0;
    // two-tone material, per face and so free per pixel: the faces the pattern's kind picks
    // (those across the box's x, y or z axis, or all sides) take the type's second tone (its
    // colour's channels rotated), mixed by the variant (per instance)
    vec3 c = in_color;
    int pat = int(in_pattern);
    if (pat != 0) {
        int kind = pat & 3;
        float amount = 0.3 + 0.02 * float((pat >> 2) & 31);
        vec3 an = abs(in_normal);
        float sel = kind == 3 ? 1.0 - an.y : an[kind];
        c = mix(c, c.gbr * 0.85, amount * sel);
    }
    v_color = c * (AMBIENT + DIFFUSE * lambert);
    v_id = in_id;
    gl_Position = u_viewproj * vec4(world, 1.0);
}
"""

_FRAGMENT_SHADER = """
#version 330
flat in vec3 v_color;
flat in int v_id;

layout(location = 0) out vec4 f_color;
layout(location = 1) out int f_id;
layout(location = 2) out float f_depth;

void main() {
    f_color = vec4(v_color, 1.0);
    f_id = v_id;
    // clip.w equals camera-space z (see the projection), and gl_FragCoord.w
    // is 1 / clip.w, so this is the planar depth in metres.
    f_depth = 1.0 / gl_FragCoord.w;
}
"""


def _unit_cube() -> tuple[np.ndarray, np.ndarray]:
    """24 vertices (4 per face, each carrying its face normal) and 36 indices.

    Separate vertices per face give flat normals without derivative tricks.
    """
    verts: list[list[float]] = []
    indices: list[int] = []
    for axis in range(3):
        u_axis, v_axis = (axis + 1) % 3, (axis + 2) % 3
        for sign in (-1.0, 1.0):
            normal = [0.0, 0.0, 0.0]
            normal[axis] = sign
            base = len(verts)
            for su, sv in ((-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)):
                pos = [0.0, 0.0, 0.0]
                pos[axis], pos[u_axis], pos[v_axis] = sign, su, sv
                verts.append(pos + normal)
            indices += [base, base + 1, base + 2, base, base + 2, base + 3]
    return np.asarray(verts, dtype="f4"), np.asarray(indices, dtype="i4")


def _preload_torchvision() -> None:
    """Load torchvision's native ops before Mesa initialises LLVM in this process.

    Measured here: importing torchvision *after* an llvmpipe EGL context exists crashes the
    process (segfault in its extension import); importing it first is fine. Training code
    imports it anyway, so load it up front whenever it is installed.
    """
    import importlib.util
    import sys

    if "torchvision" not in sys.modules and importlib.util.find_spec("torchvision") is not None:
        import torchvision  # noqa: F401


class RendererUnavailable(RuntimeError):
    """Raised when no EGL/OpenGL 3.3 context can be created on this machine."""


class BoxRenderer:
    """Renders oriented boxes to RGB, planar depth and instance-id images.

    The GL context is created lazily on the first render (or on first access
    to :attr:`gl_renderer_name`) so that instances can be constructed before
    a ``fork`` and never hold GL state that a child would inherit. A context
    created in another process is abandoned and rebuilt transparently.
    """

    def __init__(
        self,
        width: int,
        height: int,
        fov_deg: float = 90.0,
        near: float = CAMERA_NEAR,
        far: float = CAMERA_FAR,
    ) -> None:
        if not (0.0 < near < far):
            raise ValueError(f"need 0 < near < far, got near={near}, far={far}")
        self._near = float(near)
        self._far = float(far)
        self._width = 0
        self._height = 0
        self._fov_deg = 0.0
        self.resize(width, height)
        self.set_fov(fov_deg)

        self._instances = np.zeros(0, dtype=_INSTANCE_DTYPE)
        self._instances_dirty = True

        self._reset_gl_handles()

    # ------------------------------------------------------------------ config
    @property
    def width(self) -> int:
        return self._width

    @property
    def height(self) -> int:
        return self._height

    @property
    def fov_deg(self) -> float:
        return self._fov_deg

    def resize(self, width: int, height: int) -> None:
        """Change the output size; the framebuffer is rebuilt on next render."""
        width, height = int(width), int(height)
        if width <= 0 or height <= 0:
            raise ValueError(f"image size must be positive, got {width}x{height}")
        if (width, height) != (self._width, self._height):
            self._width, self._height = width, height
            self._fbo_dirty = True

    def set_fov(self, fov_deg: float) -> None:
        """Set the vertical field of view in degrees."""
        fov_deg = float(fov_deg)
        if not (0.0 < fov_deg < 180.0):
            raise ValueError(f"fov_deg must be in (0, 180), got {fov_deg}")
        self._fov_deg = fov_deg

    # --------------------------------------------------------------- instances
    def set_instances(
        self,
        transforms: np.ndarray,
        colors: np.ndarray,
        ids: np.ndarray,
        patterns: Optional[np.ndarray] = None,
    ) -> None:
        """Replace the set of boxes drawn.

        ``transforms`` is (N,4,4) world-from-unit-cube (cube = [-1,1]^3),
        ``colors`` (N,3) uint8, ``ids`` (N,) int32 >= 1 and ``patterns`` (N,)
        uint8 pattern bytes (`pattern_code`; None: all flat). Only the instance
        buffer is re-uploaded, on the next render.
        """
        transforms = np.asarray(transforms)
        colors = np.asarray(colors)
        ids = np.asarray(ids)
        n = transforms.shape[0] if transforms.ndim == 3 else -1
        if transforms.shape != (n, 4, 4):
            raise ValueError(f"transforms must be (N,4,4), got {transforms.shape}")
        if colors.shape != (n, 3):
            raise ValueError(f"colors must be ({n},3), got {colors.shape}")
        if ids.shape != (n,):
            raise ValueError(f"ids must be ({n},), got {ids.shape}")
        if n and int(ids.min()) < 1:
            raise ValueError("instance ids must be >= 1 (0 means background)")

        if self._instances.shape[0] != n:
            self._instances = np.zeros(n, dtype=_INSTANCE_DTYPE)
        rec = self._instances
        rec["rows"] = transforms[:, :3, :]
        rec["color"] = colors
        rec["pattern"] = 0 if patterns is None else np.asarray(patterns, dtype=np.uint8)
        rec["id"] = ids
        self._instances_dirty = True

    # ------------------------------------------------------------------ render
    def render(
        self,
        camera_position: Sequence[float],
        yaw_deg: float,
        horizon_deg: float,
        rgb: bool = True,
        depth: bool = True,
        ids: bool = True,
    ) -> tuple[Optional[np.ndarray], Optional[np.ndarray], Optional[np.ndarray]]:
        """Draw the current boxes from the given camera pose.

        Returns ``(rgb (H,W,3) uint8, depth (H,W) float32, ids (H,W) int32)``
        with ``None`` for outputs not requested. Background pixels are rgb 0,
        depth 0.0 and id 0. Returned arrays are freshly allocated, so callers
        may keep them across frames.
        """
        self._ensure_context()
        # Several renderers share a process (a task's unshuffle and walkthrough controllers):
        # GL calls act on the current context, so make this renderer's current for the draw.
        with self._ctx:
            return self._draw(camera_position, yaw_deg, horizon_deg, rgb, depth, ids)

    def _draw(
        self,
        camera_position: Sequence[float],
        yaw_deg: float,
        horizon_deg: float,
        rgb: bool,
        depth: bool,
        ids: bool,
    ) -> tuple[Optional[np.ndarray], Optional[np.ndarray], Optional[np.ndarray]]:
        self._ensure_framebuffer()
        self._upload_instances()

        # Without ids or depth, draw into a framebuffer holding only the colour (and z)
        # buffer: llvmpipe then skips two stores per fragment (measured in
        # benchmarks/thor_lite_fps_compare.py).
        fbo = self._fbo if ids or depth else self._fbo_rgb
        fbo.use()
        fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
        n = self._instances.shape[0]
        if n:
            self._u_viewproj.write(self._view_projection(camera_position, yaw_deg, horizon_deg))
            self._vao.render(instances=n)

        h, w = self._height, self._width
        out_rgb = out_depth = out_ids = None
        if rgb:
            out_rgb = np.empty((h, w, 3), dtype=np.uint8)
            fbo.read_into(out_rgb, components=3, attachment=0, alignment=1, dtype="f1")
        if ids:
            out_ids = np.empty((h, w), dtype=np.int32)
            fbo.read_into(out_ids, components=1, attachment=1, alignment=1, dtype="i4")
        if depth:
            out_depth = np.empty((h, w), dtype=np.float32)
            fbo.read_into(out_depth, components=1, attachment=2, alignment=1, dtype="f4")
        return out_rgb, out_depth, out_ids

    def _view_projection(
        self, camera_position: Sequence[float], yaw_deg: float, horizon_deg: float
    ) -> bytes:
        """Column-major bytes of projection @ view for the Unity-style camera.

        The view rows are the camera's right, up and forward axes, so
        camera-space z is the planar depth. The projection puts that z in
        clip.w and negates y so that GL's bottom-first read-back yields the
        top image row first.
        """
        yaw, pitch = math.radians(yaw_deg), math.radians(horizon_deg)
        sy, cy, sp, cp = math.sin(yaw), math.cos(yaw), math.sin(pitch), math.cos(pitch)
        forward = np.array([sy * cp, -sp, cy * cp])
        right = np.array([cy, 0.0, -sy])
        up = np.array([sy * sp, cp, cy * sp])
        eye = np.asarray(camera_position, dtype=np.float64).reshape(3)

        view = np.eye(4)
        view[0, :3], view[1, :3], view[2, :3] = right, up, forward
        view[:3, 3] = -view[:3, :3] @ eye

        t, aspect = camera_tan_aspect(self._fov_deg, self._width, self._height)
        n, f = self._near, self._far
        proj = np.zeros((4, 4))
        proj[0, 0] = 1.0 / (t * aspect)
        proj[1, 1] = -1.0 / t
        proj[2, 2] = (f + n) / (f - n)
        proj[2, 3] = -2.0 * f * n / (f - n)
        proj[3, 2] = 1.0
        return np.ascontiguousarray((proj @ view).T, dtype="f4").tobytes()

    # --------------------------------------------------------------- GL setup
    @property
    def gl_renderer_name(self) -> str:
        """The GL_RENDERER string, e.g. to check llvmpipe vs. a real GPU."""
        self._ensure_context()
        return str(self._ctx.info["GL_RENDERER"])

    def _reset_gl_handles(self) -> None:
        self._ctx: Any = None
        self._ctx_pid: Optional[int] = None
        self._prog: Any = None
        self._u_viewproj: Any = None
        self._cube_vbo: Any = None
        self._cube_ibo: Any = None
        self._inst_buf: Any = None
        self._inst_capacity = 0
        self._vao: Any = None
        self._fbo: Any = None
        self._fbo_rgb: Any = None
        self._attachments: list[Any] = []
        self._fbo_dirty = True
        self._instances_dirty = True

    def _ensure_context(self) -> None:
        if self._ctx is not None and self._ctx_pid == os.getpid():
            return
        if self._ctx is not None:
            # Inherited across fork: the parent's context is not usable here,
            # and releasing it could disturb the parent's driver state.
            self._reset_gl_handles()

        os.environ.setdefault("LP_NUM_THREADS", "0")
        _preload_torchvision()
        try:
            import moderngl
        except Exception as exc:  # pragma: no cover - depends on install
            raise RendererUnavailable(
                f"moderngl cannot be imported ({exc}). {_UNAVAILABLE_HINT}"
            ) from exc

        settings: dict[str, Any] = {"backend": "egl"}
        device = os.environ.get("THOR_LITE_EGL_DEVICE", "").strip()
        if device:
            try:
                settings["device_index"] = int(device)
            except ValueError as exc:
                raise RendererUnavailable(
                    f"THOR_LITE_EGL_DEVICE must be an integer, got {device!r}"
                ) from exc
        try:
            ctx = moderngl.create_context(require=330, standalone=True, **settings)
        except Exception as exc:
            raise RendererUnavailable(
                f"could not create an EGL OpenGL 3.3 context ({type(exc).__name__}: {exc}). "
                f"{_UNAVAILABLE_HINT}"
            ) from exc

        self._ctx, self._ctx_pid = ctx, os.getpid()
        ctx.enable_only(moderngl.DEPTH_TEST)  # no culling: Unity is left-handed
        ctx.depth_func = "<"

        consts = f"#define AMBIENT {AMBIENT:.6f}\n#define DIFFUSE {DIFFUSE:.6f}\n"
        vs = _VERTEX_SHADER.replace("#version 330\n", "#version 330\n" + consts, 1)
        self._prog = ctx.program(vertex_shader=vs, fragment_shader=_FRAGMENT_SHADER)
        self._prog["u_light"].value = tuple(float(x) for x in LIGHT_DIR)
        self._u_viewproj = self._prog["u_viewproj"]

        verts, idx = _unit_cube()
        self._cube_vbo = ctx.buffer(verts.tobytes())
        self._cube_ibo = ctx.buffer(idx.tobytes())
        self._inst_capacity = max(64, self._instances.shape[0])
        self._inst_buf = ctx.buffer(
            reserve=self._inst_capacity * _INSTANCE_DTYPE.itemsize, dynamic=True
        )
        self._vao = ctx.vertex_array(
            self._prog,
            [
                (self._cube_vbo, "3f 3f", "in_pos", "in_normal"),
                (
                    self._inst_buf,
                    _INSTANCE_FORMAT,
                    "in_row0",
                    "in_row1",
                    "in_row2",
                    "in_color",
                    "in_pattern",
                    "in_id",
                ),
            ],
            index_buffer=self._cube_ibo,
            index_element_size=4,
        )
        self._fbo_dirty = True
        self._instances_dirty = True

    def _ensure_framebuffer(self) -> None:
        if not self._fbo_dirty and self._fbo is not None:
            return
        self._release_framebuffer()
        ctx, size = self._ctx, (self._width, self._height)
        color = ctx.renderbuffer(size, components=4, dtype="f1")
        inst = ctx.renderbuffer(size, components=1, dtype="i4")
        depth = ctx.renderbuffer(size, components=1, dtype="f4")
        zbuf = ctx.depth_renderbuffer(size)
        self._attachments = [color, inst, depth, zbuf]
        self._fbo = ctx.framebuffer(color_attachments=[color, inst, depth], depth_attachment=zbuf)
        self._fbo.viewport = (0, 0, self._width, self._height)
        self._fbo_rgb = ctx.framebuffer(color_attachments=[color], depth_attachment=zbuf)
        self._fbo_rgb.viewport = (0, 0, self._width, self._height)
        self._fbo_dirty = False

    def _upload_instances(self) -> None:
        if not self._instances_dirty:
            return
        n = self._instances.shape[0]
        if n > self._inst_capacity:
            # Grow geometrically; orphan keeps the buffer object (and the VAO
            # binding) while replacing its storage.
            self._inst_capacity = max(n, 2 * self._inst_capacity)
            self._inst_buf.orphan(self._inst_capacity * _INSTANCE_DTYPE.itemsize)
        if n:
            self._inst_buf.write(self._instances.tobytes())
        self._instances_dirty = False

    # ---------------------------------------------------------------- cleanup
    def _release_framebuffer(self) -> None:
        for fbo in (self._fbo, self._fbo_rgb):
            if fbo is not None:
                fbo.release()
        for rb in self._attachments:
            rb.release()
        self._fbo, self._fbo_rgb, self._attachments = None, None, []

    def release(self) -> None:
        """Free all GL objects and the context; a later render recreates them."""
        if self._ctx is not None and self._ctx_pid == os.getpid():
            with self._ctx:
                self._release_framebuffer()
                for obj in (self._vao, self._inst_buf, self._cube_ibo, self._cube_vbo, self._prog):
                    if obj is not None:
                        obj.release()
            self._ctx.release()
        self._reset_gl_handles()

    def __enter__(self) -> "BoxRenderer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __getstate__(self) -> dict[str, Any]:
        """Pickle only the configuration and instance data, never GL handles."""
        state = self.__dict__.copy()
        for key in list(state):
            if key in _GL_KEYS:
                del state[key]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset_gl_handles()


_GL_KEYS = frozenset(
    {
        "_ctx",
        "_ctx_pid",
        "_prog",
        "_u_viewproj",
        "_cube_vbo",
        "_cube_ibo",
        "_inst_buf",
        "_inst_capacity",
        "_vao",
        "_fbo",
        "_fbo_rgb",
        "_attachments",
        "_fbo_dirty",
        "_instances_dirty",
    }
)
