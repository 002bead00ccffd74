"""The real-THOR pre-flight (backends.launch.check_thor) on faked machines: Vulkan loader and
NVIDIA ICD manifests present or missing, X displays, without touching the real filesystem."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from backends import launch
from backends.launch import ThorUnavailableError, check_thor, vulkan_icds, vulkan_problems

ROOT = Path(__file__).resolve().parents[1]


class CloudRendering:  # what check_thor recognises by name, without importing ai2thor.platform
    pass


NVIDIA_ICD = {
    "file_format_version": "1.0.0",
    "ICD": {"library_path": "libGLX_nvidia.so.0", "api_version": "1.3"},
}
MESA_ICD = {
    "file_format_version": "1.0.0",
    "ICD": {"library_path": "/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so"},
}


@pytest.fixture
def fake_machine(tmp_path, monkeypatch):
    """Empty ICD folders under tmp_path, and a dynamic loader that knows `libs` only."""
    dirs = (tmp_path / "etc" / "vulkan" / "icd.d", tmp_path / "usr" / "share" / "vulkan" / "icd.d")
    for d in dirs:
        d.mkdir(parents=True)
    monkeypatch.setattr(launch, "VULKAN_ICD_DIRS", tuple(str(d) for d in dirs))
    monkeypatch.delenv("VK_DRIVER_FILES", raising=False)
    monkeypatch.delenv("VK_ICD_FILENAMES", raising=False)
    libs = {"vulkan", "GLX_nvidia"}
    monkeypatch.setattr(
        launch, "_find_library", lambda name: f"lib{name}.so" if name in libs else None
    )
    return {"etc": dirs[0], "share": dirs[1], "libs": libs}


def _cloud_problems(**kwargs) -> str:
    with pytest.raises(ThorUnavailableError) as e:
        check_thor({"platform": CloudRendering, "gpu_device": 0, **kwargs})
    return str(e.value)


def test_nvidia_icd_in_usr_share_satisfies_the_vulkan_checks(fake_machine):
    (fake_machine["share"] / "nvidia_icd.json").write_text(json.dumps(NVIDIA_ICD))
    assert vulkan_problems() == []
    # check_thor still fails here (no Unity build on disk), but not because of Vulkan
    assert "Vulkan" not in _cloud_problems(local_executable_path=None)


def test_nvidia_icd_in_etc_is_found_too(fake_machine):
    (fake_machine["etc"] / "10_nvidia.json").write_text(json.dumps(NVIDIA_ICD))
    assert vulkan_problems() == []


def test_missing_nvidia_icd_is_reported_with_what_was_found(fake_machine):
    (fake_machine["share"] / "lvp_icd.x86_64.json").write_text(json.dumps(MESA_ICD))
    msg = _cloud_problems()
    assert "NVIDIA's Vulkan driver manifest" in msg and "lvp_icd.x86_64.json" in msg
    assert "NVIDIA_DRIVER_CAPABILITIES" in msg
    assert "libvulkan" not in msg  # the loader itself is there


def test_missing_loader_and_icd_are_both_reported(fake_machine):
    fake_machine["libs"].clear()
    msg = _cloud_problems()
    assert "Vulkan loader (libvulkan.so.1" in msg and "found: none" in msg


def test_icd_whose_library_is_missing(fake_machine):
    (fake_machine["share"] / "nvidia_icd.json").write_text(json.dumps(NVIDIA_ICD))
    fake_machine["libs"].discard("GLX_nvidia")
    problems = vulkan_problems()
    assert (
        len(problems) == 1
        and "libGLX_nvidia.so.0, which the dynamic loader cannot find" in problems[0]
    )


def test_unreadable_manifest_does_not_crash(fake_machine):
    (fake_machine["share"] / "nvidia_icd.json").write_text("{not json")
    assert vulkan_icds() == {str(fake_machine["share"] / "nvidia_icd.json"): ""}
    assert vulkan_problems() == []  # named nvidia: the loader will try it


def test_vk_driver_files_overrides_the_folders(fake_machine, tmp_path, monkeypatch):
    elsewhere = tmp_path / "custom_nvidia.json"
    elsewhere.write_text(json.dumps(NVIDIA_ICD))
    monkeypatch.setenv("VK_ICD_FILENAMES", str(elsewhere))
    assert list(vulkan_icds()) == [str(elsewhere)]
    assert vulkan_problems() == []


def test_cloud_rendering_without_gpu_device(fake_machine, monkeypatch):
    (fake_machine["share"] / "nvidia_icd.json").write_text(json.dumps(NVIDIA_ICD))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    with pytest.raises(ThorUnavailableError, match="gpu_device=<int>"):
        check_thor({"platform": CloudRendering})


def test_x_route_does_not_ask_for_vulkan(fake_machine, monkeypatch):
    fake_machine["libs"].clear()
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setattr(launch, "open_x_displays", lambda: [])
    with pytest.raises(ThorUnavailableError) as e:
        check_thor({})
    assert "no X display is open" in str(e.value) and "Vulkan" not in str(e.value)


def test_preflight_script_reports_both_routes():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "thor_preflight.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    text = out.stdout + out.stderr
    assert "X display route" in text and "CloudRendering route" in text, text
    assert out.returncode in (0, 1)
