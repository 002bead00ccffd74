"""Privileged experts: grid shortest paths and the greedy unshuffle expert (§5)."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict, defaultdict, deque
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Set, Tuple

import networkx as nx

from backends import find_object

from .constants import STEP_SIZE, snake_case
from .pose_metrics import are_poses_equal

if TYPE_CHECKING:  # pragma: no cover
    from .tasks import UnshuffleTask

log = logging.getLogger(__name__)

HORIZONS = (330, 0, 30, 60)
ROTATIONS = (0, 90, 180, 270)
Key = Tuple[float, float, int, int]


def location_to_key(loc: Dict[str, Any]) -> Key:
    return (
        round(loc["x"], 2),
        round(loc["z"], 2),
        int(round(loc["rotation"] / 90.0) * 90) % 360,
        int(round(loc["horizon"])) % 360,
    )


class ShortestPathNavigatorTHOR:
    """A graph over (x, z, rotation, horizon); edges are single navigation actions.

    The scene graph is built once and shared; each episode keeps its own set of deleted
    edges (failed moves), so nothing is copied per episode. Next-action queries read a
    shortest-path tree (reverse-BFS distances) per target set; the trees of an episode's
    recent target sets are kept, and a failed move drops only the trees whose distances it
    changes, so a repeated query costs O(degree) even when the expert switches between the
    object and its goal or bumps into a wall.
    """

    MAX_TREES = 16

    _scene_graphs: Dict[Tuple[str, float, bool], nx.DiGraph] = {}

    def __init__(
        self, controller, grid_size: float = STEP_SIZE, include_move_left_right: bool = False
    ) -> None:
        self.controller = controller
        self.grid_size = grid_size
        self.include_move_left_right = include_move_left_right
        self._scene: Optional[str] = None
        self.graph: Optional[nx.DiGraph] = None
        self.removed_edges: Set[Tuple[Key, Key]] = set()
        # target set -> distances to it; cleared when nodes are added or an episode starts
        self._trees: "OrderedDict[frozenset, Dict[Key, int]]" = OrderedDict()
        # node -> its out-edges as (action, neighbour), in the order the expert prefers them
        self._succ: Dict[Key, List[Tuple[str, Key]]] = {}
        self._graph_version = 0
        self._graph_nodes = 0
        self._ensured: Tuple[Optional[frozenset], Optional[nx.DiGraph]] = (None, None)

    @property
    def scene_name(self) -> str:
        return self.controller.last_event.metadata["sceneName"].replace("_physics", "")

    def on_reset(self) -> None:
        """Start an episode: the graph of the scene's reachable positions now (keyed by them: an
        episode's start can add positions, and no episode may see another's)."""
        scene = self.scene_name
        positions = self._reachable()
        key = (scene, self.grid_size, self.include_move_left_right, frozenset(positions))
        base = self._scene_graphs.get(key)
        if base is None:
            base = self._build_graph(positions)
            self._scene_graphs[key] = base
        self.graph = base
        self.removed_edges: Set[Tuple[Key, Key]] = set()
        self._scene = scene
        self._graph_changed()

    def _reachable(self) -> List[Tuple[float, float]]:
        ev = self.controller.step("GetReachablePositions")
        return [(round(p["x"], 2), round(p["z"], 2)) for p in ev.metadata["actionReturn"]]

    def _build_graph(self, positions: List[Tuple[float, float]]) -> nx.DiGraph:
        g = nx.DiGraph()
        for x, z in positions:
            for r in ROTATIONS:
                for h in HORIZONS:
                    self._add_node(g, (x, z, r, h), set(positions))
        return g

    def _add_node(
        self, g: nx.DiGraph, key: Key, positions: Optional[Set[Tuple[float, float]]] = None
    ) -> None:
        g.add_node(key)
        for nbr, action in self._neighbours(key):
            if positions is not None and (nbr[0], nbr[1]) not in positions:
                continue
            g.add_edge(key, nbr, action=action)
            back = self._action_between(nbr, key)
            if back is not None and (positions is None or (key[0], key[1]) in positions):
                g.add_edge(nbr, key, action=back)

    def _neighbours(self, key: Key) -> Iterable[Tuple[Key, str]]:
        for other in self._candidate_keys(key):
            a = self._action_between(key, other)
            if a is not None:
                yield other, a

    def _candidate_keys(self, key: Key) -> List[Key]:
        x, z, r, h = key
        gs = self.grid_size
        out = [
            (round(x + gs, 2), z, r, h),
            (round(x - gs, 2), z, r, h),
            (x, round(z + gs, 2), r, h),
            (x, round(z - gs, 2), r, h),
            (x, z, (r + 90) % 360, h),
            (x, z, (r - 90) % 360, h),
        ]
        for dh in (-30, 30):
            nh = (h + dh) % 360
            if nh in HORIZONS:
                out.append((x, z, r, nh))
        return out

    def _action_between(self, a: Key, b: Key) -> Optional[str]:
        ax, az, ar, ah = a
        bx, bz, br, bh = b
        if (ax, az, ar) == (bx, bz, br):
            dh = (bh - ah) % 360
            if dh == 30:
                return "LookDown"
            if dh == 330:
                return "LookUp"
            return None
        if (ax, az, ah) == (bx, bz, bh):
            dr = (br - ar) % 360
            return {90: "RotateRight", 270: "RotateLeft"}.get(dr)
        if ar != br or ah != bh:
            return None
        dx, dz = round(bx - ax, 2), round(bz - az, 2)
        if abs(abs(dx) + abs(dz) - self.grid_size) > 1e-6:
            return None
        fwd = {0: (0, 1), 90: (1, 0), 180: (0, -1), 270: (-1, 0)}[ar]
        right = (fwd[1], -fwd[0])
        f = dx * fwd[0] + dz * fwd[1]
        s = dx * right[0] + dz * right[1]
        if f > 0:
            return "MoveAhead"
        if self.include_move_left_right and s > 0:
            return "MoveRight"
        if self.include_move_left_right and s < 0:
            return "MoveLeft"
        return None  # MoveBack is never used (it produced odd trajectories)

    def _graph_changed(self) -> None:
        self._graph_version += 1
        self._graph_nodes = len(self.graph or ())
        self._trees.clear()
        self._succ.clear()

    def ensure_node(self, key: Key) -> None:
        if self.graph is None:
            self.on_reset()
        if key not in self.graph:
            self._add_node(self.graph, key)
            self._graph_changed()

    def _successors(self, key: Key) -> List[Tuple[str, Key]]:
        succ = self._succ.get(key)
        if succ is None:
            succ = sorted((d["action"], n) for _, n, d in self.graph.out_edges(key, data=True))
            self._succ[key] = succ
        return succ

    def remove_edge(self, key: Key, action: str) -> None:
        if self.graph is None or key not in self.graph:
            return
        for act, nbr in self._successors(key):
            if act == action and (key, nbr) not in self.removed_edges:
                self.removed_edges.add((key, nbr))
                self._graph_version += 1
                self._drop_trees_using(key, nbr)

    def _drop_trees_using(self, key: Key, nbr: Key) -> None:
        """Forget the trees whose distances change without edge key -> nbr: those where it was
        the last remaining shortest step out of `key` (any other edge leaves them exact)."""
        for targets, dist in list(self._trees.items()):
            d = dist.get(key)
            if d is None or d == 0 or dist.get(nbr) != d - 1:
                continue
            if not any(
                dist.get(n) == d - 1 and (key, n) not in self.removed_edges
                for _, n in self._successors(key)
            ):
                del self._trees[targets]

    def _distances_to(self, targets: frozenset) -> Dict[Key, int]:
        dist = self._trees.get(targets)
        if dist is not None:
            self._trees.move_to_end(targets)
            return dist
        pred = self.graph._pred  # networkx's predecessor dicts: the views cost a call per node
        removed = self.removed_edges
        dist = {t: 0 for t in targets if t in self.graph}
        queue = deque(dist)
        while queue:
            cur = queue.popleft()
            nd = dist[cur] + 1
            for prev in pred[cur]:
                if prev not in dist and (prev, cur) not in removed:
                    dist[prev] = nd
                    queue.append(prev)
        self._trees[targets] = dist
        while len(self._trees) > self.MAX_TREES:
            self._trees.popitem(last=False)
        return dist

    def shortest_path_next_action(self, source: Key, targets: Iterable[Key]) -> Optional[str]:
        """Next action on a shortest path to any target; 'Pass' when already there."""
        targets = targets if isinstance(targets, frozenset) else frozenset(targets)
        if len(self.graph or ()) != self._graph_nodes:  # another navigator grew the shared graph
            self._graph_changed()
        self.ensure_node(source)
        if self._ensured != (targets, self.graph):
            for t in targets:
                self.ensure_node(t)
            self._ensured = (targets, self.graph)
        if source in targets:
            return "Pass"
        dist = self._distances_to(targets)
        d = dist.get(source)
        if d is None:
            return None
        for action, nbr in self._successors(source):
            if (source, nbr) not in self.removed_edges and dist.get(nbr) == d - 1:
                return action
        return None


class GreedyUnshuffleExpert:
    """Fix the nearest misplaced object first: navigate, open or pick up, then snap-drop."""

    def __init__(
        self,
        task: "UnshuffleTask",
        shortest_path_navigator: Optional[ShortestPathNavigatorTHOR] = None,
        max_priority_per_object: int = 3,
    ) -> None:
        self.task = task
        env = task.unshuffle_env
        self.env = env
        sampler = getattr(task, "sampler", None)
        if shortest_path_navigator is None:
            shortest_path_navigator = (
                sampler.navigator(env.scene)
                if sampler is not None
                else ShortestPathNavigatorTHOR(
                    env.controller, include_move_left_right="move_left" in task.discrete_actions
                )
            )
        self.nav = shortest_path_navigator
        self.nav.on_reset()
        self.max_priority_per_object = max_priority_per_object
        self.object_name_to_priority: Dict[str, int] = defaultdict(int)
        self.expert_action_list: List[Optional[int]] = []
        self._last_to_target_recep: Optional[Dict[str, Any]] = None
        self._current_target_name: Optional[str] = None
        self._last_held_name: Optional[str] = None
        self._name_of_object_we_wanted_to_pickup: Optional[str] = None
        self._last_expert_action_name: Optional[str] = None
        # Why the expert last failed on each object (read by benchmarks' failure taxonomy).
        self.failure_reasons: Dict[str, str] = {}
        self._drop_reason: Optional[str] = None
        self._target_keys_cache: Dict[Tuple[int, int], Tuple[List, frozenset]] = {}
        # seconds spent choosing each action (benchmarks/rearrange_expert.py reports the median)
        self.plan_seconds: List[float] = []
        if task.object_names_seen_in_walkthrough is not None:
            ips, gps, cps = env.poses
            for g in gps:
                if g["name"] not in task.object_names_seen_in_walkthrough:
                    self.object_name_to_priority[g["name"]] = self.max_priority_per_object + 1
        self._generate_and_record()

    @property
    def expert_action(self) -> Optional[int]:
        return self.expert_action_list[-1]

    # --- helpers ---------------------------------------------------------------------------
    def _agent_key(self) -> Key:
        return location_to_key(self.env.get_agent_location())

    def _interactable_poses(self, pose: Dict[str, Any]) -> List[Dict[str, Any]]:
        return self.env.interactable_cache.get(self.env.scene, pose, self.env.controller)

    def _target_keys(self, poses: List[Dict[str, Any]]) -> frozenset:
        """The graph keys of `poses`, computed once per pose list: the lists are cached per
        object pose and only ever shrink in place (`_delete_current_pose`), so (identity,
        length) tells whether the keys are still those of the list."""
        tag = (id(poses), len(poses))
        hit = self._target_keys_cache.get(tag)
        if hit is None or hit[0] is not poses:
            hit = (poses, frozenset(location_to_key(p) for p in poses))
            self._target_keys_cache[tag] = hit
        return hit[1]

    def _nav_to(self, pose: Dict[str, Any]) -> Tuple[Optional[str], List[Dict[str, Any]]]:
        """Navigation action toward a pose from which `pose` can be interacted with."""
        poses = self._interactable_poses(pose)
        if not poses:
            return None, poses
        act = self.nav.shortest_path_next_action(self._agent_key(), self._target_keys(poses))
        if act != "Pass":
            return act, poses
        loc = self.env.get_agent_location()
        for p in poses:
            if (
                abs(p["x"] - loc["x"]) + abs(p["z"] - loc["z"]) <= 0.01
                and abs((p["rotation"] - loc["rotation"]) % 360) < 1e-2
                and abs(p["horizon"] - loc["horizon"]) < 1e-2
            ):
                if bool(p["standing"]) == bool(loc["standing"]):
                    return "Pass", poses
        for p in poses:
            if (
                abs(p["x"] - loc["x"]) + abs(p["z"] - loc["z"]) <= 0.01
                and abs((p["rotation"] - loc["rotation"]) % 360) < 1e-2
                and abs(p["horizon"] - loc["horizon"]) < 1e-2
            ):
                return ("Stand" if p["standing"] else "Crouch"), poses
        return None, poses

    def _delete_current_pose(self, pose: Dict[str, Any], flip_standing: bool = False) -> bool:
        poses = self._interactable_poses(pose)
        loc = self.env.get_agent_location()
        key = location_to_key(loc)
        before = len(poses)
        poses[:] = [
            p
            for p in poses
            if not (
                location_to_key(p) == key
                and (bool(p["standing"]) == (bool(loc["standing"]) != flip_standing))
            )
        ]
        return len(poses) < before

    def _note(self, name: Optional[str], reason: str, keep_existing: bool = False) -> None:
        """Remember why the expert failed on `name`; `keep_existing` keeps a more specific earlier reason."""
        if name is None or (keep_existing and name in self.failure_reasons):
            return
        self.failure_reasons[name] = reason

    def _no_nav_reason(self, poses: List[Dict[str, Any]], held: bool) -> str:
        where = "goal" if held else "object"
        return (
            f"{where}: no path to an interaction pose"
            if poses
            else f"{where}: no interaction pose (hidden/unreachable)"
        )

    # --- action generation -------------------------------------------------------------------
    def _generate(self) -> Optional[str]:
        env = self.env
        for _ in range(64):
            held = env.held_object
            ips, gps, cps = env.poses
            if held is not None:
                self._current_target_name = None
                self._last_held_name = held["name"]
                goal = next((g for g in gps if g["name"] == held["name"]), None)
                if goal is None:
                    return "DropHeldObjectWithSnap"
                act, poses = self._nav_to(goal)
                self._drop_reason = (
                    None if act is not None else self._no_nav_reason(poses, held=True)
                )
                if act in (None, "Pass"):
                    return "DropHeldObjectWithSnap"
                return act
            cands = []
            agent = env.get_agent_location()
            for g, c in zip(gps, cps):
                if g["broken"] or c["broken"]:
                    continue
                if self.object_name_to_priority[g["name"]] > self.max_priority_per_object:
                    continue
                if are_poses_equal(g, c):
                    continue
                d = (
                    -1.0
                    if g["name"] == self._current_target_name
                    else (
                        abs(agent["x"] - g["position"]["x"]) + abs(agent["z"] - g["position"]["z"])
                    )
                )
                cands.append((self.object_name_to_priority[g["name"]], d, g["name"], g, c))
            if not cands:
                return "Done"
            _, _, name, goal, cur = min(cands, key=lambda t: (t[0], t[1], t[2]))
            self._current_target_name = name
            act, poses = self._nav_to(cur)
            if act is None:
                self._note(name, self._no_nav_reason(poses, held=False), keep_existing=not poses)
                self.object_name_to_priority[name] += 1
                continue
            if act != "Pass":
                return act
            obj = find_object(env.last_event.metadata["objects"], name=name)
            if obj is None or not obj["visible"]:
                self._note(name, "object: not visible from its interaction pose")
                if not self._delete_current_pose(cur):
                    self.object_name_to_priority[name] += 1
                continue
            if (
                cur["openness"] is not None
                and goal["openness"] is not None
                and abs(cur["openness"] - goal["openness"]) > 1e-6
                and not cur["pickupable"]
            ):
                return f"OpenByType{obj['objectType']}"
            if cur["pickupable"] and self._pickup_takes_another(obj):
                # pickup_<type> takes the nearest visible one of the type: try another pose
                self._note(name, "object: a nearer object of its type is picked up instead")
                if not self._delete_current_pose(cur):
                    self.object_name_to_priority[name] += 1
                continue
            if cur["pickupable"]:
                self._name_of_object_we_wanted_to_pickup = name
                return f"Pickup{obj['objectType']}"
            self._note(name, "object: neither pickupable nor openness to fix")
            self.object_name_to_priority[name] = self.max_priority_per_object + 1
        return None

    def _pickup_takes_another(self, obj: Dict[str, Any]) -> bool:
        """Would `pickup_<type>` (nearest visible of the type, by distance then name) take another object?"""
        same = [
            o
            for o in self.env.last_event.metadata["objects"]
            if o["visible"] and o["objectType"] == obj["objectType"]
        ]
        return (
            bool(same)
            and min(same, key=lambda o: (o["distance"], o["name"]))["name"] != obj["name"]
        )

    def _last_error(self) -> str:
        """The simulator's error, cut to its stable head so failures group in a table."""
        msg = str(self.env.last_event.metadata.get("errorMessage") or "no error message")
        return msg.split(":")[0].split(" (")[0][:60]

    def _to_index(self, name: Optional[str]) -> Optional[int]:
        if name is None:
            return None
        if name.startswith("OpenByType"):
            a = f"open_by_type_{snake_case(name[len('OpenByType') :])}"
        elif name.startswith("Pickup"):
            a = f"pickup_{snake_case(name[len('Pickup') :])}"
        else:
            a = snake_case(name)
        acts = self.task.discrete_actions
        return acts.index(a) if a in acts else None

    def _generate_and_record(self) -> None:
        t0 = time.perf_counter()
        name = self._generate()
        self.plan_seconds.append(time.perf_counter() - t0)
        self._last_expert_action_name = name
        self.expert_action_list.append(self._to_index(name))

    def update(self, action_taken: str, success: bool) -> None:
        """Book-keeping after the agent acted (whatever it chose), then plan the next action."""
        expert_idx = self.expert_action_list[-1] if self.expert_action_list else None
        acts = self.task.discrete_actions
        expert_name = acts[expert_idx] if expert_idx is not None else None
        took_expert = action_taken == expert_name
        if took_expert and action_taken.startswith("pickup_") and success:
            self._last_held_name = self._name_of_object_we_wanted_to_pickup
        if took_expert and action_taken == "drop_held_object_with_snap":
            n = self._name_of_object_we_wanted_to_pickup or self._last_held_name
            if n is not None:
                self.object_name_to_priority[n] += 1
                if not success:
                    self._note(
                        n,
                        self._drop_reason
                        or "put: snap at an interaction pose missed the goal pose",
                    )
        if took_expert and action_taken.startswith("open_by_type_") and self._current_target_name:
            self.object_name_to_priority[self._current_target_name] += 1
            if not success:
                self._note(self._current_target_name, f"open failed: {self._last_error()}")
        nav = any(k in action_taken for k in ("move", "rotate", "look"))
        if not success:
            if nav:
                thor = {
                    "move_ahead": "MoveAhead",
                    "move_left": "MoveLeft",
                    "move_right": "MoveRight",
                    "move_back": "MoveBack",
                    "rotate_right": "RotateRight",
                    "rotate_left": "RotateLeft",
                    "look_up": "LookUp",
                    "look_down": "LookDown",
                }.get(action_taken)
                if thor is not None:
                    self.nav.remove_edge(self._agent_key(), thor)
            elif took_expert and (
                action_taken.startswith("pickup_") or action_taken.startswith("open_by_type_")
            ):
                if self._current_target_name is not None:
                    if action_taken.startswith("pickup_"):
                        self._note(
                            self._current_target_name, f"pickup failed: {self._last_error()}"
                        )
                    ips, gps, cps = self.env.poses
                    cur = next((c for c in cps if c["name"] == self._current_target_name), None)
                    if cur is not None and cur["position"] is not None:
                        self._delete_current_pose(cur)
            elif (
                took_expert
                and action_taken in ("crouch", "stand")
                and self.env.held_object is not None
            ):
                ips, gps, cps = self.env.poses
                goal = next((g for g in gps if g["name"] == self.env.held_object["name"]), None)
                if goal is not None:
                    self._delete_current_pose(goal, flip_standing=True)
        elif not nav:
            self._current_target_name = None
        self._generate_and_record()
