"""Choose, check and start a simulator: thor_lite (default, CPU) or the real AI2-THOR build.

One setting chooses the controller; everything above it speaks the same Controller API.
The real backend is checked before Unity is started, so a missing build, X display or
Vulkan driver fails in seconds with the reason, instead of hanging a sampler process.
Neither simulator is imported here until `make_controller` needs it, so a real-THOR run
never loads thor_lite (and a thor_lite run never loads ai2thor).
"""

from __future__ import annotations

import glob
import json
import os
from typing import Any, Dict, List, Optional, Tuple

from .thor_facts import REQUIRED_THOR_VERSION, THOR_COMMIT_ID

DEFAULT_BACKEND = "thor_lite"
BACKENDS: Tuple[str, ...] = (DEFAULT_BACKEND, "thor")


class ThorUnavailableError(RuntimeError):
    """The real AI2-THOR backend cannot start on this machine."""


#: Environment variable naming the executable backend="thor" launches ("thor_lite": thor_lite's build)
THOR_EXECUTABLE_ENV = "THOR_EXECUTABLE"
#: The thor_executable value that means thor_lite's own AI2-THOR build (thor_lite.build)
THOR_LITE_BUILD = "thor_lite"


def thor_executable_choice(thor_executable: Optional[str] = None) -> str:
    """What backend="thor" launches: `thor_executable`, else $THOR_EXECUTABLE, else "" (ai2thor's
    own build choice). "thor_lite" means thor_lite's build; anything else is an executable's path."""
    return thor_executable or os.environ.get(THOR_EXECUTABLE_ENV) or ""


def with_thor_executable(controller_kwargs: Dict[str, Any], path: str) -> Dict[str, Any]:
    """ai2thor Controller kwargs launching `path` ("" leaves them as they are). thor_lite's build
    gets a placeholder x_display when there is none: ai2thor puts one in the child's
    environment (and fails without one), the build never uses it. It renders on the CPU, so a
    GPU platform a config chose for Unity (CloudRendering, gpu_device) is not passed to it:
    ai2thor would check that platform's Vulkan driver before starting the build."""
    kwargs = dict(controller_kwargs)
    if path:
        kwargs["local_executable_path"] = path
    if is_thor_lite_build(path):
        kwargs.pop("platform", None)
        kwargs.pop("gpu_device", None)
    if is_thor_lite_build(path) and not kwargs.get("x_display") and not os.environ.get("DISPLAY"):
        kwargs["x_display"] = ":0"
    return kwargs


def is_thor_lite_build(path: Optional[str]) -> bool:
    """Whether `path` is a launcher written by thor_lite.build (it needs no display or GPU)."""
    return bool(path) and os.path.basename(str(path)).startswith("thor-lite-build-")


def make_controller(
    backend: str = DEFAULT_BACKEND,
    *,
    layout_clears_moveables: bool = False,
    thor_executable: Optional[str] = None,
    **controller_kwargs: Any,
):
    """A started controller of `backend`; the real one only after `check_thor` passes.

    `layout_clears_moveables` (thor_lite only; real THOR has the real furniture): navigation
    trusts the recorded THOR 2.1.0 layout over today's moveable-furniture poses (ALFRED).
    `thor_executable` (backend="thor" only; default $THOR_EXECUTABLE): "thor_lite" runs
    thor_lite's AI2-THOR build through the genuine ai2thor client; a path names a Unity build."""
    if backend == DEFAULT_BACKEND:
        from thor_lite import Controller
        from thor_lite.constants import LAYOUT_CLEARS_MOVEABLES

        if layout_clears_moveables:
            controller_kwargs[LAYOUT_CLEARS_MOVEABLES] = True
        return Controller(**controller_kwargs)
    if backend == "thor":
        path = thor_executable_choice(thor_executable)
        if path == THOR_LITE_BUILD:
            from thor_lite.build import executable_path
            from thor_lite.constants import LAYOUT_CLEARS_MOVEABLES

            path = executable_path()
            if layout_clears_moveables:  # reaches thor_lite through Initialize, as in-process
                controller_kwargs[LAYOUT_CLEARS_MOVEABLES] = True
        kwargs = with_thor_executable(controller_kwargs, path)
        check_thor(kwargs)
        from ai2thor.controller import Controller  # type: ignore

        kwargs.setdefault("commit_id", THOR_COMMIT_ID)
        return Controller(**kwargs)
    raise ValueError(f"unknown simulator backend '{backend}' (expected one of {BACKENDS})")


