"""scripts/startx.py: BusID conversion, the generated xorg.conf and a dry run on a fake nvidia-smi."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load_script

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "startx.py"
FAKE_SMI = """#!/bin/sh
echo "0, 00000000:3B:00.0"
echo "1, 00000000:AF:00.0"
echo "2, 00000001:1A:03.1"
"""


@pytest.fixture(scope="module")
def startx():
    return load_script(SCRIPT)


@pytest.fixture
def fake_smi(tmp_path):
    smi = tmp_path / "nvidia-smi"
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    return str(smi)


def test_bus_ids_become_decimal_xorg_ids(startx):
    assert startx.xorg_bus_id("00000000:3B:00.0") == "PCI:59:0:0"
    assert startx.xorg_bus_id("00000000:AF:00.0") == "PCI:175:0:0"
    assert startx.xorg_bus_id("00000001:1A:03.1") == "PCI:26@1:3:1"
    with pytest.raises(ValueError, match="not a PCI bus id"):
        startx.xorg_bus_id("GPU-1234")


def test_xorg_conf_names_the_gpu_and_a_virtual_screen(startx):
    conf = startx.xorg_conf("PCI:59:0:0", 640, 480)
    assert 'BusID "PCI:59:0:0"' in conf and 'Driver "nvidia"' in conf and "Virtual 640 480" in conf
    lines = [ln.strip() for ln in conf.splitlines()]
    assert sum(ln.startswith("Section ") for ln in lines) == lines.count("EndSection") == 5


def test_list_gpus_parses_nvidia_smi(startx, fake_smi):
    assert startx.list_gpus(fake_smi) == [
        (0, "00000000:3B:00.0"),
        (1, "00000000:AF:00.0"),
        (2, "00000001:1A:03.1"),
    ]


def test_dry_run_maps_gpus_to_displays(fake_smi, tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--dry-run",
            "--nvidia-smi",
            fake_smi,
            "--gpus",
            "1,2",
            "--first-display",
            "10",
            "--conf-dir",
            str(tmp_path / "conf"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert (
        "GPU 1 (00000000:AF:00.0) -> display :10" in out.stdout
        and 'BusID "PCI:175:0:0"' in out.stdout
    )
    assert "GPU 2 (00000001:1A:03.1) -> display :11" in out.stdout
    assert "Xorg -noreset +extension GLX +extension RANDR +extension RENDER -config" in out.stdout
    assert "GPU 0" not in out.stdout and not (tmp_path / "conf" / "xorg.pids").exists()


def test_unknown_gpu_is_an_error(fake_smi, tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--dry-run",
            "--nvidia-smi",
            fake_smi,
            "--gpus",
            "7",
            "--conf-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0 and "no GPU [7]" in out.stderr
