"""The navigator's kept shortest-path trees answer exactly as a fresh search would."""

from __future__ import annotations

import random

from rearrange.expert import HORIZONS, ROTATIONS, ShortestPathNavigatorTHOR


def _navigator(positions):
    nav = ShortestPathNavigatorTHOR(controller=None)
    nav.graph = nav._build_graph(positions)
    nav._graph_changed()
    return nav


def _fresh_answer(positions, removed, source, targets):
    nav = _navigator(positions)
    nav.removed_edges = set(removed)
    return nav.shortest_path_next_action(source, targets)


def test_kept_trees_match_fresh_search_after_failed_moves():
    rng = random.Random(0)
    # a 6 x 6 room with a wall segment, so removed edges change some distances and not others
    positions = [
        (round(0.25 * i, 2), round(0.25 * k, 2))
        for i in range(6)
        for k in range(6)
        if not (i == 3 and 1 <= k <= 4)
    ]
    nodes = [(x, z, r, h) for x, z in positions for r in ROTATIONS for h in HORIZONS]
    target_sets = [frozenset(rng.sample(nodes, 3)) for _ in range(3)]
    nav = _navigator(positions)
    dropped = kept = 0
    for step in range(150):
        targets = target_sets[step % 3]
        source = rng.choice(nodes)
        assert nav.shortest_path_next_action(source, targets) == _fresh_answer(
            positions, nav.removed_edges, source, targets
        )
        before = len(nav._trees)
        nav.remove_edge(source, rng.choice(["MoveAhead", "RotateLeft", "LookDown"]))
        dropped += before - len(nav._trees)
        kept += len(nav._trees)
    assert nav.removed_edges and dropped > 0 and kept > 0  # both paths of the cache ran


def test_new_node_joins_the_graph_and_is_routed():
    positions = [(0.0, 0.0), (0.0, 0.25), (0.0, 0.5)]
    nav = _navigator(positions)
    goal = frozenset({(0.0, 0.5, 0, 0)})
    assert nav.shortest_path_next_action((0.0, 0.0, 0, 0), goal) == "MoveAhead"
    assert nav._trees
    # a start cell outside the reachable grid joins the graph with its edges
    assert nav.shortest_path_next_action((0.0, -0.25, 0, 0), goal) == "MoveAhead"
    assert nav.shortest_path_next_action((0.0, 0.5, 0, 0), goal) == "Pass"
    assert nav.shortest_path_next_action((0.0, 0.0, 180, 0), goal) in ("RotateLeft", "RotateRight")
