"""Single source of truth for thor_lite's simulator constants.

Values follow AI2-THOR 5.0.0 behaviour (agent geometry, limits, object taxonomy and the
receptacle placement table), so that task code tuned against real THOR sees the same
numbers here. Facts that task code needs on either backend (placement table, standing
camera height) are defined once in `backends.thor_facts` and re-exported here.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Tuple

from backends.thor_facts import (  # noqa: F401  (re-exported for thor_lite's modules)
    AGENT_Y_OFFSET,
    CAMERA_STANDING_OFFSET,
    OBJECT_SPECIFIC_RECEPTACLES,
    ROOM_TYPE_OFFSETS,
    SCENES_PER_ROOM_TYPE,
    RECEPTACLE_ALLOWED,
    RESTRICTED_HELD_TYPES,
    SLICED_TYPE,
    ithor_scene_names,
    placement_allowed,
)

# --- agent -----------------------------------------------------------------------------
AGENT_RADIUS = 0.2
AGENT_HEIGHT = 1.8
CAMERA_CROUCH_OFFSET = 0.0
HAND_LOCAL_POSITION = (0.0, -0.16, 0.38)  # held object rest point, camera frame
# THOR 2.1.0 mode: a held object is drawn hanging from the hand, its box top at most this far
# above the hand point (a plunger, box or laptop held by its top, not its centre).
HELD_TOP_ABOVE_HAND = 0.05
MAX_UP_LOOK = 30.0
MAX_DOWN_LOOK = 60.0
CAMERA_NEAR = 0.1
CAMERA_FAR = 20.0

GRID_SIZE = 0.25  # THOR's default grid; also the fixed step of Event.pose_discrete
LAYOUT_CELL_SIZE = 0.25  # cell of the recorded reachable-grid layouts (independent of gridSize)
# A forced teleport puts the agent where THOR says it can stand (an episode's start). When our
# boxes block that cell, it and the shortest run of at most this many blocked cells joining it
# to the reachable floor become walkable (THOR's reachable grid holds every start it uses).
START_BRIDGE_CELLS = 3
# THOR 2.1.0 (ALFRED, layoutClearsMoveables) moved its agent into cells its own recorded
# layout leaves out: that layout was made with a wider body than the moving capsule, and
# furniture meshes fill less than their boxes. Off the layout the agent's body may overlap a
# furniture box by this much (real ALFRED trajectories step 1-6 cm into box footprints).
LAYOUT_MODE_BOX_OVERLAP = 0.07
# The same overlap for a trajectory recorded in THOR 2.1.0 (`thor2_rules`): off its layout the
# 316 real trajectories step 7.4-10 cm into boxes of furniture that stands where THOR stood it
# (FloorPlan30's counter, FloorPlan7/19's dining tables, FloorPlan207's shelving unit), and the
# next deeper overlaps (13-20 cm) are moveable pieces 2.1.0 stood elsewhere. 10 cm + 1 cm rounding.
THOR2_BOX_OVERLAP = 0.11
# A moveable furniture box that a recorded layout cell comes this near (m; the moving body's
# radius less that overlap) was not there, or not that big, in THOR 2.1.0, whose wider layout
# body stood there: in that mode it blocks nothing (FloorPlan16's chair, 4 cm from a cell).
MOVEABLE_LAYOUT_REACH = 0.13
# How far a counter slab reaches past the front of the cabinets and drawers under it.
COUNTER_OVERHANG = 0.03
# THOR 2.1.0 mode: a table inside a counter's box whose top is less than this below the slab
# stands at counter height on its own; the slab is open over it (shapes.open_counters_over_tables)
COUNTER_TABLE_REACH = 0.3
VISIBILITY_DISTANCE = 1.5

DEFAULT_INIT = {
    "gridSize": GRID_SIZE,
    "rotateStepDegrees": 90.0,
    "fieldOfView": 90.0,
    "visibilityDistance": VISIBILITY_DISTANCE,
    "snapToGrid": True,
    "renderDepthImage": False,
    "renderInstanceSegmentation": False,
    "renderSemanticSegmentation": False,
    "width": 300,
    "height": 300,
    "maxUpwardLookAngle": MAX_UP_LOOK,
    "maxDownwardLookAngle": MAX_DOWN_LOOK,
    "agentMode": "default",
}

# Controller kwargs that only mean something to the Unity build; accepted and ignored.
# thor_lite-only Initialize parameter: the recorded layout (THOR 2.1.0's reachable grid, the
# build ALFRED ran on) is also free of moveable furniture (chairs, side tables, ...), whose
# poses in today's scene files differ from that build's. ALFRED episodes turn it on; in that
# mode SetObjectPoses also lets an object posed inside a furniture box expose its surface.
LAYOUT_CLEARS_MOVEABLES = "layoutClearsMoveables"
THOR_ONLY_KWARGS = frozenset(
    {
        "quality",
        "fullscreen",
        "headless",
        "port",
        "start_unity",
        "local_executable_path",
        "local_build",
        "commit_id",
        "branch",
        "x_display",
        "host",
        "image_dir",
        "save_image_per_frame",
        "depth_format",
        "add_depth_noise",
        "download_only",
        "include_private_scenes",
        "server_class",
        "gpu_device",
        "platform",
        "server_timeout",
        "server_start_timeout",
        "fastActionEmit",
        "timeScale",
        "autoSimulation",
        "makeAgentsVisible",
        "cameraY",
        "renderNormalsImage",
        "renderFlowImage",
        "visibilityScheme",
        "TimeToWaitForObjectsToComeToRest",
        "agentCount",
        "continuous",
        "continuousMode",
        "renderClassImage",
        "renderObjectImage",
    }
)

# Physics kwargs that THOR accepts on most actions and that have no meaning here.
PHYSICS_KWARGS = frozenset(
    {
        "actionSimulationSeconds",
        "fixedDeltaTime",
        "autoSimulation",
        "speed",
        "returnToStart",
        "disableRendering",
        "manualInteract",
        "sequenceId",
        "renderImage",
        "agentId",
        "renderObjectImage",
        "renderClassImage",
        "renderNormalsImage",
        "renderInstanceSegmentation",
        "renderSemanticSegmentation",
        "action",
        "raise_for_failure",
        "enablePhysicsJitter",
        "forceRigidbodySleep",
        "physicsInterval",
        "ignoreAgentInTransition",
        "stopAtNonStaticCol",
        "useGripper",
        "maxAgentsDistance",
        "allowAgentsToIntersect",
        "randomMagnitude",
    }
)

# --- object taxonomy -------------------------------------------------------------------
# number of pieces a SliceObject produces (bread makes at least 7; the egg cracks into one).
SLICE_COUNT: Dict[str, int] = {
    "Apple": 4,
    "Bread": 7,
    "Lettuce": 5,
    "Potato": 4,
    "Tomato": 5,
    "Egg": 1,
}
COOKABLE_TYPES: FrozenSet[str] = frozenset({"Potato", "PotatoSliced", "BreadSliced", "EggCracked"})

# Receptacles whose contents are enclosed; PutObject needs them open.
MUST_BE_OPEN_TO_PUT: FrozenSet[str] = frozenset(
    {"Drawer", "Cabinet", "LaundryHamper", "Microwave", "Fridge", "Box"}
)
# Basins and the fixtures around them: their walls stand for bowl-shaped meshes whose rims
# are their boxes' tops, so a wall never hides what lies inside that fixture's box (THOR sees
# things its episodes rest at a basin's bottom right against the box's side).
BASIN_FIXTURES: FrozenSet[str] = frozenset({"Sink", "SinkBasin", "Bathtub", "BathtubBasin"})
# Enclosing receptacles: contents hidden when closed, all 8 corners must lie inside.
IN_RECEPTACLES: FrozenSet[str] = frozenset(
    {"Drawer", "Cabinet", "Fridge", "Microwave", "LaundryHamper", "Box", "Safe"}
)
# Open-top containers: rendered hollow so their contents stay visible.
OPEN_TOP_RECEPTACLES: FrozenSet[str] = frozenset(
    {
        "Cup",
        "Bowl",
        "GarbageCan",
        "Sink",
        "SinkBasin",
        "BathtubBasin",
        "Bathtub",
        "Pan",
        "Pot",
        "Mug",
        "Toaster",
        "LaundryHamper",
        "Box",
    }
)
# Furniture drawn as a top (seat) slab on legs: there is open space underneath. The tables'
# boxes are the AABB of the whole mesh (an L-shaped desk's covers the floor inside the L), so
# their top slabs are cut where the scene shows they cannot be (see shapes.cut_table_holes).
TABLE_TOPS: FrozenSet[str] = frozenset({"DiningTable", "CoffeeTable", "SideTable", "Desk"})
TABLE_LIKE: FrozenSet[str] = TABLE_TOPS | {"Chair", "Stool"}
# Furniture drawn as one solid box unless another piece of furniture (a shelf level, or the
# desk and dresser under a loft bed) stands inside it (shapes.open_enclosing_furniture, THOR
# 2.1.0 mode).
OPEN_FURNITURE_TYPES: FrozenSet[str] = frozenset({"TVStand", "Dresser", "Bed"})
# Drawn as THOR's mesh stands in THOR 2.1.0 mode (shapes.open_mesh_shapes): an open Box with
# its flaps up (four walls), an open Laptop as keyboard + screen (objects._laptop_parts), a
# DeskLamp with LAMP_*_THOR2.
OPEN_MESH_TYPES: FrozenSet[str] = frozenset({"Box", "Laptop", "DeskLamp"})
LAPTOP_BASE_TOP = 0.1  # the keyboard slab: this fraction of the open laptop's box height
LAPTOP_SCREEN_DEPTH = 0.2  # the screen panel: this fraction of its depth, at the back
# THOR 2.1.0 mode: a Window whose box is at least this deep (half-extent, m) along both
# horizontal axes is a corner window, drawn as the two panes on its walls' side
WINDOW_PANE_MIN_DEPTH = 0.2
# A chair's seat, as a fraction of its height, when THOR's scene puts nothing on it (THOR's
# chairs that hold things have seats from 0.39 to 0.48 of their height). THOR 2.1.0 mode
# (ALFRED): the seat is drawn as a slab through this band and things are put on its top.
# Today's scenes: a thin seat whose top is the band's lower end, drawn and rested on
# (`scene_build.default_seats`), so what an official episode rests on the real seat shows.
CHAIR_SEAT_BAND: Tuple[float, float] = (0.35, 0.5)
# A sofa's or armchair's seat, as a fraction of its height, when THOR's scene puts nothing on
# it (today's scenes): the median over the 42 sofas and armchairs of the 120 floor plans whose
# scene records contents (10th-90th percentile 0.40-0.58). Without it the seat was the top of
# the whole box, back included, and what an episode rests on the real seat was drawn inside it.
SEAT_HEIGHT_FRACTION = 0.47
SEAT_TYPES: FrozenSet[str] = frozenset({"Sofa", "ArmChair"})
# A fridge is one box here but shelves in THOR: things put in rest on the level where THOR's
# scene keeps its contents, else at this height above its bottom (the median of that level
# over the 25 kitchen fridges whose scene records contents).
FRIDGE_SHELF_HEIGHT = 0.95
# Fridge contents whose bottoms lie within this of each other rest on one shelf level
# (physics.fridge_levels; PutObject into a fridge in THOR 2.1.0 mode).
FRIDGE_LEVEL_MERGE = 0.03
# A Microwave's box holds its control panel beside the cavity and a raised floor: THOR 2.1.0
# kept things inside it (ALFRED's initial poses in 28 kitchens, 90 objects) with their bottoms
# at a median 26 % of the box height and their centres between -0.31 and +0.84 half-widths
# along the box's lateral axis (+x when the door faces +z); PutObject in THOR 2.1.0 mode places
# into that cavity (the lateral span allows for the objects' half-widths).
MICROWAVE_FLOOR = 0.26
MICROWAVE_CAVITY_X = (-0.45, 0.95)
# An open Drawer slides out of its closed box by this fraction of its depth (times openness).
DRAWER_SLIDE = 0.8
# A DeskLamp is drawn as THOR's mesh stands, not as its solid box: a base (the bottom 8 % of
# the box height, 60 % of its width), a thin stem, and the shade over the top 45 %.
LAMP_BASE_TOP = 0.08
LAMP_BASE_WIDTH = 0.6
LAMP_SHADE_BOTTOM = 0.55
# THOR 2.1.0 mode (ALFRED's recorded masks of a mug behind a tall lamp's shade and of a pencil
# beside a lamp's base run through those parts): the shade over the top 28 %, the base 45 % wide
LAMP_SHADE_BOTTOM_THOR2 = 0.72
LAMP_BASE_WIDTH_THOR2 = 0.45
# A Television is drawn as THOR's mesh stands, not as its solid box (whose depth is its stand's
# foot): a flat screen panel (TV_PANEL_DEPTH of the box depth, centred) over the top
# (1 - TV_PANEL_BOTTOM) of the box height and a narrow stand below it (TV_STAND_WIDTH of the
# width), so the top of the dresser or stand it is on shows in front of and behind it.
TV_PANEL_DEPTH = 0.25
TV_PANEL_BOTTOM = 0.12
TV_STAND_WIDTH = 0.3
# Where a CoffeeMachine holds its Mug, from THOR's own scenes (FloorPlan4/7/9/15/19 record a
# Mug in the machine): on a base 6 cm above the box bottom, centred 0.56 half-depths in front
# of the box centre along the machine's local +z. The machine is drawn with that bay open
# (front 40 % of its depth, up to 60 % of its height), so the mug is seen there as in THOR.
COFFEE_MUG_BASE = 0.06
COFFEE_MUG_FRONT = 0.56
COFFEE_BAY_BACK = 0.2  # the bay starts this many half-depths in front of the centre
COFFEE_BAY_TOP = 0.6  # fraction of the machine's height
# THOR's receptacle spawn points: a grid of this many points per side over the top of each
# trigger box, edge to edge (`Contains.GetValidSpawnPoints`, gridsize 8 -> 9 points).
THOR_SPAWN_GRID = 9
# PutObject tries these types upright only; any other type may also be laid on its side
# (tilted 90 degrees about a horizontal axis), e.g. a fork standing in a cup.
ALWAYS_PLACE_UPRIGHT: FrozenSet[str] = frozenset(
    {
        "Pot",
        "Pan",
        "Bowl",
        "Plate",
        "Bread",
        "Cup",
        "Mug",
        "Laptop",
        "SaltShaker",
        "PepperShaker",
        "AlarmClock",
        "Box",
        "SoapBottle",
        "Kettle",
        "Bottle",
        "CreditCard",
        "RemoteControl",
        "Candle",
        "SprayBottle",
        "Statue",
        "Vase",
        "KeyChain",
        "CD",
        "Book",
        "EggCracked",
        "Dumbbell",
        "TableTopDecor",
    }
)
# Receptacles that do not need to be in view for PutObject's spawn points.
PUT_ANYWHERE_RECEPTACLES: FrozenSet[str] = frozenset(
    {"Pot", "Pan", "Bowl", "GarbageCan", "Plate", "Box", "Drawer", "Mug", "Cup"}
)
# InitialRandomSpawn(forceVisible=True) only uses these receptacles.
OUTSIDE_RECEPTACLES: FrozenSet[str] = frozenset(
    {
        "DiningTable",
        "TVStand",
        "CoffeeTable",
        "SideTable",
        "Desk",
        "Dresser",
        "CounterTop",
        "Sofa",
        "Bench",
        "Bed",
        "Ottoman",
        "StoveBurner",
        "Shelf",
        "Bathtub",
        "Sink",
        "BathtubBasin",
        "SinkBasin",
        "CoffeeMachine",
        "ToiletPaperHanger",
        "Toilet",
        "Floor",
        "Chair",
        "ArmChair",
        "Footstool",
    }
)
HEAT_SOURCES: FrozenSet[str] = frozenset({"StoveBurner", "Microwave", "Toaster", "CoffeeMachine"})
COLD_SOURCES: FrozenSet[str] = frozenset({"Fridge"})
# Toggling these must happen while closed (Microwave) / they refuse to open while on.
OFF_TO_OPEN: FrozenSet[str] = frozenset({"Microwave", "Laptop"})
# Soft objects never break when dropped.
SOFT_TYPES: FrozenSet[str] = frozenset(
    {
        "TeddyBear",
        "Pillow",
        "Cloth",
        "Bread",
        "BreadSliced",
        "CreditCard",
        "ToiletPaper",
        "SoapBar",
        "Pen",
        "Pencil",
        "Towel",
        "HandTowel",
        "Watch",
        "DishSponge",
        "CD",
        "Newspaper",
        "TissueBox",
        "LettuceSliced",
        "Lettuce",
        "Boots",
        "BasketBall",
    }
)
# Drops from higher than this (metres) break fragile objects that are not unbreakable.
BREAK_DROP_HEIGHT = 0.6
# Glass-like objects that can be seen through but not interacted through.
SEE_THROUGH_TYPES: FrozenSet[str] = frozenset({"ShowerGlass", "Window", "ShowerDoor"})
# Glass set in an outer wall: the agent and every object are inside the room, so in THOR no sight
# line between them ever crosses such a pane. Its box (some are bogus metadata AABBs spanning a
# whole room corner, e.g. FloorPlan320's two windows, 2.7 m x 2.7 m) therefore never occludes.
WALL_GLASS_TYPES: FrozenSet[str] = frozenset({"Window"})
# A window holding blinds is drawn this far (m) behind them (shapes.windows_behind_hangings).
WINDOW_HANGING_GAP = 0.001
# Objects that are too flat or too high to block the agent's body.
NON_BLOCKING_TYPES: FrozenSet[str] = frozenset(
    {
        "Floor",
        "Window",
        "LightSwitch",
        "Painting",
        "Poster",
        "Mirror",
        "Curtains",
        "Blinds",
        "ShowerCurtain",
        "ShowerHead",
        "TowelHolder",
        "HandTowelHolder",
        "ToiletPaperHanger",
        "Faucet",
        "StoveKnob",
        "StoveBurner",
        "Shelf",
        "Drawer",
    }
)
# Types whose box is extended down to the floor for navigation (counters hide cabinets).
FLOOR_EXTENDED_TYPES: FrozenSet[str] = frozenset()


# THOR 2.1.0 mode (shapes.narrow_toilets): a Toilet box half wider than this is an oversized
# asset box (FloorPlan421-430: 0.56 m; 401-420: 0.27 m) and is drawn at the 401-420 asset's
# half width and half depth (0.53 x 0.97 m), front kept.
TOILET_MAX_HALF_WIDTH_THOR2 = 0.4
# THOR 2.1.0 mode (shapes.bowl_basins): a SinkBasin's (BOWL_BASIN_TYPES) side walls rise this
# fraction of its box height from its bottom. THOR's basins are bowls whose sloped walls hide
# less of the floor near the rim than a wall at the box's side up to the rim: ALFRED's soap bars
# lay 4-5 cm from a basin box's near side (their recorded pickup masks), where our full walls
# hid them and the camera-seen placement moved them 6-8 cm further in (FloorPlan419/422/428).
BASIN_WALL_HEIGHT_THOR2 = 0.7
BOWL_BASIN_TYPES: FrozenSet[str] = frozenset({"SinkBasin"})
TOILET_HALF_SIZE_THOR2 = (0.265, 0.485)

# THOR 2.1.0 mode (shapes.round_produce): round produce is drawn as three boxes crossing at its
# centre, each full length along one axis and ROUND_CORE of the box's other half-extents (a
# sphere inscribed in the box, its corners cut): on the 38 first-touch pick/slice masks of
# these types in the 316-trajectory sample the mean IoU with our drawn object is 0.45 as
# solid boxes, 0.67 at 0.47, 0.62 at 0.55, 0.59 at 0.6 (equal area with a sphere: 0.54).
ROUND_TYPES_THOR2: FrozenSet[str] = frozenset({"Apple", "Egg", "Lettuce", "Potato", "Tomato"})
ROUND_CORE = 0.6
