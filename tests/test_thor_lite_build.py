"""thor_lite as an AI2-THOR build, driven by the genuine ai2thor client (FIFO protocol).

Frames and metadata through `ai2thor.controller.Controller(local_executable_path=...)` must
equal the in-process thor_lite Controller's for the same actions; the build must follow THOR's
failure semantics and never outlive its client (stop, SIGKILL, SIGTERM).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from itertools import cycle
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
ai2thor_controller = pytest.importorskip("ai2thor.controller")

from thor_lite import Controller as LiteController  # noqa: E402
from thor_lite.build import executable_path  # noqa: E402
from backends import THOR_COMMIT_ID  # noqa: E402

SIZE = 96
INIT = dict(
    width=SIZE,
    height=SIZE,
    renderDepthImage=True,
    renderInstanceSegmentation=True,
    gridSize=0.25,
    rotateStepDegrees=90,
    visibilityDistance=1.5,
    snapToGrid=True,
)
COMPARED = (
    "agent",
    "objects",
    "inventoryObjects",
    "heldObjectPose",
    "lastAction",
    "lastActionSuccess",
    "errorMessage",
    "errorCode",
    "sceneName",
    "cameraPosition",
    "screenWidth",
    "screenHeight",
)


def _plain(v):
    """JSON-like values: tuples as lists, numpy numbers as Python numbers, ai2thor-only keys dropped."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items() if k != "visibleBounds2D"}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def _same(lite, thor, action_return: bool = True) -> None:
    for k in COMPARED + (("actionReturn",) if action_return else ()):
        assert _plain(thor.metadata[k]) == _plain(lite.metadata[k]), k
    assert thor.frame.tobytes() == lite.frame.tobytes()
    assert thor.depth_frame.dtype == np.float32
    assert thor.depth_frame.tobytes() == lite.depth_frame.astype(np.float32).tobytes()
    assert thor.instance_segmentation_frame.tobytes() == lite.instance_segmentation_frame.tobytes()
    assert set(thor.instance_masks.keys()) == set(lite.instance_masks.keys())
    for oid in lite.instance_masks:
        assert np.array_equal(thor.instance_masks[oid], lite.instance_masks[oid]), oid


@pytest.fixture(scope="module")
def pair():
    thor = ai2thor_controller.Controller(
        local_executable_path=executable_path(), scene="FloorPlan1", x_display=":0", **INIT
    )
    lite = LiteController(scene="FloorPlan1", **INIT)
    yield lite, thor
    thor.stop()
    lite.stop()


def test_executable_path_is_an_executable_launcher(tmp_path):
    p = executable_path(tmp_path)
    assert os.access(p, os.X_OK) and " " not in p
    assert executable_path(tmp_path) == p  # stable: written once per interpreter and checkout
    assert "-m thor_lite.build" in Path(p).read_text()


