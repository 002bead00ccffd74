"""Start one headless Xorg server per NVIDIA GPU, for the real AI2-THOR's Linux64 build.

    sudo python scripts/startx.py                 # GPU i -> display :i (all GPUs)
    sudo python scripts/startx.py --gpus 0,1 --first-display 10
    python scripts/startx.py --dry-run            # print the xorg.conf files and commands only
    sudo python scripts/startx.py --stop          # stop the servers this script started

For each GPU listed by `nvidia-smi`, writes an xorg.conf whose Device section points at the
GPU's PCI BusID (nvidia-smi's hexadecimal "00000000:3B:00.0" becomes Xorg's decimal
"PCI:59:0:0") with a virtual screen and no monitor attached, and starts
`Xorg -noreset +extension GLX +extension RANDR +extension RENDER -config <conf> :<display>`
in the background. It waits until every server's socket is in /tmp/.X11-unix, prints the
display -> GPU mapping and exits; the servers keep running (pids in <conf-dir>/xorg.pids).

Needs root (Xorg on a GPU), the NVIDIA driver with its Xorg module (nvidia_drv.so, package
xserver-xorg-video-nvidia-<version> on Ubuntu) and xserver-xorg-core. The rearrangement configs
give sampler i the display `open displays[i % count]`, so GPU i renders on display :i; pass
`x_display` to a Controller yourself otherwise. Containers can use the host's servers with
`-v /tmp/.X11-unix:/tmp/.X11-unix`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

X_SOCKET_DIR = Path("/tmp/.X11-unix")


def list_gpus(nvidia_smi: str = "nvidia-smi") -> List[Tuple[int, str]]:
    """(index, PCI bus id) of every NVIDIA GPU, as nvidia-smi reports them."""
    out = subprocess.run(
        [nvidia_smi, "--query-gpu=index,pci.bus_id", "--format=csv,noheader"],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(
            f"startx: nvidia-smi failed ({out.returncode}): {out.stderr.strip() or out.stdout.strip()}"
        )
    gpus = []
    for line in out.stdout.splitlines():
        if line.strip():
            index, bus_id = (part.strip() for part in line.split(",", 1))
            gpus.append((int(index), bus_id))
    return gpus


def xorg_bus_id(pci_bus_id: str) -> str:
    """nvidia-smi's "DDDDDDDD:BB:DD.F" (hex) -> Xorg's "PCI:bus:device:function" (decimal)."""
    try:
        domain, bus, devfn = pci_bus_id.strip().split(":")
        device, function = devfn.split(".")
        d, b, dev, fn = (int(x, 16) for x in (domain, bus, device, function))
    except ValueError:
        raise ValueError(
            f"not a PCI bus id: {pci_bus_id!r} (expected e.g. 00000000:3B:00.0)"
        ) from None
    return f"PCI:{b}@{d}:{dev}:{fn}" if d else f"PCI:{b}:{dev}:{fn}"


def xorg_conf(bus_id: str, width: int = 1280, height: int = 1024) -> str:
    """A one-GPU, monitor-less xorg.conf for `bus_id` (Xorg format)."""
    return f"""Section "ServerLayout"
    Identifier "Layout0"
    Screen 0 "Screen0"
EndSection

Section "ServerFlags"
    Option "AutoAddGPU" "false"
EndSection

Section "Device"
    Identifier "Device0"
    Driver "nvidia"
    VendorName "NVIDIA Corporation"
    BusID "{bus_id}"
EndSection

Section "Monitor"
    Identifier "Monitor0"
EndSection

Section "Screen"
    Identifier "Screen0"
    Device "Device0"
    Monitor "Monitor0"
    DefaultDepth 24
    Option "AllowEmptyInitialConfiguration" "True"
    Option "UseDisplayDevice" "None"
    SubSection "Display"
        Depth 24
        Virtual {width} {height}
    EndSubSection
