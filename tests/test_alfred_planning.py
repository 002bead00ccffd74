"""ALFRED symbolic planning: PDDL domain/problem + Fast Downward, template planner,
symbolic executor, goal-condition counting (alfred.md §3, planning.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alfred_task.env import goal_conditions as gc
from alfred_task.planning.examples import (
    CASES,
    P,
    kitchen,
)  # the synthetic scene, shared with the benchmark
from alfred_task.planning import (
    DOMAIN_PATH,
    EXISTS_SEARCH,
    TASK_TYPES,
    HighLevelAction,
    PlannerNotFoundError,
    PlanningError,
    ProblemState,
    SceneObject as O,
    UnsolvableError,
    apply_plan,
    find_fast_downward,
    goal_reached,
    high_pddl,
    load_domain,
    make_problem,
    plan_cost,
    solve,
    template_plan,
    to_thor_metadata,
)

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "alfred" / "json_2.1.0"


def gc_of(state: ProblemState, task_type: str, params: dict) -> tuple[int, int]:
    m = to_thor_metadata(state)
    return gc.goal_conditions_met(
        task_type, params, m["objects"], m["cleaned"], m["heated"], m["cooled"], m["inventory"]
    )


def keys(plan):
    return [a.key() for a in plan]


@pytest.fixture(scope="module")
def domain() -> str:
    return load_domain()


# ------------------------------------------------------------------ planner plumbing


def test_fast_downward_found():
    driver, binary = find_fast_downward()
    assert driver.name == "fast-downward.py" and driver.is_file()
    assert binary.name == "downward" and binary.is_file()


def test_missing_planner_raises_clear_error(domain):
    with pytest.raises(PlannerNotFoundError, match="up-fast-downward"):
        solve(
            domain,
            make_problem(kitchen(), *CASES["simple"]),
            fd_driver="/nonexistent/fast-downward.py",
        )


def test_domain_file_shape():
    text = DOMAIN_PATH.read_text().lower()
    for action in (
        "gotolocation",
        "openobject",
        "closeobject",
        "pickupobjectinreceptacle",
        "pickupobjectnoreceptacle",
        "putobjectinreceptacle",
        "putobjectinreceptacleobject",
        "cleanobject",
        "heatobject",
        "coolobject",
        "toggleobjecton",
        "toggleobjectoff",
        "sliceobjectinreceptacle",
        "sliceobjectnoreceptacle",
        "reachgoalplace",
    ):
        assert f"(:action {action}\n" in text
    assert ":action-costs" in text and "total-cost" in text
    assert "- object" not in text  # item type is `item`, not PDDL's built-in object


# ------------------------------------------------------------------ per task type


@pytest.mark.parametrize("case", list(CASES))
def test_fd_and_template_plans(case, domain):
    task_type, params = CASES[case]
    st = kitchen()
    problem = make_problem(st, task_type, params)

    fd_plan = solve(
        domain, problem
    )  # how long each planner takes: benchmarks/alfred_planner_time.py
    tp_plan = template_plan(st, task_type, params)

    for plan in (fd_plan, tp_plan):
        assert plan[-1].action == "NoOp"
        assert all(a.action != "GotoLocation" or a.args for a in plan)
        end = apply_plan(st, plan)
        assert goal_reached(end, task_type, params)
        met, total = gc_of(end, task_type, params)
        assert met == total, (case, met, total, keys(plan))
        assert not any(a.action == b.action == "GotoLocation" for a, b in zip(plan, plan[1:]))

    # ALFRED's literal existential goal with planning.md's hmax config: same optimum.
    ex_plan = solve(
        domain, make_problem(st, task_type, params, goal_style="exists"), search=EXISTS_SEARCH
    )
    assert goal_reached(apply_plan(st, ex_plan), task_type, params)
    assert plan_cost(st, ex_plan) == plan_cost(st, fd_plan)

    # FD's A* is optimal, so an equivalent template plan has the same cost.
    fd_cost, tp_cost = plan_cost(st, fd_plan), plan_cost(st, tp_plan)
    assert keys(fd_plan) == keys(tp_plan) or fd_cost == tp_cost, (keys(fd_plan), keys(tp_plan))
    assert fd_cost == tp_cost
    assert sum(a.cost for a in tp_plan) == tp_cost
    assert sum(a.cost for a in fd_plan) == fd_cost

    start_met, start_total = gc_of(st, task_type, params)
    assert start_total == gc.TOTALS[task_type][1 if params["object_sliced"] else 0]
    assert start_met < start_total
    assert not goal_reached(st, task_type, params)


def test_expected_plan_shapes():
    st = kitchen()
    names = lambda c: [a.action for a in template_plan(st, *CASES[c])]  # noqa: E731
    assert names("simple") == ["GotoLocation", "PickupObject", "GotoLocation", "PutObject", "NoOp"]
    assert names("heat") == [
        "GotoLocation",
        "PickupObject",
        "GotoLocation",
        "HeatObject",
        "GotoLocation",
        "PutObject",
        "NoOp",
    ]
    assert names("look") == ["GotoLocation", "PickupObject", "GotoLocation", "ToggleObject", "NoOp"]
    assert names("heat_sliced") == [
        "GotoLocation",
        "PickupObject",
        "GotoLocation",
        "SliceObject",
        "PutObject",
        "PickupObject",
        "GotoLocation",
        "HeatObject",
        "GotoLocation",
        "PutObject",
        "NoOp",
    ]
    plan = template_plan(st, *CASES["movable"])
    assert [a.key() for a in plan] == [
        ("GotoLocation", ("countertop",)),
        ("PickupObject", ("fork",)),
        ("GotoLocation", ("cup",)),
        ("PutObject", ("fork", "cup")),
        ("PickupObject", ("cup",)),
        ("GotoLocation", ("sinkbasin",)),
        ("PutObject", ("cup", "sinkbasin")),
        ("NoOp", ()),
    ]
    hp = high_pddl(plan)
    assert hp[0]["high_idx"] == 0 and hp[0]["discrete_action"] == {
        "action": "GotoLocation",
        "args": ["countertop"],
    }
    assert hp[0]["planner_action"]["location"] == "counter1"
    assert hp[3]["planner_action"] == {
        "action": "PutObject",
        "objectId": "Fork|1",
        "receptacleObjectId": "Cup|1",
    }
    assert hp[-1]["planner_action"] == {"action": "End", "value": 1}
    json.dumps(hp)


def test_problem_contains_only_task_relevant_objects():
    st = kitchen()
    prob = make_problem(st, *CASES["simple"]).lower()
    objects = prob.split("(:objects")[1].split("(:init")[0]
    assert "i_apple_bar_1" in objects and "i_apple_bar_2" in objects
    for absent in ("potato", "knife", "pencil", "mug", "fork", "soapbar", "desklamp"):
        assert absent not in objects, absent
    for rec in ("countertop", "fridge", "microwave", "sinkbasin", "cabinet", "diningtable"):
        assert f"r_{rec}" in objects  # every fixed receptacle stays
    sliced = make_problem(st, *CASES["heat_sliced"]).lower()
    assert "i_knife_bar_1" in sliced and "potatosliced_0" in sliced
    movable = make_problem(st, *CASES["movable"]).lower().split("(:init")[0]
    assert "i_cup_bar_1" in movable and "i_fork_bar_1" in movable
    assert prob.split("(:goal")[1].strip().startswith("(goalreached)")
    assert "(taskplace)" in prob and "(targetobjecttype appletype)" in prob
    assert "(targetparenttype fridgetype)" in prob
    ex = make_problem(st, *CASES["simple"], goal_style="exists").lower()
    assert "allclosed" in ex.split("(:goal")[1] and "exists" in ex.split("(:goal")[1]
    look = make_problem(st, *CASES["look"], goal_style="exists").lower()
    assert "allclosed" not in look.split("(:goal")[1]
    with pytest.raises(ValueError):
        make_problem(st, *CASES["simple"], goal_style="nope")


def test_target_inside_movable_receptacle_is_carried(domain):
    st = kitchen()
    st.update_object("Fork|1", parent="Cup|1")
    tt, params = CASES["movable"]
    assert gc_of(st, tt, params)[0] == 1
    for plan in (template_plan(st, tt, params), solve(domain, make_problem(st, tt, params))):
        assert [a.action for a in plan] == [
            "GotoLocation",
            "PickupObject",
            "GotoLocation",
            "PutObject",
            "NoOp",
        ]
        assert plan[1].object_id == "Cup|1"
        end = apply_plan(st, plan)
        assert gc_of(end, tt, params) == (3, 3)


def test_open_receptacle_is_closed_first(domain):
    st = kitchen(agent_location="cabinet1")
    st.update_object("Cabinet|1", is_open=True)
    tt, params = CASES["simple"]
    tp = template_plan(st, tt, params)
    fd = solve(domain, make_problem(st, tt, params))
    assert tp[0].key() == ("CloseObject", ("cabinet",))
    assert "CloseObject" in [a.action for a in fd]
    assert plan_cost(st, tp) == plan_cost(st, fd)
    assert goal_reached(apply_plan(st, fd), tt, params)


def test_two_open_receptacles_rejected():
    st = kitchen()
    st.update_object("Cabinet|1", is_open=True)
    st.update_object("Fridge|1", is_open=True)
    with pytest.raises(ValueError, match="open"):
        make_problem(st, *CASES["simple"])


def test_initially_held_object_is_put_down(domain):
    st = kitchen(held="Pencil|1")
    st.update_object("Pencil|1", parent=None)
    tt, params = CASES["heat"]
    tp = template_plan(st, tt, params)
    fd = solve(domain, make_problem(st, tt, params))
    assert tp[0].action == "PutObject" or tp[1].action == "PutObject"
    for plan in (tp, fd):
        assert goal_reached(apply_plan(st, plan), tt, params)
    assert plan_cost(st, tp) == plan_cost(st, fd)


def test_held_target_is_used_directly(domain):
    st = kitchen(held="Apple|1")
    st.update_object("Apple|1", parent=None)
    tt, params = CASES["simple"]
    tp = template_plan(st, tt, params)
    assert [a.action for a in tp] == ["GotoLocation", "PutObject", "NoOp"]
    fd = solve(domain, make_problem(st, tt, params))
    assert plan_cost(st, fd) == plan_cost(st, tp)


def test_goal_already_satisfied(domain):
    st = kitchen()
    st.update_object("Apple|1", parent="Fridge|1")
    tt, params = CASES["simple"]
    assert [a.action for a in template_plan(st, tt, params)] == ["NoOp"]
    assert [a.action for a in solve(domain, make_problem(st, tt, params))] == ["NoOp"]


def test_placement_table_respected(domain):
    # The knife may not go on a CounterTop: it must be put down elsewhere after slicing.
    st = kitchen(placement={"CounterTop": {"Potato", "PotatoSliced", "Apple"}})
    tt, params = CASES["heat_sliced"]
    tp = template_plan(st, tt, params)
    fd = solve(domain, make_problem(st, tt, params))
    for plan in (tp, fd):
        end = apply_plan(st, plan)
        assert end.objects["Knife|1"].parent != "CounterTop|2"
        assert goal_reached(end, tt, params)
    assert plan_cost(st, tp) == plan_cost(st, fd)


def test_unsolvable_raises(domain):
    st = kitchen()
    del st.objects["Microwave|1"]
    tt, params = CASES["heat"]
    with pytest.raises(UnsolvableError):
        solve(domain, make_problem(st, tt, params))
    with pytest.raises(UnsolvableError):
        template_plan(st, tt, params)
    with pytest.raises(UnsolvableError):  # target class absent from the scene
        template_plan(kitchen(), "pick_and_place_simple", P("Tomato", "Fridge"))
    with pytest.raises(UnsolvableError):
        solve(domain, make_problem(kitchen(), "pick_and_place_simple", P("Tomato", "Fridge")))


def test_unsupported_search_gives_clear_error(domain):
    # ALFRED's literal existential goal becomes an FD axiom: lmcut/landmarks refuse it.
    prob = make_problem(kitchen(), *CASES["simple"], goal_style="exists")
    with pytest.raises(PlanningError, match="exit 34"):
        solve(domain, prob, search="astar(lmcut())")
    with pytest.raises(PlanningError, match="exit 34"):
        solve(domain, prob)  # DEFAULT_SEARCH needs goal_style="action"
    # goal markers (default goal_style) make lmcut usable
    plan = solve(domain, make_problem(kitchen(), *CASES["simple"]), search="astar(lmcut())")
    assert plan_cost(kitchen(), plan) == plan_cost(
        kitchen(), template_plan(kitchen(), *CASES["simple"])
    )


def test_bad_params():
    with pytest.raises(ValueError):
        make_problem(kitchen(), "pick_and_place_simple", P("Apple"))
    with pytest.raises(ValueError):
        make_problem(kitchen(), "not_a_task", P("Apple", "Fridge"))


def test_executor_rejects_invalid_steps():
    st = kitchen()
    bad = [HighLevelAction("PickupObject", ["apple"], object_id="Apple|1")]  # not there yet
    with pytest.raises(PlanningError):
        apply_plan(st, bad)
    bad = [
        HighLevelAction("GotoLocation", location="table"),
        HighLevelAction("PickupObject", ["knife"], object_id="Knife|1"),
        HighLevelAction("PickupObject", ["apple"], object_id="Apple|2"),
    ]  # hands full
    with pytest.raises(PlanningError):
        apply_plan(st, bad)


def test_all_task_types_covered():
    assert {c[0] for c in CASES.values()} == set(TASK_TYPES)


# ------------------------------------------------------------------ goal conditions


def obj(oid, pickupable=False, receptacle=False, contents=None, parents=None, **kw):
    d = {
        "objectId": oid,
        "objectType": oid.split("|")[0],
        "pickupable": pickupable,
        "receptacle": receptacle,
        "receptacleObjectIds": contents,
        "parentReceptacles": parents,
        "toggleable": False,
        "isToggled": False,
        "visible": False,
    }
    d.update(kw)
    return d


def test_gc_simple():
    p = P("Apple", "Fridge")
    apple = obj("Apple|1", pickupable=True)
    fridge_empty = obj("Fridge|1", receptacle=True, contents=[])
    fridge_full = obj("Fridge|1", receptacle=True, contents=["Apple|1"])
    assert gc.goal_conditions_met("pick_and_place_simple", p, [apple, fridge_empty]) == (0, 1)
    assert gc.goal_conditions_met("pick_and_place_simple", p, [apple, fridge_full]) == (1, 1)
    assert gc.goal_satisfied("pick_and_place_simple", p, [apple, fridge_full])
    # receptacleObjectIds None is tolerated
    assert gc.goal_conditions_met(
        "pick_and_place_simple", p, [apple, obj("Fridge|1", receptacle=True)]
    ) == (0, 1)


def test_gc_simple_sliced():
    p = P("Apple", "Fridge", sliced=True)
    whole = obj("Apple|1", pickupable=True)
    fridge = obj("Fridge|1", receptacle=True, contents=["Apple|1"])
    assert gc.goal_conditions_met("pick_and_place_simple", p, [whole, fridge]) == (0, 2)
    s = obj("Apple|1|AppleSliced_0", pickupable=True)
    assert gc.goal_conditions_met("pick_and_place_simple", p, [whole, s, fridge]) == (1, 2)
    fridge2 = obj("Fridge|1", receptacle=True, contents=["Apple|1|AppleSliced_0"])
    assert gc.goal_conditions_met("pick_and_place_simple", p, [whole, s, fridge2]) == (2, 2)


def test_gc_heat_cool_clean_need_both():
    for tt, setname in (
        ("pick_heat_then_place_in_recep", "heated_objects"),
        ("pick_cool_then_place_in_recep", "cooled_objects"),
        ("pick_clean_then_place_in_recep", "cleaned_objects"),
    ):
        p = P("Mug", "CounterTop")
        m1, m2 = obj("Mug|1", pickupable=True), obj("Mug|2", pickupable=True)
        ct = obj("CounterTop|1", receptacle=True, contents=["Mug|1"])
        f = lambda ids: gc.goal_conditions_met(tt, p, [m1, m2, ct], **{setname: ids})  # noqa
        assert f(set()) == (1, 3)  # in receptacle only
        assert f({"Mug|2"}) == (2, 3)  # a different mug was treated
        assert f({"Mug|1"}) == (3, 3)  # same object: both conditions
        assert gc.goal_satisfied(tt, p, [m1, m2, ct], **{setname: {"Mug|1"}})
        # treated but not placed
        ct0 = obj("CounterTop|1", receptacle=True, contents=[])
        assert gc.goal_conditions_met(tt, p, [m1, ct0], **{setname: {"Mug|1"}}) == (1, 3)
    # the env-side set of another task type does not count
    assert gc.goal_conditions_met(
        "pick_heat_then_place_in_recep",
        P("Mug", "CounterTop"),
        [obj("Mug|1", pickupable=True)],
        cooled_objects={"Mug|1"},
    ) == (0, 3)


def test_gc_heat_sliced():
    p = P("Potato", "SinkBasin", sliced=True)
    s = obj("Potato|1|PotatoSliced_1", pickupable=True)
    sink = obj("Sink|1|SinkBasin", receptacle=True, contents=[s["objectId"]])
    assert gc.goal_conditions_met("pick_heat_then_place_in_recep", p, [s, sink]) == (2, 4)
    assert gc.goal_conditions_met(
        "pick_heat_then_place_in_recep", p, [s, sink], heated_objects={s["objectId"]}
    ) == (4, 4)
    # heating the whole potato does not count for the slice
    assert gc.goal_conditions_met(
        "pick_heat_then_place_in_recep",
        p,
        [obj("Potato|1", pickupable=True), s, sink],
        heated_objects={"Potato|1"},
    ) == (2, 4)


def test_gc_pick_two():
    p = P("SoapBar", "Shelf")
    s1, s2 = obj("SoapBar|1", pickupable=True), obj("SoapBar|2", pickupable=True)
    sh1 = obj("Shelf|1", receptacle=True, contents=["SoapBar|1"])
    sh2 = obj("Shelf|2", receptacle=True, contents=["SoapBar|2"])
    assert gc.goal_conditions_met("pick_two_obj_and_place", p, [s1, s2, sh1, sh2]) == (1, 2)
    sh1b = obj("Shelf|1", receptacle=True, contents=["SoapBar|1", "SoapBar|2"])
    assert gc.goal_conditions_met("pick_two_obj_and_place", p, [s1, s2, sh1b, sh2]) == (2, 2)
    assert gc.goal_conditions_met("pick_two_obj_and_place", p, [s1, s2]) == (0, 2)  # no shelf
    ps = P("Apple", "Fridge", sliced=True)
    sl = [obj(f"Apple|1|AppleSliced_{k}", pickupable=True) for k in range(3)]
    fr = obj("Fridge|1", receptacle=True, contents=[sl[0]["objectId"]])
    assert gc.goal_conditions_met("pick_two_obj_and_place", ps, sl + [fr]) == (3, 4)
    fr2 = obj("Fridge|1", receptacle=True, contents=[x["objectId"] for x in sl])
    assert gc.goal_conditions_met("pick_two_obj_and_place", ps, sl + [fr2]) == (4, 4)
    assert gc.goal_conditions_met("pick_two_obj_and_place", ps, sl[:1] + [fr]) == (2, 4)


def test_gc_look():
    p = P("Pencil", toggle="DeskLamp")
    pen = obj("Pencil|1", pickupable=True)
    lamp_off = obj("DeskLamp|1", toggleable=True, isToggled=False, visible=True)
    lamp_on_far = obj("DeskLamp|1", toggleable=True, isToggled=True, visible=False)
    lamp_on = obj("DeskLamp|1", toggleable=True, isToggled=True, visible=True)
    tt = "look_at_obj_in_light"
    assert gc.goal_conditions_met(tt, p, [pen, lamp_off], inventory_objects=[]) == (0, 2)
    assert gc.goal_conditions_met(tt, p, [pen, lamp_off], inventory_objects=["Pencil|1"]) == (1, 2)
    assert gc.goal_conditions_met(
        tt, p, [pen, lamp_on_far], inventory_objects=[{"objectId": "Pencil|1"}]
    ) == (1, 2)
    assert gc.goal_satisfied(tt, p, [pen, lamp_on], inventory_objects=["Pencil|1"])
    pen_held = dict(pen, isPickedUp=True)  # inventory derived from isPickedUp
    assert gc.goal_conditions_met(tt, p, [pen_held, lamp_on]) == (2, 2)
    # holding something else
    assert gc.goal_conditions_met(
        tt, p, [pen, obj("Book|1", pickupable=True), lamp_on], inventory_objects=["Book|1"]
    ) == (1, 2)
    ps = P("Apple", toggle="FloorLamp", sliced=True)
    s = obj("Apple|1|AppleSliced_0", pickupable=True)
    fl = obj("FloorLamp|1", toggleable=True, isToggled=True, visible=True)
    assert gc.goal_conditions_met(tt, ps, [s, fl], inventory_objects=[s["objectId"]]) == (3, 3)


def test_gc_movable():
    p = P("Fork", "SinkBasin", mrecep="Cup")
    tt = "pick_and_place_with_movable_recep"
    fork = obj("Fork|1", pickupable=True)
    cup_empty = obj(
        "Cup|1", pickupable=True, receptacle=True, contents=[], parents=["Sink|1|SinkBasin"]
    )
    cup_full_loose = obj(
        "Cup|1", pickupable=True, receptacle=True, contents=["Fork|1"], parents=None
    )
    cup_full_in = obj(
        "Cup|1", pickupable=True, receptacle=True, contents=["Fork|1"], parents=["Sink|1|SinkBasin"]
    )
    sink_empty = obj("Sink|1|SinkBasin", receptacle=True, contents=[])
    sink_cup = obj("Sink|1|SinkBasin", receptacle=True, contents=["Cup|1"])
    assert gc.goal_conditions_met(tt, p, [fork, cup_full_loose, sink_empty]) == (1, 3)
    assert gc.goal_conditions_met(tt, p, [fork, cup_empty, sink_cup]) == (1, 3)
    assert gc.goal_conditions_met(tt, p, [fork, cup_full_in, sink_cup]) == (3, 3)
    # substring quirk: "Pot" as the mrecep also matches Potato (pickupable)
    pp = P("Apple", "CounterTop", mrecep="Pot")
    apple = obj("Apple|1", pickupable=True)
    potato = obj("Potato|1", pickupable=True, receptacle=False, contents=None)
    ct = obj("CounterTop|1", receptacle=True, contents=["Potato|1"])
    assert gc.goal_conditions_met(tt, pp, [apple, potato, ct]) == (1, 3)


def test_gc_substring_quirks():
    # "Knife" matches ButterKnife; "Toilet" matches ToiletPaperHanger as a parent
    p = P("Knife", "Drawer")
    bk = obj("ButterKnife|1", pickupable=True)
    dr = obj("Drawer|1", receptacle=True, contents=["ButterKnife|1"])
    assert gc.goal_satisfied("pick_and_place_simple", p, [bk, dr])
    p2 = P("ToiletPaper", "Toilet")
    tp = obj("ToiletPaper|1", pickupable=True)
    hanger = obj("ToiletPaperHanger|1", receptacle=True, contents=["ToiletPaper|1"])
    assert gc.goal_satisfied("pick_and_place_simple", p2, [tp, hanger])


# ------------------------------------------------------------------ dataset fixtures


def _fixture_paths():
    if not FIXTURES.is_dir():
        return []
    out = []
    for f in sorted(FIXTURES.rglob("traj_data.json")):
        d = json.loads(f.read_text())
        if "plan" in d and "pddl_params" in d:
            out.append(f)
    return out


def _loc_xy(loc: str) -> tuple[int, int, int]:
    _, x, z, r, _h = loc.split("|")
    return int(x), int(z), int(r)


def state_from_fixture(traj: dict) -> ProblemState:
    """Rebuild a symbolic scene from a trajectory.  pddl_params give the classes; the
    layout (which objects exist, where each interaction happens, which receptacle
    holds what) is read from the plan's planner_action fields: an object's spot is
    the GotoLocation preceding its first use, receptacles are keyed by (class, spot).
    A movable-receptacle target that the plan never touches must already be inside
    the container (the only way the plan can be valid), so it is put there."""
    pp = traj["pddl_params"]
    init = traj["scene"]["init_action"]
    start = "loc|%d|%d|%d|%d" % (
        round(init["x"] / 0.25),
        round(init["z"] / 0.25),
        round(init["rotation"] / 90) % 4,
        init["horizon"],
    )
    objs: dict[str, O] = {}
    rec_at: dict[tuple[str, str], str] = {}

    def receptacle(cls: str, loc: str, rid: str | None = None) -> str:
        key = (cls, loc)
        if key not in rec_at:
            rid = rid or f"{cls}|@{loc}"
            objs[rid] = O(
                rid,
                cls,
                location=loc,
                receptacle=True,
                openable=cls in ("Fridge", "Microwave", "Cabinet", "Drawer", "Safe"),
            )
            rec_at[key] = rid
        return rec_at[key]

    def item(oid: str, loc: str, parent: str | None) -> None:
        if oid in objs:
            return
        cls = oid.split("|")[-1].split("_")[0] if "Sliced_" in oid else oid.split("|")[0]
        objs[oid] = O(
            oid,
            cls,
            location=loc,
            parent=parent,
            pickupable=True,
            receptacle=cls in ("Bowl", "Box", "Cup", "Mug", "Plate", "Pan", "Pot"),
        )

    loc = start
    for h in traj["plan"]["high_pddl"]:
        pa, act = h["planner_action"], h["discrete_action"]["action"]
        if act == "GotoLocation":
            loc = pa["location"]
        elif act == "PickupObject":
            oid = pa["objectId"]
            crec = pa.get("coordinateReceptacleObjectId")
            parent = receptacle(crec[0], loc) if crec else None
            if "Sliced_" in oid:
                whole = oid.rsplit("|", 1)[0]
                if whole in objs and objs[whole].parent is None:
                    objs[whole].parent = parent
                continue
            item(oid, loc, parent)
        elif act == "PutObject":
            rid = pa["receptacleObjectId"]
            cls = "SinkBasin" if rid.endswith("SinkBasin") else rid.split("|")[0]
            if (
                rid.split("|")[0] in ("Bowl", "Box", "Cup", "Mug", "Plate", "Pan", "Pot")
                and rid in objs
            ):
                continue
            receptacle(cls, loc, rid)
        elif act in ("HeatObject", "CoolObject", "CleanObject"):
            rid = pa["objectId"]
            cls = "SinkBasin" if rid.endswith("SinkBasin") else rid.split("|")[0]
            receptacle(cls, loc, rid)
        elif act == "ToggleObject":
            oid = pa["objectId"]
            objs.setdefault(oid, O(oid, oid.split("|")[0], location=loc, toggleable=True))
        elif act == "SliceObject":
            oid = pa["objectId"]
            objs.setdefault(oid, O(oid, oid.split("|")[0], location=loc, pickupable=True))
    if pp.get("mrecep_target"):
        conts = [k for k, o in objs.items() if o.object_type == pp["mrecep_target"]]
        targets = [k for k, o in objs.items() if o.object_type == pp["object_target"]]
        if conts and not targets:
            oid = f"{pp['object_target']}|inside"
            objs[oid] = O(oid, pp["object_target"], parent=conts[0], pickupable=True)
    locs = {start} | {o.location for o in objs.values() if o.location}
    dist = {}
    for a in locs:
        for b in locs:
            if a != b:
                (ax, az, ar), (bx, bz, br) = _loc_xy(a), _loc_xy(b)
                dr = abs(ar - br) % 4
                dist[(a, b)] = abs(ax - bx) + abs(az - bz) + min(dr, 4 - dr) + 1
    return ProblemState(start, list(objs.values()), dist)


@pytest.mark.skipif(not _fixture_paths(), reason="ALFRED fixtures not available")
@pytest.mark.parametrize("path", _fixture_paths(), ids=lambda p: p.parent.parent.name)
def test_fixture_high_level_action_names(path):
    traj = json.loads(path.read_text())
    st = state_from_fixture(traj)
    plan = template_plan(st, traj["task_type"], traj["pddl_params"])
    ref = traj["plan"]["high_pddl"]
    got_names = [a.action for a in plan]
    ref_names = [h["discrete_action"]["action"] for h in ref]
    assert got_names == ref_names, (got_names, ref_names)
    # arguments (lower-case classes) also agree with the dataset
    assert [a.args for a in plan] == [h["discrete_action"]["args"] for h in ref]
