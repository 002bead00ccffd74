"""ALFRED's navigation grid (alfred.md §3.4): poses (x, z, rotation) on a 0.25 m grid.

Nodes are ``(i, k, r)`` with grid indices ``i = x / 0.25``, ``k = z / 0.25`` and the rotation
index ``r`` (0 = +z, 1 = +x, 2 = -z, 3 = -x, i.e. THOR yaw / 90). Edges are the two 90°
rotations and MoveAhead into a reachable cell, all of cost 1, so path lengths are counts of
low-level actions, which is what the planner's ``distance`` facts and the GotoLocation
subgoal check use. Cells a MoveAhead failed into are removed (ALFRED marks them impossible
and replans).
"""

from __future__ import annotations

import math
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import networkx as nx

from alfred_task.constants import AGENT_HORIZON_ADJ, AGENT_STEP_SIZE

Node = Tuple[int, int, int]
#: (di, dk) of MoveAhead for each rotation index
FORWARD = {0: (0, 1), 1: (1, 0), 2: (0, -1), 3: (-1, 0)}
NAV_HORIZON = 45  # ALFRED walks with the camera tilted 45° down


def grid_index(v: float, grid: float = AGENT_STEP_SIZE) -> int:
    return int(round(float(v) / grid))


def rotation_index(yaw_degrees: float) -> int:
    r = float(yaw_degrees) % 360.0
    idx = int(round(r / 90.0)) % 4
    if abs(r - 90.0 * round(r / 90.0)) > 1.0:
        raise ValueError(f"rotation {yaw_degrees} is not a multiple of 90 degrees")
    return idx


def location_string(i: int, k: int, r: int, horizon: float) -> str:
    """ALFRED's ``loc|X|Z|R|H`` (grid indices, rotation index, horizon in degrees)."""
    return f"loc|{i}|{k}|{r}|{int(round(horizon))}"


def parse_location(loc: str) -> Tuple[int, int, int, int]:
    parts = loc.split("|")
    if len(parts) != 5 or parts[0] != "loc":
        raise ValueError(f"not an ALFRED location string: {loc!r}")
    return int(parts[1]), int(parts[2]), int(parts[3]), int(parts[4])


def agent_node(agent: Mapping, grid: float = AGENT_STEP_SIZE) -> Node:
    """The grid node of a THOR ``metadata['agent']`` dict."""
    p = agent["position"]
    rot = agent["rotation"]
    yaw = rot["y"] if isinstance(rot, Mapping) else rot
    return grid_index(p["x"], grid), grid_index(p["z"], grid), rotation_index(yaw)


def look_actions(from_horizon: float, to_horizon: float) -> List[str]:
    """LookDown_15 / LookUp_15 steps between two horizons (positive = looking down)."""
    delta = int(round((float(to_horizon) - float(from_horizon)) / AGENT_HORIZON_ADJ))
    return ["LookDown_15"] * delta if delta > 0 else ["LookUp_15"] * (-delta)