EndSection
"""


def xorg_command(conf: Path, display: int) -> List[str]:
    return [
        "Xorg",
        "-noreset",
        "+extension",
        "GLX",
        "+extension",
        "RANDR",
        "+extension",
        "RENDER",
        "-config",
        str(conf),
        f":{display}",
    ]


def start(
    plan: Sequence[Tuple[int, int, str]],
    conf_dir: Path,
    width: int,
    height: int,
    dry_run: bool,
    wait_s: float,
) -> int:
    """Write the configs and start the servers of `plan` = [(gpu, display, bus id), ...]."""
    conf_dir.mkdir(parents=True, exist_ok=True)
    procs = []
    for gpu, display, bus in plan:
        conf = conf_dir / f"xorg-{display}.conf"
        text = xorg_conf(xorg_bus_id(bus), width, height)
        cmd = xorg_command(conf, display)
        if dry_run:
            print(f"# GPU {gpu} ({bus}) -> display :{display}\n# {conf}\n{text}$ {' '.join(cmd)}\n")
            continue
        if (X_SOCKET_DIR / f"X{display}").exists():
            raise SystemExit(
                f"startx: display :{display} is already taken ({X_SOCKET_DIR / f'X{display}'} exists)"
            )
        conf.write_text(text)
        log = open(conf_dir / f"xorg-{display}.log", "w")
        procs.append(
            (
                gpu,
                display,
                subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True),
            )
        )
    if dry_run:
        return 0
    (conf_dir / "xorg.pids").write_text("".join(f"{p.pid}\n" for _, _, p in procs))
    deadline = time.time() + wait_s
    failed = []
    for gpu, display, p in procs:
        while (
            not (X_SOCKET_DIR / f"X{display}").exists()
            and p.poll() is None
            and time.time() < deadline
        ):
            time.sleep(0.2)
        ok = (X_SOCKET_DIR / f"X{display}").exists() and p.poll() is None
        print(
            f"display :{display} -> GPU {gpu}: {'running' if ok else 'FAILED'} (pid {p.pid}, "
            f"log {conf_dir / f'xorg-{display}.log'})"
        )
        if not ok:
            failed.append(display)
    return 1 if failed else 0


def stop(conf_dir: Path) -> int:
    pidfile = conf_dir / "xorg.pids"
    if not pidfile.exists():
        print(f"startx: no {pidfile}: nothing to stop")
        return 0
    for pid in (int(x) for x in pidfile.read_text().split()):
        try:
            os.kill(pid, signal.SIGTERM)
            print(f"stopped Xorg pid {pid}")
        except ProcessLookupError:
            pass
    pidfile.unlink()
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpus", default=None, help="comma-separated GPU indices (default: every GPU)")
    ap.add_argument(
        "--first-display", type=int, default=0, help="display number of the first GPU (default 0)"
    )
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=1024)
    ap.add_argument("--conf-dir", type=Path, default=Path("/tmp/thor-xorg"))
    ap.add_argument(
        "--wait", type=float, default=20.0, help="seconds to wait for each server's socket"
    )
    ap.add_argument(
        "--dry-run", action="store_true", help="print the configs and commands, start nothing"
    )
    ap.add_argument(
        "--stop", action="store_true", help="stop the servers listed in <conf-dir>/xorg.pids"
    )
    ap.add_argument("--nvidia-smi", default="nvidia-smi", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.stop:
        return stop(args.conf_dir)
    if not shutil.which(args.nvidia_smi):
        raise SystemExit(
            "startx: nvidia-smi not found: no NVIDIA driver here (use CloudRendering, or Xvfb)"
        )
    gpus = list_gpus(args.nvidia_smi)
    if args.gpus is not None:
        wanted = [int(g) for g in args.gpus.split(",") if g.strip()]
        unknown = sorted(set(wanted) - {g for g, _ in gpus})
        if unknown:
            raise SystemExit(f"startx: no GPU {unknown} (nvidia-smi lists {[g for g, _ in gpus]})")
        gpus = [g for g in gpus if g[0] in wanted]
    if not gpus:
        raise SystemExit("startx: nvidia-smi lists no GPU")
    if not args.dry_run:
        if os.geteuid() != 0:
            raise SystemExit("startx: Xorg on a GPU needs root (sudo), or use --dry-run")
        if not shutil.which("Xorg"):
            raise SystemExit("startx: Xorg not found (apt-get install xserver-xorg-core)")
    plan = [(gpu, args.first_display + i, bus) for i, (gpu, bus) in enumerate(gpus)]
    return start(plan, args.conf_dir, args.width, args.height, args.dry_run, args.wait)


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)