def test_started_by_hand_it_fails_with_one_line():
    env = {k: v for k, v in os.environ.items() if not k.startswith("AI2THOR_")}
    r = subprocess.run(
        [sys.executable, "-m", "thor_lite.build"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "local_executable_path" in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "thor_lite.build", "-screen-width", "x"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "-screen-width" in r.stderr


def test_reset_navigation_and_interaction_equal_in_process(pair):
    lite, thor = pair
    _same(lite.last_event, thor.last_event, action_return=False)
    assert thor.last_event.metadata["actionReturn"] == {
        "cameraNearPlane": 0.1,
        "cameraFarPlane": 20.0,
    }
    openable = next(
        o["objectId"]
        for o in lite.last_event.metadata["objects"]
        if o["openable"] and not o["isOpen"]
    )
    steps = [
        dict(action="RotateRight"),
        dict(action="MoveAhead"),
        dict(action="LookDown"),
        dict(action="OpenObject", objectId=openable, forceAction=True),
        dict(action="RotateLeft"),
        dict(action="MoveBack"),
        dict(action="GetReachablePositions"),
    ]
    for s in steps:
        a, b = lite.step(dict(s)), thor.step(dict(s))
        _same(a, b)
    assert thor.last_event.get_object(openable)["isOpen"]
    assert (
        thor.last_event.get_object(openable)["openness"]
        == lite.last_event.get_object(openable)["openness"]
    )
    assert thor.last_event.metadata["reachablePositions"]
    # reset goes through Reset + Initialize on the same build
    a, b = lite.reset("FloorPlan2"), thor.reset("FloorPlan2")
    _same(a, b, action_return=False)


def test_failures_follow_thor_semantics(pair):
    lite, thor = pair
    ev = thor.step(action="OpenObject", objectId="Nothing|+0.00|+0.00|+0.00", forceAction=True)
    assert ev.metadata["lastActionSuccess"] is False and ev.metadata["errorMessage"]
    assert not ev
    with pytest.raises(ValueError, match="Invalid action"):
        thor.step(action="NoSuchAction")
    assert thor.step(action="Pass").metadata["lastActionSuccess"] is True  # still answering


def test_headless_sends_no_frames_and_takes_the_size_by_change_resolution():
    c = ai2thor_controller.Controller(
        local_executable_path=executable_path(),
        scene="FloorPlan2",
        headless=True,
        x_display=":0",
        width=80,
        height=48,
    )
    try:
        ev = c.step("RotateLeft")
        assert ev.frame is None and ev.metadata["lastActionSuccess"]
        assert (ev.metadata["screenWidth"], ev.metadata["screenHeight"]) == (80, 48)
    finally:
        c.stop()


def test_stop_leaves_no_process():
    c = ai2thor_controller.Controller(
        local_executable_path=executable_path(),
        scene="FloorPlan1",
        x_display=":0",
        width=64,
        height=64,
    )
    pid = c.server.unity_proc.pid
    assert c.step("RotateLeft").metadata["lastActionSuccess"]
    c.stop()
    assert _gone(pid, 10)


_CLIENT = textwrap.dedent("""
    import sys, time
    from ai2thor.controller import Controller
    from thor_lite.build import executable_path
    c = Controller(local_executable_path=executable_path(), scene="FloorPlan1", x_display=":0", width=64, height=64)
    print(c.server.unity_proc.pid, flush=True)
    time.sleep(600)
""")


def _gone(pid: int, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie child of ours counts as gone once reaped
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ")[1].startswith("Z"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_client_death_leaves_no_server(sig):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    client = subprocess.Popen(
        [sys.executable, "-c", _CLIENT], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        pid = int(client.stdout.readline())
        os.kill(client.pid, sig)
        client.wait(30)
        assert _gone(pid, 15), f"build process {pid} outlived its client"
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()


def _expert_episode(env_kwargs, two_phase: bool = False):
    """Metrics, action successes and last frame of one shipped val episode solved by the greedy
    expert (2-phase: a 20-step walkthrough turning and walking first)."""
    from collections import OrderedDict

    from allenact.base_abstractions.sensor import SensorSuite

    from rearrange.constants import REARRANGE_ACTIONS
    from rearrange.dataset import dataset_path, load_dataset
    from rearrange.tasks import RearrangeTaskSampler, UnshuffleTask

    val = load_dataset(dataset_path("val"))
    sampler = RearrangeTaskSampler(
        run_walkthrough_phase=two_phase,
        run_unshuffle_phase=True,
        stage="val",
        scenes_to_task_spec_dicts=OrderedDict({"FloorPlan21": val["FloorPlan21"][:1]}),
        rearrange_env_kwargs=env_kwargs,
        sensors=SensorSuite([]),
        max_steps={"walkthrough": 20, "unshuffle": 200},
        epochs=1,
        seed=0,
    )
    successes = []
    try:
        for _ in range(2 if two_phase else 1):
            task = sampler.next_task()
            walk = cycle(
                [REARRANGE_ACTIONS.index("rotate_right"), REARRANGE_ACTIONS.index("move_ahead")]
            )
            while not task.is_done():
                if isinstance(task, UnshuffleTask):
                    action, ok = task.query_expert()
                    assert ok
                else:
                    action = next(walk)
                task.step(action)
                successes.append(task.env.last_event.metadata["lastActionSuccess"])
        metrics = task.metrics()
        frame = task.env.last_event.frame.tobytes()
    finally:
        sampler.close()
    return metrics, successes, frame


@pytest.mark.parametrize("two_phase", [False, True], ids=["1-phase", "2-phase"])
def test_rearrangement_episode_through_make_controller_matches_default_backend(
    monkeypatch, two_phase
):
    monkeypatch.delenv("THOR_EXECUTABLE", raising=False)
    lite = _expert_episode({}, two_phase)
    thor = _expert_episode(
        {"backend": "thor", "controller_kwargs": {"thor_executable": "thor_lite"}}, two_phase
    )
    assert thor[1] == lite[1] and thor[2] == lite[2]
    assert _plain(thor[0]) == _plain(lite[0])
    if two_phase:
        assert lite[0]["walkthrough/ep_length"] == 20 and lite[0]["unshuffle/ep_length"] >= 1
    else:
        assert lite[0]["unshuffle/ep_length"] > 1 and "walkthrough/ep_length" not in lite[0]


def test_thor_executable_switch_and_preflight(monkeypatch):
    from backends.launch import check_thor, thor_executable_choice, with_thor_executable

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("THOR_EXECUTABLE", "thor_lite")
    assert thor_executable_choice() == "thor_lite" and thor_executable_choice("/opt/x") == "/opt/x"
    kwargs = with_thor_executable({"width": 64}, executable_path())
    assert kwargs["local_executable_path"] == executable_path() and kwargs["x_display"] == ":0"
    check_thor(kwargs)  # no display, no Unity build on disk: the build needs neither
    monkeypatch.delenv("THOR_EXECUTABLE")
    assert thor_executable_choice() == ""
    assert with_thor_executable({"width": 64}, "") == {"width": 64}  # default unchanged
    assert with_thor_executable({}, "/opt/unity/thor") == {
        "local_executable_path": "/opt/unity/thor"
    }
    # a config's Unity GPU platform is not handed to the CPU build (ai2thor would check Vulkan)
    cloud = {"platform": object(), "gpu_device": 0, "width": 64}
    kwargs = with_thor_executable(cloud, executable_path())
    assert "platform" not in kwargs and "gpu_device" not in kwargs and kwargs["width"] == 64
    check_thor(kwargs)
    assert with_thor_executable(cloud, "/opt/unity/thor")["platform"] is cloud["platform"]


def _example_lines(backend: str) -> list:
    env = {**os.environ, "THOR_EXECUTABLE": "thor_lite"}
    env.pop("DISPLAY", None)
    out = subprocess.run(
        [sys.executable, str(ROOT / "example.py"), "--part", "two_phase", "--backend", backend],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return [line for line in out.stdout.splitlines() if line.lstrip().startswith(("[", "%"))]


def test_example_py_runs_through_the_genuine_client_as_in_process():
    """The repository's example.py (the official example's 2-phase part: walkthrough then
    unshuffle, random actions) with `--backend thor` and THOR_EXECUTABLE=thor_lite runs through
    ai2thor's Controller and prints what the in-process backend prints."""
    lite, thor = _example_lines("thor_lite"), _example_lines("thor")
    assert len(lite) == 6 and sum("] walkthrough " in x for x in lite) == 2
    assert thor == lite


def test_an_unencodable_reply_is_a_failed_action_not_a_dead_build():
    from thor_lite.build import encode
    from thor_lite.build.session import BuildSession

    s = BuildSession(32, 32)
    meta, _ = s.error_reply({"action": "Odd"}, TypeError("cannot encode object"))
    assert meta["lastActionSuccess"] is False and "cannot encode" in meta["errorMessage"]
    assert encode.event_message(meta, 3, [])[-5:] == b"\xff\x00\x00\x00\x00"
    meta, _ = s.handle({"action": "GetScenesInBuild"})
    assert "FloorPlan1_physics" in meta["actionReturn"] and len(meta["actionReturn"]) == 120
    meta, _ = s.handle({"action": "Reset", "sceneName": "FloorPlan9999_physics"})
    assert meta["lastActionSuccess"] is False and "FloorPlan9999" in meta["errorMessage"]


def test_scalar_rotation_from_the_client_is_a_full_vector():
    from thor_lite.build.session import complete_rotation

    assert complete_rotation({"rotation": {"y": 270}})["rotation"] == {
        "x": 0.0,
        "y": 270.0,
        "z": 0.0,
    }
    assert complete_rotation({"rotation": {"y": 1, "x": 2}})["rotation"] == {
        "y": 1,
        "x": 2,
    }  # thor_lite judges
    assert complete_rotation({"rotation": {"y": True}})["rotation"] == {"y": True}


def _alfred_episode(backend: str):
    """Per step (expert action, success, frame digests) and metrics of one ALFRED online-expert episode."""
    import hashlib

    from alfred_task.data.il_dataset import build_vocab
    from alfred_task.models.observations import EXPERT_ACTION_UUID
    from alfred_task.alfred_task_samplers import AlfredTaskSampler
    from alfred_task.alfred_sensors import AlfredExpertActionSensor
    from alfred_task.data.traj_data import load_split_file

    data = ROOT / "data" / "alfred_lite"
    splits = load_split_file(data / "splits.json")
    s = AlfredTaskSampler(
        data,
        splits,
        "valid_seen",
        [AlfredExpertActionSensor()],
        build_vocab(data, splits),
        seed=0,
        deterministic=True,
        max_steps=150,
        entries=splits["valid_seen"][:1],
        backend=backend,
    )
    steps = []
    try:
        task = s.next_task()
        obs = task.get_observations()
        while not task.is_done():
            action, _ = obs[EXPERT_ACTION_UUID]
            obs = task.step(int(action)).observation
            ev = task.env.last_event
            steps.append(
                (
                    int(action),
                    bool(ev.metadata["lastActionSuccess"]),
                    *(
                        hashlib.sha1(f.tobytes()).hexdigest()
                        for f in (ev.frame, ev.depth_frame, ev.instance_segmentation_frame)
                    ),
                )
            )
        metrics = {k: v for k, v in task.metrics().items() if k != "task_info"}
    finally:
        s.close()
    return steps, metrics


def test_alfred_expert_episode_through_the_build_matches_in_process(monkeypatch):
    lite = _alfred_episode("thor_lite")
    monkeypatch.setenv("THOR_EXECUTABLE", "thor_lite")
    thor = _alfred_episode("thor")
    assert thor == lite
    assert lite[1]["success"] == 1.0


@pytest.mark.parametrize("commit_id", ["", THOR_COMMIT_ID])
def test_the_build_gives_a_builds_names_when_its_environment_names_one(monkeypatch, commit_id):
    """ai2thor's client keeps its commit_id; THOR_LITE_COMMIT_ID chooses the names instead."""
    from thor_lite.build.session import COMMIT_ID_ENV, BuildSession

    monkeypatch.setenv(COMMIT_ID_ENV, commit_id)
    s = BuildSession(64, 64)
    assert s.handle({"action": "Reset", "sceneName": "FloorPlan24_physics"})[0]["lastActionSuccess"]
    meta, _ = s.handle({"action": "Initialize", "gridSize": 0.25})
    names = {o["name"] for o in meta["objects"]}
    assert ("Fridge_ab2776a0" in names) == bool(commit_id)