#: thor_lite's SetObjectPoses flag for a THOR 2.1.0 trajectory's poses (the parameter of
#: thor_lite.actions.scene_setup.set_object_poses)
THOR2_POSES = "thor2Poses"


def thor2_pose_kwargs(backend: str, thor_executable: Optional[str] = None) -> Dict[str, Any]:
    """Extra SetObjectPoses arguments for a trajectory recorded in THOR 2.1.0 (ALFRED's):
    thor_lite then takes openables' fronts and door hinges from ALFRED's recorded opening
    poses; real THOR has its own meshes and takes none. backend="thor" running thor_lite's
    build (thor_executable or $THOR_EXECUTABLE "thor_lite") is thor_lite and takes them."""
    lite_build = backend == "thor" and thor_executable_choice(thor_executable) == THOR_LITE_BUILD
    return {THOR2_POSES: True} if backend == DEFAULT_BACKEND or lite_build else {}


def _major(version: str) -> int:
    """Major version as a number ("10.0" > "5.0"; a string comparison gets that wrong)."""
    head = version.split(".")[0]
    return int(head) if head.isdigit() else 0


def open_x_displays() -> List[str]:
    """X displays with a socket in /tmp/.X11-unix (":0", ":1", ...), for Unity's x_display."""
    return sorted(f":{os.path.basename(p)[1:]}" for p in glob.glob("/tmp/.X11-unix/X*"))


# Where the Vulkan loader looks for installable client drivers (ICDs), in its search order
# (XDG/home folders are left out: a driver is installed system-wide or mounted by the NVIDIA
# container toolkit into one of these).
VULKAN_ICD_DIRS: Tuple[str, ...] = (
    "/etc/vulkan/icd.d",
    "/usr/local/share/vulkan/icd.d",
    "/usr/share/vulkan/icd.d",
)


def _find_library(name: str):
    import ctypes.util

    return ctypes.util.find_library(name)


def _library_stem(lib: str) -> str:
    """ "libGLX_nvidia.so.0" -> "GLX_nvidia", the name ctypes.util.find_library takes."""
    base = os.path.basename(lib).split(".so")[0]
    return base[3:] if base.startswith("lib") else base


def vulkan_icds() -> Dict[str, str]:
    """Vulkan ICD manifests the loader would read: path -> the driver library it names ("" if unreadable).

    VK_DRIVER_FILES / VK_ICD_FILENAMES (colon-separated manifest paths) replace the folders, as
    they do for the loader.
    """
    override = os.environ.get("VK_DRIVER_FILES") or os.environ.get("VK_ICD_FILENAMES")
    if override:
        paths = [p for p in override.split(os.pathsep) if p]
    else:
        paths = sorted(p for d in VULKAN_ICD_DIRS for p in glob.glob(os.path.join(d, "*.json")))
    found = {}
    for path in paths:
        try:
            with open(path) as f:
                found[path] = str(json.load(f).get("ICD", {}).get("library_path", ""))
        except (OSError, ValueError, AttributeError):
            found[path] = ""
    return found


def nvidia_vulkan_icd() -> Tuple[str, str]:
    """(manifest, library) of NVIDIA's Vulkan ICD, or ("", "") when there is none."""
    for path, lib in vulkan_icds().items():
        if "nvidia" in os.path.basename(path).lower() or "nvidia" in lib.lower():
            return path, lib
    return "", ""


