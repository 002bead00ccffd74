"""Can the real AI2-THOR backend start on this machine? Checks both rendering routes.

    python scripts/thor_preflight.py [--gpu-device 0] [--x-display :0]

- X display route (platform Linux64): an X server per GPU (scripts/startx.py), passed to THOR as
  `x_display`; the configs pick open displays from /tmp/.X11-unix by device index.
- CloudRendering route (Vulkan, no X): the Vulkan loader, NVIDIA's Vulkan ICD manifest and
  `gpu_device`; the configs use it when no X display is open.

Prints what it found (GPUs, X displays, Vulkan ICDs) and the pre-flight verdict of
`backends.launch.check_thor` for each route; exits 0 when at least one route can start.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess

from backends.launch import ThorUnavailableError, check_thor, open_x_displays, vulkan_icds


def gpus() -> list:
    if not shutil.which("nvidia-smi"):
        return []
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=index,name,pci.bus_id", "--format=csv,noheader"],
        capture_output=True,
        text=True,
    )
    return (
        [ln.strip() for ln in out.stdout.splitlines() if ln.strip()] if out.returncode == 0 else []
    )


def cloud_platform():
    try:
        from ai2thor.platform import CloudRendering  # type: ignore

        return CloudRendering
    except ImportError:
        return type("CloudRendering", (), {})


def verdict(name: str, kwargs: dict) -> bool:
    try:
        check_thor(kwargs)
    except ThorUnavailableError as e:
        print(f"{name}: NOT READY\n  " + str(e).replace("\n", "\n  "))
        return False
    print(f"{name}: ready ({kwargs})")
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--gpu-device", type=int, default=0, help="GPU index for CloudRendering (default 0)"
    )
    ap.add_argument(
        "--x-display",
        default=None,
        help="X display for the Linux64 route (default: first open one)",
    )
    args = ap.parse_args(argv)
    print("GPUs (nvidia-smi):", gpus() or "none found")
    print("open X displays:", open_x_displays() or "none")
    print("Vulkan ICD manifests:", {k: v or "?" for k, v in vulkan_icds().items()} or "none")
    displays = open_x_displays()
    x_kwargs = {"x_display": args.x_display or (displays[0] if displays else None)}
    ok_x = verdict("X display route", x_kwargs)
    ok_cloud = verdict(
        "CloudRendering route", {"platform": cloud_platform(), "gpu_device": args.gpu_device}
    )
    return 0 if ok_x or ok_cloud else 1


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)