class GridNavigator:
    """Shortest action sequences between poses over a scene's reachable cells."""

    def __init__(
        self, reachable_xz: Iterable[Tuple[float, float]], grid: float = AGENT_STEP_SIZE
    ) -> None:
        self.grid = grid
        self.cells = {(grid_index(x, grid), grid_index(z, grid)) for x, z in reachable_xz}
        if not self.cells:
            raise ValueError("the scene has no reachable positions")
        self.graph = nx.DiGraph()
        for i, k in self.cells:
            for r in range(4):
                self.graph.add_edge((i, k, r), (i, k, (r + 1) % 4), action="RotateRight_90")
                self.graph.add_edge((i, k, r), (i, k, (r - 1) % 4), action="RotateLeft_90")
                di, dk = FORWARD[r]
                if (i + di, k + dk) in self.cells:
                    self.graph.add_edge((i, k, r), (i + di, k + dk, r), action="MoveAhead_25")
        self._bfs: Dict[Node, Dict[Node, int]] = {}
        self._bfs_to: Dict[Node, Dict[Node, int]] = {}

    @classmethod
    def from_controller(cls, controller) -> "GridNavigator":
        from alfred_task.env.environment import query

        ev = query(controller, "GetReachablePositions")
        if not ev.metadata["lastActionSuccess"]:
            raise RuntimeError(f"GetReachablePositions failed: {ev.metadata['errorMessage']}")
        # the cell the agent stands on is reachable even when the query leaves it out (ALFRED's
        # recorded start poses, e.g. FloorPlan421's, can sit just off today's grid)
        here = controller.last_event.metadata["agent"]["position"]
        return cls(
            [(p["x"], p["z"]) for p in ev.metadata["actionReturn"]] + [(here["x"], here["z"])]
        )

    def has(self, node: Node) -> bool:
        return node in self.graph

    def block_cell(self, i: int, k: int) -> None:
        """Forget a cell that a MoveAhead could not enter (and every cached distance)."""
        self.cells.discard((i, k))
        for r in range(4):
            if (i, k, r) in self.graph:
                for pred in list(self.graph.predecessors((i, k, r))):
                    if pred[:2] != (i, k):
                        self.graph.remove_edge(pred, (i, k, r))
        self._bfs.clear()
        self._bfs_to.clear()

    def distances_from(self, node: Node) -> Dict[Node, int]:
        """Action counts from `node` to every node reachable from it (cached)."""
        d = self._bfs.get(node)
        if d is None:
            d = (
                nx.single_source_shortest_path_length(self.graph, node)
                if node in self.graph
                else {node: 0}
            )
            self._bfs[node] = d
        return d

    def distances_to(self, node: Node) -> Dict[Node, int]:
        """Action counts from every node that can reach `node` (cached; for fixed targets)."""
        d = self._bfs_to.get(node)
        if d is None:
            d = (
                nx.single_source_shortest_path_length(self.graph.reverse(copy=False), node)
                if node in self.graph
                else {node: 0}
            )
            self._bfs_to[node] = d
        return d

    def distance(self, a: Node, b: Node) -> Optional[int]:
        return self.distances_from(a).get(b)

    def path_actions(self, start: Node, goal: Node) -> List[str]:
        """Rotate/MoveAhead actions of a shortest path (A* with ALFRED's heuristic)."""
        if start == goal:
            return []
        if start not in self.graph or goal not in self.graph:
            raise nx.NodeNotFound(
                f"pose {start if start not in self.graph else goal} is not on the grid"
            )

        def h(a: Node, b: Node) -> int:
            dr = abs(a[2] - b[2]) % 4
            return abs(a[0] - b[0]) + abs(a[1] - b[1]) + min(dr, 4 - dr)

        nodes = nx.astar_path(self.graph, start, goal, heuristic=h)
        return [self.graph.edges[u, v]["action"] for u, v in zip(nodes, nodes[1:])]

    def nearest_cell(self, x: float, z: float) -> Tuple[int, int]:
        """Reachable cell nearest (L1, then index order) to a point in metres."""
        return min(
            self.cells, key=lambda c: (abs(c[0] * self.grid - x) + abs(c[1] * self.grid - z), c)
        )


def step_pose(node: Node, action: str) -> Node:
    """The grid pose after a navigation action that succeeds."""
    i, k, r = node
    if action == "MoveAhead_25":
        di, dk = FORWARD[r]
        return i + di, k + dk, r
    if action == "RotateRight_90":
        return i, k, (r + 1) % 4
    if action == "RotateLeft_90":
        return i, k, (r - 1) % 4
    return node


def ideal_horizon(camera_y: float, target_y: float, horizontal_dist: float) -> int:
    """ALFRED's look-at horizon: atan2 rounded to 15°, clipped to [-30, 60]."""
    deg = math.degrees(math.atan2(camera_y - target_y, max(horizontal_dist, 1e-6)))
    return int(max(-30, min(60, AGENT_HORIZON_ADJ * round(deg / AGENT_HORIZON_ADJ))))


__all__: Sequence[str] = (
    "GridNavigator",
    "Node",
    "FORWARD",
    "NAV_HORIZON",
    "agent_node",
    "grid_index",
    "ideal_horizon",
    "location_string",
    "look_actions",
    "parse_location",
    "rotation_index",
    "step_pose",
)
