"""Deterministic templated language for synthetic ALFRED demonstrations.

Real ALFRED trajectories carry crowd-sourced ``turk_annotations``; the demonstrations we
generate have none, so this module writes stand-ins with the same shape: one goal sentence
(``task_desc``) and one instruction per non-End subgoal (``high_descs``).  Goals stay
abstract (what, never how to get there); step instructions add what the goal lacks: the
walking path taken, landmarks near the destination and where an object lies.  All wording
is our own, and the only randomness is a per-annotation ``random.Random`` so identical
inputs always give identical text.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from alfred_task import constants as C

__all__ = ["SubgoalContext", "humanize", "describe_path", "make_annotations"]


@dataclass(frozen=True)
class SubgoalContext:
    """What the generator knows about one high-level subgoal beyond its name/args."""

    high_idx: int
    nav_actions: tuple[str, ...] = ()
    landmarks: tuple[str, ...] = ()
    target_receptacle: str | None = None


# --------------------------------------------------------------------------- naming
# Object types that the constants' receptacle/affordance sets do not already cover; only
# needed so lower-case planner args ("spraybottle") map back to a CamelCase type.
_EXTRA_TYPES = (
    "AlarmClock",
    "AluminumFoil",
    "BaseballBat",
    "BasketBall",
    "Bathtub",
    "Blinds",
    "Book",
    "Boots",
    "Bottle",
    "Candle",
    "CD",
    "CellPhone",
    "Chair",
    "CreditCard",
    "Curtains",
    "DeskLamp",
    "Dumbbell",
    "Faucet",
    "FloorLamp",
    "Footstool",
    "GarbageBag",
    "Glassbottle",
    "HandTowel",
    "HousePlant",
    "KeyChain",
    "Lamp",
    "Laptop",
    "LightSwitch",
    "Newspaper",
    "Painting",
    "PaperTowelRoll",
    "Pen",
    "Pencil",
    "PepperShaker",
    "Pillow",
    "Plunger",
    "Poster",
    "RemoteControl",
    "RoomDecor",
    "SaltShaker",
    "ScrubBrush",
    "ShowerCurtain",
    "ShowerDoor",
    "ShowerGlass",
    "ShowerHead",
    "Sink",
    "SoapBottle",
    "SprayBottle",
    "Statue",
    "Stool",
    "TableTopDecor",
    "TeddyBear",
    "Television",
    "TennisRacket",
    "TissueBox",
    "ToiletPaper",
    "ToiletPaperRoll",
    "Towel",
    "Vase",
    "Watch",
    "WateringCan",
    "Window",
    "WineBottle",
)
_KNOWN_TYPES = frozenset(_EXTRA_TYPES).union(
    C.RECEPTACLE_CLASSES,
    C.COOLABLE,
    C.CLEANABLE,
    C.TOGGLEABLE,
    C.SLICEABLE,
    C.KNIVES,
    C.OPENABLE_CLASS_LIST,
    C.MOVABLE_RECEPTACLES,
    *C.VAL_RECEPTACLE_OBJECTS_KNOWN.values(),
)
_LOWER_TO_TYPE = {t.lower(): t for t in _KNOWN_TYPES}

# Types whose generic CamelCase split reads badly.
_NAME_OVERRIDES = {
    "CounterTop": "counter",
    "SinkBasin": "sink",
    "BathtubBasin": "bathtub",
    "StoveBurner": "stove",
    "ToiletPaperHanger": "toilet paper holder",
    "ArmChair": "armchair",
    "GarbageCan": "trash can",
    "EggCracked": "cracked egg",
    "Glassbottle": "glass bottle",
    "TVStand": "tv stand",
    "BasketBall": "basketball",
}
_MASS_NOUNS = frozenset({"bread", "lettuce"})  # read better with "some" than "a"
_IN_TYPES = frozenset(
    {
        "Fridge",
        "Microwave",
        "Drawer",
        "Cabinet",
        "Box",
        "Safe",
        "GarbageCan",
        "SinkBasin",
        "Sink",
        "BathtubBasin",
        "Bathtub",
        "Bowl",
        "Cup",
        "Mug",
        "Pot",
        "Pan",
        "LaundryHamper",
        "Toaster",
    }
)
_SKIP_LANDMARKS = frozenset({"Floor", "Wall", "Ceiling"})
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+|\d+")


def humanize(object_type: str) -> str:
    """Turn a THOR type ("CounterTop", "AppleSliced") into the words a person would use."""
    if object_type in _NAME_OVERRIDES:
        return _NAME_OVERRIDES[object_type]
    if object_type.endswith("Sliced") and len(object_type) > len("Sliced"):
        return f"{humanize(object_type[: -len('Sliced')])} slice"
    words = _CAMEL.findall(object_type)
    return " ".join(words).lower() if words else object_type.lower()


def _plural(phrase: str) -> str:
    """Pluralise the head noun (the word before " of ", else the last word)."""
    head, sep, tail = phrase.partition(" of ")
    words = head.split(" ")
    w = words[-1]
    if w.endswith("fe"):
        w = w[:-2] + "ves"
    elif w.endswith("f") and not w.endswith("ff"):
        w = w[:-1] + "ves"
    elif w.endswith(("s", "x", "ch", "sh")) or w in ("potato", "tomato"):
        w += "es"
    elif w.endswith("y") and len(w) > 1 and w[-2] not in "aeiou":
        w = w[:-1] + "ies"
    else:
        w += "s"
    return " ".join(words[:-1] + [w]) + sep + tail


def _a(phrase: str) -> str:
    """Indefinite article (or "some" for mass nouns) in front of a noun phrase."""
    if phrase.split(" ")[0] in _MASS_NOUNS:
        return f"some {phrase}"
    return f"{'an' if phrase[:1] in 'aeiou' else 'a'} {phrase}"


def _prep(type_name: str | None) -> str:
    return "in" if type_name in _IN_TYPES else "on"


def _sentence(text: str) -> str:
    """Normalise spacing, capitalise, and end with exactly one period."""
    text = re.sub(r"\s+", " ", text).strip().rstrip(".,;: ")
    text = re.sub(r"\s+([,.;:])", r"\1", text)
    return text[:1].upper() + text[1:] + "."


# --------------------------------------------------------------------------- paths
_NUMBER_WORDS = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
)


def _distance(moves: int) -> str:
    """Words for `moves` forward steps of AGENT_STEP_SIZE (0.25 m) each."""
    if moves == 1:
        return "take a step forward"
    if moves <= 3:
        return "take a few steps forward"
    halves = int(moves * C.AGENT_STEP_SIZE * 2 + 0.5)  # nearest half metre, half up
    whole, half = divmod(halves, 2)
    if whole == 1 and not half:
        return "walk forward about a meter"
    num = _NUMBER_WORDS[whole] if whole < len(_NUMBER_WORDS) else str(whole)
    return f"walk forward about {num}{' and a half' if half else ''} meters"


def describe_path(nav_actions: Sequence[str]) -> str:
    """Summarise low-level navigation as a short route ("turn left, walk ..., then ...").

    Consecutive rotations merge into their net turn, consecutive MoveAhead steps into one
    distance; Look* and interaction actions carry no route information and are skipped.
    """
    segments: list[str] = []
    turn = moves = 0  # net quarter turns to the left, pending forward steps

    def flush_turn() -> None:
        nonlocal turn
        word = {1: "turn left", 2: "turn around", 3: "turn right"}.get(turn % 4)
        if word:
            segments.append(word)
        turn = 0

    def flush_moves() -> None:
        nonlocal moves
        if moves:
            segments.append(_distance(moves))
        moves = 0

    for action in nav_actions:
        if action.startswith("MoveAhead"):
            flush_turn()
            moves += 1
        elif action.startswith(("RotateLeft", "RotateRight")):
            flush_moves()
            turn += 1 if action.startswith("RotateLeft") else -1
        elif action.startswith("Look") or action in C.LOW_ACTION_SET:
            continue
        else:
            raise ValueError(f"unknown navigation action {action!r}")
    flush_turn()
    flush_moves()
    if len(segments) <= 1:
        return "".join(segments)
    if len(segments) == 2:
        return f"{segments[0]} and {segments[1]}"
    return ", ".join(segments[:-1]) + ", then " + segments[-1]


# --------------------------------------------------------------------------- goals
# Placeholders: a_obj/the_obj/objs (object), recep/a_recep + prep, a_mrecep/mprep, lamp/a_lamp.
_GOALS: dict[str, tuple[str, ...]] = {
    "pick_and_place_simple": (
        "Put {a_obj} {prep} the {recep}",
        "Place {a_obj} {prep} {a_recep}",
        "Move {a_obj} to the {recep}",
        "Get {a_obj} and leave it {prep} the {recep}",
    ),
    "look_at_obj_in_light": (
        "Examine {a_obj} under the light of {a_lamp}",
        "Look at {the_obj} by the {lamp}'s light",
        "Pick up {a_obj} and switch on the {lamp}",
        "Inspect {a_obj} with {a_lamp} switched on",
    ),
    "pick_clean_then_place_in_recep": (
        "Put a clean {obj} {prep} the {recep}",
        "Wash {a_obj} and place it {prep} the {recep}",
        "Rinse off {a_obj}, then put it {prep} {a_recep}",
        "Place a washed {obj} {prep} the {recep}",
    ),
    "pick_heat_then_place_in_recep": (
        "Put a heated {obj} {prep} the {recep}",
        "Heat up {a_obj}, then place it {prep} the {recep}",
        "Warm {a_obj} in the microwave and put it {prep} the {recep}",
        "Place a hot {obj} {prep} {a_recep}",
    ),
    "pick_cool_then_place_in_recep": (
        "Put a chilled {obj} {prep} the {recep}",
        "Place a cold {obj} {prep} {a_recep}",
        "Cool {a_obj} in the fridge and place it {prep} the {recep}",
        "Chill {a_obj}, then set it {prep} the {recep}",
    ),
    "pick_two_obj_and_place": (
        "Put two {objs} {prep} the {recep}",
        "Place a pair of {objs} {prep} {a_recep}",
        "Find two {objs} and put them {prep} the {recep}",
        "Move two {objs} to the {recep}",
    ),
    "pick_and_place_with_movable_recep": (
        "Put {a_obj} {mprep} {a_mrecep} and move it to the {recep}",
        "Place {a_mrecep} holding {a_obj} {prep} the {recep}",
        "Carry {a_obj} inside {a_mrecep} over to the {recep}",
        "Put {a_mrecep} with {a_obj} {mprep} it {prep} the {recep}",
    ),
}
assert set(_GOALS) == C.TASK_TYPE_SET, "every task type needs goal templates"
_NEEDS = {  # pddl_params each task type's goal must name
    "look_at_obj_in_light": ("object_target", "toggle_target"),
    "pick_and_place_with_movable_recep": ("object_target", "mrecep_target", "parent_target"),
}


def _object_phrases(target: str, sliced: bool) -> list[tuple[str, str]]:
    """(singular, plural) phrasings of the goal object; slices get two wordings."""
    base = humanize(target)
    if sliced:
        return [
            (f"slice of {base}", f"slices of {base}"),
            (f"sliced {base}", f"pieces of sliced {base}"),
        ]
    return [(base, _plural(base))]


def _goal_candidates(task_type: str, params: Mapping) -> list[str]:
    """Every goal sentence the templates allow for this demo, in a fixed order."""
    target = str(params.get("object_target") or "")
    sliced = bool(params.get("object_sliced"))
    if target.endswith("Sliced"):
        target, sliced = target[: -len("Sliced")], True
    for key in _NEEDS.get(task_type, ("object_target", "parent_target")):
        if not params.get(key):
            raise ValueError(f"pddl_params[{key!r}] is required for task type {task_type!r}")
    recep, mrecep, lamp = (
        str(params.get(k) or "") for k in ("parent_target", "mrecep_target", "toggle_target")
    )
    out = []
    for obj, objs in _object_phrases(target, sliced):
        fields = dict(
            obj=obj,
            a_obj=_a(obj),
            the_obj=f"the {obj}",
            objs=objs,
            recep=humanize(recep),
            a_recep=_a(humanize(recep)),
            prep=_prep(recep),
            a_mrecep=_a(humanize(mrecep)),
            mprep=_prep(mrecep),
            lamp=humanize(lamp),
            a_lamp=_a(humanize(lamp)),
        )
        out.extend(_sentence(t.format(**fields)) for t in _GOALS[task_type])
    return out


# --------------------------------------------------------------------------- steps
@dataclass
class _State:
    """Running facts while walking the plan (what is sliced, held, where we went)."""

    target: str
    sliced_target: bool
    mrecep: str
    obj_in_mrecep: bool
    slice_word: Callable[[str], str]
    last_goto: str | None = None
    knife: str = "knife"


def _resolve(arg: str, lookup: Mapping[str, str]) -> str | None:
    return lookup.get(arg.lower()) or (arg if arg[:1].isupper() else None)


def _steps(
    task_type: str,
    params: Mapping,
    subgoals: Sequence[Mapping],
    contexts: Sequence[SubgoalContext],
    rng: random.Random,
) -> list[str]:
    """One instruction per non-End subgoal, phrasing picked with `rng`."""
    lookup = dict(_LOWER_TO_TYPE)
    for key in ("object_target", "parent_target", "toggle_target", "mrecep_target"):
        if params.get(key):
            lookup[str(params[key]).lower()] = str(params[key])
    target = str(params.get("object_target") or "")
    slice_style = rng.choice(("{} slice", "slice of {}"))
    st = _State(
        target=target.lower(),
        sliced_target=False,
        mrecep=str(params.get("mrecep_target") or ""),
        obj_in_mrecep=False,
        slice_word=slice_style.format,
    )
    # Movable-receptacle demos whose plan never picks the object start with it already inside.
    picks = {
        (s["discrete_action"].get("args") or [""])[0]
        for s in subgoals
        if s["discrete_action"]["action"] == "PickupObject"
    }
    st.obj_in_mrecep = task_type == "pick_and_place_with_movable_recep" and st.target not in picks

    def noun(i: int, pos: int = 0) -> tuple[str | None, str]:
        args = subgoals[i]["discrete_action"].get("args") or []
        if pos >= len(args):
            return None, "object"
        arg = str(args[pos])
        t = _resolve(arg, lookup)
        word = humanize(t) if t else arg.lower()
        if st.sliced_target and arg.lower() == st.target:
            word = st.slice_word(humanize(lookup.get(st.target, st.target)))
        return t, word

    out = []
    for i, (sub, ctx) in enumerate(zip(subgoals, contexts)):
        action = sub["discrete_action"]["action"]
        t, w = noun(i)
        if action == "GotoLocation":
            if not sub["discrete_action"].get("args") and i + 1 < len(subgoals):
                nxt = subgoals[i + 1]["discrete_action"]
                t, w = noun(i + 1, 1 if nxt["action"] == "PutObject" else 0)
            st.last_goto = w
            marks = [
                m
                for m in ctx.landmarks
                if m not in _SKIP_LANDMARKS and m.lower() != (t or w).lower() and humanize(m) != w
            ]
            near = (
                f", {rng.choice(('near', 'next to', 'by'))} the {humanize(marks[0])}"
                if marks
                else ""
            )
            path = describe_path(ctx.nav_actions)
            if path:
                tmpl = rng.choice(
                    (
                        "{path} to reach the {dest}{near}",
                        "{path}, ending up at the {dest}{near}",
                        "Head for the {dest}{near}: {path}",
                        "{path} and stop at the {dest}{near}",
                    )
                )
            else:
                tmpl = rng.choice(
                    (
                        "Face the {dest}{near}",
                        "Go to the {dest}{near}",
                        "Stay put and look at the {dest}{near}",
                    )
                )
            out.append(tmpl.format(path=path, dest=w, near=near))
        elif action == "PickupObject":
            extra = ""
            if t == st.mrecep and st.mrecep and st.obj_in_mrecep:
                extra = f" with the {humanize(lookup.get(st.target, st.target))} {_prep(t)} it"
            elif ctx.target_receptacle and ctx.target_receptacle.lower() != (t or w).lower():
                r = ctx.target_receptacle
                extra = rng.choice(
                    (f" from the {humanize(r)}", f" that is {_prep(r)} the {humanize(r)}")
                )
            if t in C.KNIVES:
                st.knife = w
            verb = rng.choice(("Pick up", "Grab", "Take"))
            out.append(f"{verb} the {w}{extra}")
        elif action == "PutObject":
            rt, rw = noun(i, 1)
            if st.mrecep and t == st.mrecep and st.obj_in_mrecep:
                w = f"{w} {rng.choice(('holding', 'with'))} the {humanize(lookup.get(st.target, st.target))}"
            elif (
                st.mrecep
                and rt == st.mrecep
                and sub["discrete_action"]["args"][0].lower() == st.target
            ):
                st.obj_in_mrecep = True
            verb = rng.choice(
                ("Put the {o} {p} the {r}", "Place the {o} {p} the {r}", "Set the {o} {p} the {r}")
            )
            out.append(verb.format(o=w, p=_prep(rt), r=rw))
        elif action == "OpenObject":
            out.append(rng.choice(("Open the {}", "Pull the {} open", "Open up the {}")).format(w))
        elif action == "CloseObject":
            out.append(rng.choice(("Close the {}", "Shut the {}", "Push the {} closed")).format(w))
        elif action == "ToggleObject":
            out.append(
                rng.choice(("Switch on the {}", "Switch the {} on", "Turn on the {}")).format(w)
            )
        elif action == "SliceObject":
            out.append(
                rng.choice(
                    ("Slice the {w}", "Cut the {w} into slices", "Use the {k} to slice the {w}")
                ).format(w=w, k=st.knife)
            )
            if (sub["discrete_action"].get("args") or [""])[0].lower() == st.target:
                st.sliced_target = True
        elif action in ("CleanObject", "HeatObject", "CoolObject"):
            default = {"CleanObject": "sink", "HeatObject": "microwave", "CoolObject": "fridge"}[
                action
            ]
            loc = st.last_goto or default
            out.append(
                rng.choice(
                    {
                        "CleanObject": (
                            "Rinse the {w} in the {l}",
                            "Wash the {w} in the {l} and take it out",
                            "Clean the {w} under the faucet of the {l}",
                        ),
                        "HeatObject": (
                            "Heat the {w} in the {l}",
                            "Warm the {w} up in the {l}, then take it out",
                            "Cook the {w} in the {l} and remove it",
                        ),
                        "CoolObject": (
                            "Chill the {w} in the {l}",
                            "Cool the {w} in the {l}, then take it out",
                            "Leave the {w} in the {l} to cool, then remove it",
                        ),
                    }[action]
                ).format(w=w, l=loc)
            )
        else:  # validated by the caller; kept so a new action cannot pass silently
            raise ValueError(f"unknown high-level action {action!r}")
    return [_sentence(s) for s in out]


# --------------------------------------------------------------------------- public
def make_annotations(
    task_type: str,
    pddl_params: Mapping,
    high_pddl: Sequence[Mapping],
    contexts: Sequence[SubgoalContext],
    seed: int,
    n: int = 3,
) -> list[dict]:
    """Build `n` distinct turk_annotations-shaped dicts for one demonstration.

    One high_desc per subgoal except a trailing End (NoOp), matching real ALFRED.  The k-th
    annotation draws only from ``random.Random(f"{seed}:{k}")`` so output is reproducible.
    """
    if task_type not in C.TASK_TYPE_SET:
        raise ValueError(f"unknown task_type {task_type!r}; expected one of {C.TASK_TYPES}")
    for sub in high_pddl:
        action = sub["discrete_action"]["action"]
        if action not in C.HIGH_ACTION_SET:
            raise ValueError(f"unknown high-level action {action!r}")
    subgoals = list(high_pddl)
    if subgoals and subgoals[-1]["discrete_action"]["action"] == C.END_HIGH_ACTION:
        subgoals.pop()
    if any(s["discrete_action"]["action"] == C.END_HIGH_ACTION for s in subgoals):
        raise ValueError("a NoOp (End) subgoal may only appear last in high_pddl")
    if not contexts:
        contexts = [
            SubgoalContext(high_idx=int(s.get("high_idx", i))) for i, s in enumerate(subgoals)
        ]
    if len(contexts) != len(subgoals):
        raise ValueError(f"got {len(contexts)} contexts for {len(subgoals)} non-End subgoals")
    for i, (s, ctx) in enumerate(zip(subgoals, contexts)):
        if ctx.high_idx != int(s.get("high_idx", i)):
            raise ValueError(
                f"context {i} has high_idx {ctx.high_idx}, subgoal has {s.get('high_idx', i)}"
            )
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")

    goals = _goal_candidates(task_type, pddl_params)
    anns: list[dict] = []
    seen: set[tuple] = set()
    for k in range(n):
        rng = random.Random(f"{seed}:{k}")
        used = {a["task_desc"] for a in anns}
        order = rng.sample(range(len(goals)), len(goals))
        goal = next((goals[j] for j in order if goals[j] not in used), goals[order[0]])
        steps = _steps(task_type, pddl_params, subgoals, contexts, rng)
        for _ in range(20):  # goal repeats only when templates ran out; vary the steps instead
            if (goal, tuple(steps)) not in seen:
                break
            steps = _steps(task_type, pddl_params, subgoals, contexts, rng)
        seen.add((goal, tuple(steps)))
        anns.append(
            {
                "task_desc": goal,
                "high_descs": steps,
                "votes": [1, 1, 1],
                "assignment_id": f"synthetic_{seed}_{k}",
            }
        )
    return anns