def vulkan_problems() -> List[str]:
    """What keeps CloudRendering (Vulkan, NVIDIA GPU) from starting here; empty when nothing does."""
    problems = []
    if _find_library("vulkan") is None:
        problems.append(
            "CloudRendering needs the Vulkan loader (libvulkan.so.1, Debian/Ubuntu package libvulkan1); "
            "it was not found"
        )
    icds = vulkan_icds()
    manifest, lib = nvidia_vulkan_icd()
    if not manifest:
        others = ", ".join(sorted(icds)) or "none"
        problems.append(
            "CloudRendering needs NVIDIA's Vulkan driver manifest (an ICD .json naming libGLX_nvidia.so.0 in "
            f"{' or '.join(VULKAN_ICD_DIRS)}); found: {others}. Install the NVIDIA driver's Vulkan part, or in "
            "Docker run with --gpus all -e NVIDIA_DRIVER_CAPABILITIES=all (Dockerfile.cuda writes the manifest)"
        )
    elif lib and not os.path.isabs(lib) and _find_library(_library_stem(lib)) is None:
        problems.append(
            f"the NVIDIA Vulkan manifest {manifest} names {lib}, which the dynamic loader cannot find "
            "(the driver's graphics libraries are missing; in Docker add 'graphics' to "
            "NVIDIA_DRIVER_CAPABILITIES)"
        )
    elif lib and os.path.isabs(lib) and not os.path.exists(lib):
        problems.append(f"the NVIDIA Vulkan manifest {manifest} names {lib}, which does not exist")
    return problems


def check_thor(controller_kwargs: Dict[str, Any]) -> None:
    """Pre-flight for the Unity backend: package version, build on disk, display/GPU.

    Raises ThorUnavailableError listing every problem found, before anything is started.
    """
    try:
        import ai2thor  # type: ignore
        from ai2thor.build import Build  # type: ignore
    except ImportError as e:
        raise ThorUnavailableError(
            f"backend='thor' needs the ai2thor package ({REQUIRED_THOR_VERSION}): pip install ai2thor=={REQUIRED_THOR_VERSION}"
        ) from e
    version = getattr(ai2thor, "__version__", "0")
    if _major(version) < _major(REQUIRED_THOR_VERSION):
        raise ThorUnavailableError(f"ai2thor {version} found, {REQUIRED_THOR_VERSION} required")
    commit = controller_kwargs.get("commit_id", THOR_COMMIT_ID)
    platform = controller_kwargs.get("platform")
    problems = []
    cloud = (
        platform is not None and getattr(platform, "__name__", str(platform)) == "CloudRendering"
    )
    if cloud:
        problems += vulkan_problems()
        if controller_kwargs.get("gpu_device") is None and not os.environ.get(
            "CUDA_VISIBLE_DEVICES"
        ):
            problems.append("CloudRendering needs gpu_device=<int>")
    elif not is_thor_lite_build(controller_kwargs.get("local_executable_path")):
        x_display = controller_kwargs.get("x_display") or os.environ.get("DISPLAY")
        if not x_display and not open_x_displays():
            problems.append(
                "no X display is open (start one, or pass platform=CloudRendering with a GPU)"
            )
    releases = os.path.join(os.path.expanduser("~"), ".ai2thor", "releases")
    plat_name = "CloudRendering" if cloud else "Linux64"
    build_dir = os.path.join(releases, f"thor-{plat_name}-{commit}")
    if not controller_kwargs.get("local_executable_path") and not os.path.isdir(build_dir):
        problems.append(
            f"the Unity build {build_dir} is not on disk and ai2thor would try to download it "
            "(several hundred MB from the AI2 S3 bucket); without network access that fails"
        )
    if problems:
        raise ThorUnavailableError(
            "Cannot start the real AI2-THOR backend:\n  - "
            + "\n  - ".join(problems)
            + f"\nUse backend='{DEFAULT_BACKEND}' (the default) to run on the embedded CPU simulator."
        )
    del Build  # imported only to prove the package is complete
