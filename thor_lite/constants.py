"""Single source of truth for thor_lite's simulator constants.

Values follow AI2-THOR 5.0.0 behaviour (agent geometry, limits, object taxonomy and the
receptacle placement table), so that task code tuned against real THOR sees the same
numbers here.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Tuple

# --- agent -----------------------------------------------------------------------------
AGENT_RADIUS = 0.2
AGENT_HEIGHT = 1.8
AGENT_Y_OFFSET = 0.9009992  # agent.position.y above the floor
CAMERA_STANDING_OFFSET = 0.675  # camera local y when standing
CAMERA_CROUCH_OFFSET = 0.0
HAND_LOCAL_POSITION = (0.0, -0.16, 0.38)  # held object rest point, camera frame
MAX_UP_LOOK = 30.0
MAX_DOWN_LOOK = 60.0
CAMERA_NEAR = 0.1
CAMERA_FAR = 20.0

DEFAULT_INIT = {
    "gridSize": 0.25,
    "rotateStepDegrees": 90.0,
    "fieldOfView": 90.0,
    "visibilityDistance": 1.5,
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
THOR_ONLY_KWARGS = frozenset(
    {
        "quality", "fullscreen", "headless", "port", "start_unity", "local_executable_path",
        "local_build", "commit_id", "branch", "x_display", "host", "image_dir",
        "save_image_per_frame", "depth_format", "add_depth_noise", "download_only",
        "include_private_scenes", "server_class", "gpu_device", "platform", "server_timeout",
        "server_start_timeout", "fastActionEmit", "timeScale", "autoSimulation",
        "makeAgentsVisible", "cameraY", "renderNormalsImage", "renderFlowImage",
        "visibilityScheme", "TimeToWaitForObjectsToComeToRest", "agentCount",
        "continuous", "continuousMode", "renderClassImage", "renderObjectImage",
    }
)

# Physics kwargs that THOR accepts on most actions and that have no meaning here.
PHYSICS_KWARGS = frozenset(
    {"actionSimulationSeconds", "fixedDeltaTime", "autoSimulation", "speed",
     "returnToStart", "disableRendering", "manualInteract", "sequenceId", "renderImage",
     "agentId", "renderObjectImage", "renderClassImage", "renderNormalsImage",
     "renderInstanceSegmentation", "renderSemanticSegmentation", "action",
     "raise_for_failure", "enablePhysicsJitter", "forceRigidbodySleep", "physicsInterval",
     "ignoreAgentInTransition", "stopAtNonStaticCol", "useGripper", "maxAgentsDistance",
     "allowAgentsToIntersect", "randomMagnitude"}
)

# --- scenes ----------------------------------------------------------------------------
ROOM_TYPE_OFFSETS: Dict[str, int] = {
    "kitchens": 0,
    "living_rooms": 200,
    "bedrooms": 300,
    "bathrooms": 400,
}
SCENES_PER_ROOM_TYPE = 30


def ithor_scene_names() -> Tuple[str, ...]:
    """The 120 iTHOR floor plans, in THOR's order (kitchens, living rooms, bedrooms, baths)."""
    return tuple(
        f"FloorPlan{offset + i}"
        for offset in ROOM_TYPE_OFFSETS.values()
        for i in range(1, SCENES_PER_ROOM_TYPE + 1)
    )


# --- object taxonomy -------------------------------------------------------------------
SLICED_TYPE: Dict[str, str] = {
    "Apple": "AppleSliced",
    "Bread": "BreadSliced",
    "Lettuce": "LettuceSliced",
    "Potato": "PotatoSliced",
    "Tomato": "TomatoSliced",
    "Egg": "EggCracked",
}
# number of pieces a SliceObject produces (bread makes at least 7; the egg cracks into one).
SLICE_COUNT: Dict[str, int] = {
    "Apple": 4, "Bread": 7, "Lettuce": 5, "Potato": 4, "Tomato": 5, "Egg": 1,
}
COOKABLE_TYPES: FrozenSet[str] = frozenset(
    {"Potato", "PotatoSliced", "BreadSliced", "EggCracked"}
)

# Receptacles whose contents are enclosed; PutObject needs them open.
MUST_BE_OPEN_TO_PUT: FrozenSet[str] = frozenset(
    {"Drawer", "Cabinet", "LaundryHamper", "Microwave", "Fridge", "Box"}
)
# Enclosing receptacles: contents hidden when closed, all 8 corners must lie inside.
IN_RECEPTACLES: FrozenSet[str] = frozenset(
    {"Drawer", "Cabinet", "Fridge", "Microwave", "LaundryHamper", "Box", "Safe"}
)
# Open-top containers: rendered hollow so their contents stay visible.
OPEN_TOP_RECEPTACLES: FrozenSet[str] = frozenset(
    {"Cup", "Bowl", "GarbageCan", "Sink", "SinkBasin", "BathtubBasin", "Bathtub", "Pan",
     "Pot", "Mug", "Toaster", "LaundryHamper", "Box"}
)
# Furniture drawn as a top (seat) slab on legs: there is open space underneath.
TABLE_LIKE: FrozenSet[str] = frozenset({"DiningTable", "CoffeeTable", "SideTable", "Desk", "Chair", "Stool"})
# Object-specific receptacles snap one allowed object to an attach point.
OBJECT_SPECIFIC_RECEPTACLES: Dict[str, FrozenSet[str]] = {
    "StoveBurner": frozenset({"Pot", "Pan", "Kettle"}),
    "CoffeeMachine": frozenset({"Mug"}),
    "ToiletPaperHanger": frozenset({"ToiletPaper"}),
    "TowelHolder": frozenset({"Towel"}),
    "HandTowelHolder": frozenset({"HandTowel"}),
}
# Receptacles that do not need to be in view for PutObject's spawn points.
PUT_ANYWHERE_RECEPTACLES: FrozenSet[str] = frozenset(
    {"Pot", "Pan", "Bowl", "GarbageCan", "Plate", "Box", "Drawer", "Mug", "Cup"}
)
# InitialRandomSpawn(forceVisible=True) only uses these receptacles.
OUTSIDE_RECEPTACLES: FrozenSet[str] = frozenset(
    {"DiningTable", "TVStand", "CoffeeTable", "SideTable", "Desk", "Dresser", "CounterTop",
     "Sofa", "Bench", "Bed", "Ottoman", "StoveBurner", "Shelf", "Bathtub", "Sink",
     "BathtubBasin", "SinkBasin", "CoffeeMachine", "ToiletPaperHanger", "Toilet", "Floor",
     "Chair", "ArmChair", "Footstool"}
)
HEAT_SOURCES: FrozenSet[str] = frozenset({"StoveBurner", "Microwave", "Toaster", "CoffeeMachine"})
COLD_SOURCES: FrozenSet[str] = frozenset({"Fridge"})
# Toggling these must happen while closed (Microwave) / they refuse to open while on.
OFF_TO_OPEN: FrozenSet[str] = frozenset({"Microwave", "Laptop"})
# Soft objects never break when dropped.
SOFT_TYPES: FrozenSet[str] = frozenset(
    {"TeddyBear", "Pillow", "Cloth", "Bread", "BreadSliced", "CreditCard", "ToiletPaper",
     "SoapBar", "Pen", "Pencil", "Towel", "HandTowel", "Watch", "DishSponge", "CD",
     "Newspaper", "TissueBox", "LettuceSliced", "Lettuce", "Boots", "BasketBall"}
)
# Drops from higher than this (metres) break fragile objects that are not unbreakable.
BREAK_DROP_HEIGHT = 0.6
# Glass-like objects that can be seen through but not interacted through.
SEE_THROUGH_TYPES: FrozenSet[str] = frozenset({"ShowerGlass", "Window", "ShowerDoor"})
# Objects that are too flat or too high to block the agent's body.
NON_BLOCKING_TYPES: FrozenSet[str] = frozenset(
    {"Floor", "Window", "LightSwitch", "Painting", "Poster", "Mirror", "Curtains", "Blinds",
     "ShowerCurtain", "ShowerHead", "TowelHolder", "HandTowelHolder", "ToiletPaperHanger",
     "Faucet", "StoveKnob", "StoveBurner", "Shelf", "Drawer"}
)
# Types whose box is extended down to the floor for navigation (counters hide cabinets).
FLOOR_EXTENDED_TYPES: FrozenSet[str] = frozenset()

# PutObject placement restrictions: receptacle type -> object types allowed without
# forceAction. Held types absent from every list are unrestricted.
RECEPTACLE_ALLOWED: Dict[str, FrozenSet[str]] = {
    'ArmChair': frozenset(['BasketBall', 'Book', 'Box', 'CD', 'CellPhone', 'Cloth', 'CreditCard', 'Dumbbell', 'KeyChain', 'Laptop', 'Newspaper', 'Pillow', 'RemoteControl', 'TeddyBear']),
    'Bathtub': frozenset(['Candle', 'Cloth', 'DishSponge', 'PaperTowelRoll', 'SoapBar', 'SoapBottle', 'ToiletPaper']),
    'BathtubBasin': frozenset(['Cloth', 'DishSponge', 'SoapBar']),
    'Bed': frozenset(['BaseballBat', 'BasketBall', 'Book', 'CellPhone', 'Dumbbell', 'Laptop', 'Newspaper', 'Pillow', 'TeddyBear', 'TennisRacket']),
    'Bowl': frozenset(['Apple', 'AppleSliced', 'ButterKnife', 'DishSponge', 'Egg', 'EggCracked', 'Fork', 'Knife', 'Ladle', 'Lettuce', 'LettuceSliced', 'Potato', 'PotatoSliced', 'Spatula', 'Spoon', 'Tomato', 'TomatoSliced']),
    'Box': frozenset(['AlarmClock', 'Book', 'Bottle', 'CD', 'Candle', 'CellPhone', 'Cloth', 'CreditCard', 'DishSponge', 'KeyChain', 'Mug', 'PaperTowelRoll', 'Pen', 'Pencil', 'RemoteControl', 'Statue', 'TissueBox', 'Vase', 'Watch']),
    'Cabinet': frozenset(['AluminumFoil', 'Book', 'Bottle', 'Bowl', 'Box', 'CD', 'Candle', 'Cloth', 'Cup', 'DishSponge', 'Dumbbell', 'Kettle', 'Ladle', 'Mug', 'Newspaper', 'Pan', 'PepperShaker', 'Plate', 'Plunger', 'Pot', 'SaltShaker', 'SoapBar', 'SoapBottle', 'SprayBottle', 'TableTopDecor', 'TissueBox', 'ToiletPaper', 'Vase', 'WateringCan', 'WineBottle']),
    'Cart': frozenset(['Candle', 'Cloth', 'DishSponge', 'Mug', 'PaperTowelRoll', 'Plunger', 'SoapBar', 'SoapBottle', 'SprayBottle', 'Statue', 'TissueBox', 'ToiletPaper', 'Vase']),
    'Chair': frozenset(['AlarmClock', 'BasketBall', 'Book', 'Box', 'CD', 'Candle', 'CellPhone', 'Cloth', 'CreditCard', 'Dumbbell', 'KeyChain', 'Laptop', 'Newspaper', 'Pen', 'Pencil', 'Pillow', 'RemoteControl', 'TeddyBear', 'TennisRacket', 'TissueBox', 'ToiletPaper', 'Watch', 'WateringCan']),
    'CoffeeMachine': frozenset(['Mug']),
    'CoffeeTable': frozenset(['AlarmClock', 'AluminumFoil', 'Apple', 'AppleSliced', 'BaseballBat', 'BasketBall', 'Book', 'Bottle', 'Bowl', 'Box', 'Bread', 'BreadSliced', 'ButterKnife', 'CD', 'Candle', 'CellPhone', 'Cloth', 'CreditCard', 'Cup', 'DishSponge', 'Dumbbell', 'Egg', 'EggCracked', 'Fork', 'Kettle', 'KeyChain', 'Knife', 'Ladle', 'Laptop', 'Lettuce', 'LettuceSliced', 'Mug', 'Newspaper', 'Pan', 'PaperTowelRoll', 'Pen', 'Pencil', 'PepperShaker', 'Plate', 'Pot', 'Potato', 'PotatoSliced', 'RemoteControl', 'SaltShaker', 'SoapBar', 'SoapBottle', 'Spatula', 'Spoon', 'SprayBottle', 'Statue', 'TableTopDecor', 'TargetCircle', 'TeddyBear', 'TennisRacket', 'TissueBox', 'ToiletPaper', 'Tomato', 'TomatoSliced', 'Vase', 'Watch', 'WateringCan', 'WineBottle']),
    'CounterTop': frozenset(['AlarmClock', 'AluminumFoil', 'Apple', 'AppleSliced', 'BaseballBat', 'BasketBall', 'Book', 'Bottle', 'Bowl', 'Box', 'Bread', 'BreadSliced', 'ButterKnife', 'CD', 'Candle', 'CellPhone', 'Cloth', 'CreditCard', 'Cup', 'DishSponge', 'Dumbbell', 'Egg', 'EggCracked', 'Fork', 'Kettle', 'KeyChain', 'Knife', 'Ladle', 'Laptop', 'Lettuce', 'LettuceSliced', 'Mug', 'Newspaper', 'Pan', 'PaperTowelRoll', 'Pen', 'Pencil', 'PepperShaker', 'Plate', 'Pot', 'Potato', 'PotatoSliced', 'RemoteControl', 'SaltShaker', 'SoapBar', 'SoapBottle', 'Spatula', 'Spoon', 'SprayBottle', 'Statue', 'TableTopDecor', 'TargetCircle', 'TeddyBear', 'TennisRacket', 'TissueBox', 'ToiletPaper', 'Tomato', 'TomatoSliced', 'Vase', 'Watch', 'WateringCan', 'WineBottle']),
    'Cup': frozenset(['ButterKnife', 'Fork', 'Spoon']),
    'Desk': frozenset(['AlarmClock', 'AluminumFoil', 'Apple', 'AppleSliced', 'BaseballBat', 'BasketBall', 'Book', 'Bottle', 'Bowl', 'Box', 'Bread', 'BreadSliced', 'ButterKnife', 'CD', 'Candle', 'CellPhone', 'Cloth', 'CreditCard', 'Cup', 'Dumbbell', 'KeyChain', 'Laptop', 'Mug', 'Newspaper', 'Pen', 'Pencil', 'Plate', 'RemoteControl', 'SoapBottle', 'SprayBottle', 'Statue', 'TableTopDecor', 'TargetCircle', 'TeddyBear', 'TennisRacket', 'TissueBox', 'ToiletPaper', 'Vase', 'Watch', 'WateringCan', 'WineBottle']),
    'DiningTable': frozenset(['AlarmClock', 'AluminumFoil', 'Apple', 'AppleSliced', 'BaseballBat', 'BasketBall', 'Book', 'Bottle', 'Bowl', 'Box', 'Bread', 'BreadSliced', 'ButterKnife', 'CD', 'Candle', 'CellPhone', 'Cloth', 'CreditCard', 'Cup', 'DishSponge', 'Dumbbell', 'Egg', 'EggCracked', 'Fork', 'Kettle', 'KeyChain', 'Knife', 'Ladle', 'Laptop', 'Lettuce', 'LettuceSliced', 'Mug', 'Newspaper', 'Pan', 'PaperTowelRoll', 'Pen', 'Pencil', 'PepperShaker', 'Plate', 'Pot', 'Potato', 'PotatoSliced', 'RemoteControl', 'SaltShaker', 'SoapBar', 'SoapBottle', 'Spatula', 'Spoon', 'SprayBottle', 'Statue', 'TableTopDecor', 'TargetCircle', 'TeddyBear', 'TennisRacket', 'TissueBox', 'ToiletPaper', 'Tomato', 'TomatoSliced', 'Vase', 'Watch', 'WateringCan', 'WineBottle']),
    'Drawer': frozenset(['AluminumFoil', 'Book', 'ButterKnife', 'CD', 'Candle', 'CellPhone', 'Cloth', 'CreditCard', 'DishSponge', 'Fork', 'KeyChain', 'Knife', 'Ladle', 'Newspaper', 'Pen', 'Pencil', 'PepperShaker', 'RemoteControl', 'SaltShaker', 'SoapBar', 'SoapBottle', 'Spatula', 'Spoon', 'SprayBottle', 'TissueBox', 'ToiletPaper', 'Watch', 'WateringCan']),
    'Dresser': frozenset(['AlarmClock', 'AluminumFoil', 'Apple', 'AppleSliced', 'BasketBall', 'Book', 'Bottle', 'Bowl', 'Box', 'CD', 'Candle', 'CellPhone', 'Cloth', 'CreditCard', 'Cup', 'Dumbbell', 'KeyChain', 'Laptop', 'Mug', 'Newspaper', 'Pen', 'Pencil', 'Plate', 'RemoteControl', 'SoapBottle', 'SprayBottle', 'Statue', 'TableTopDecor', 'TargetCircle', 'TeddyBear', 'TennisRacket', 'TissueBox', 'ToiletPaper', 'Vase', 'Watch', 'WateringCan', 'WineBottle']),
    'Floor': frozenset(['BaseballBat', 'BasketBall', 'Book', 'Boots', 'Box', 'Cloth', 'Dumbbell', 'Newspaper', 'Plunger', 'TargetCircle', 'TennisRacket', 'WateringCan']),
    'Footstool': frozenset(['CD', 'CellPhone', 'Cloth', 'CreditCard', 'Dumbbell', 'Laptop', 'Newspaper', 'Pen', 'Pencil', 'RemoteControl', 'TissueBox', 'Watch']),
    'Fridge': frozenset(['Apple', 'AppleSliced', 'Bottle', 'Bowl', 'Bread', 'BreadSliced', 'Cup', 'Egg', 'EggCracked', 'Lettuce', 'LettuceSliced', 'Mug', 'Pan', 'Plate', 'Pot', 'Potato', 'PotatoSliced', 'Tomato', 'TomatoSliced', 'WineBottle']),
    'GarbageCan': frozenset(['Apple', 'AppleSliced', 'Bottle', 'Bread', 'BreadSliced', 'CD', 'Cloth', 'DishSponge', 'Egg', 'EggCracked', 'Lettuce', 'LettuceSliced', 'Newspaper', 'PaperTowelRoll', 'Pen', 'Pencil', 'Potato', 'PotatoSliced', 'SoapBar', 'SoapBottle', 'SprayBottle', 'TissueBox', 'ToiletPaper', 'Tomato', 'TomatoSliced', 'WineBottle']),
    'HandTowelHolder': frozenset(['HandTowel']),
    'LaundryHamper': frozenset(['Cloth']),
    'Microwave': frozenset(['Apple', 'AppleSliced', 'Bowl', 'Bread', 'BreadSliced', 'Cup', 'Egg', 'EggCracked', 'Mug', 'Plate', 'Potato', 'PotatoSliced']),
    'Mug': frozenset(['ButterKnife', 'Fork', 'Knife', 'Pen', 'Pencil', 'Spoon']),
    'Ottoman': frozenset(['Book', 'Box', 'CD', 'CellPhone', 'Cloth', 'CreditCard', 'KeyChain', 'Laptop', 'Newspaper', 'Pillow', 'RemoteControl', 'TeddyBear']),
    'Pan': frozenset(['Apple', 'AppleSliced', 'ButterKnife', 'DishSponge', 'Egg', 'EggCracked', 'Fork', 'Knife', 'Ladle', 'Lettuce', 'LettuceSliced', 'Potato', 'PotatoSliced', 'Spatula', 'Spoon']),
    'Plate': frozenset(['Apple', 'AppleSliced', 'Bread', 'BreadSliced', 'ButterKnife', 'DishSponge', 'Egg', 'EggCracked', 'Fork', 'Knife', 'Ladle', 'Lettuce', 'LettuceSliced', 'Mug', 'Potato', 'PotatoSliced', 'Spatula', 'Spoon', 'Tomato', 'TomatoSliced']),
    'Pot': frozenset(['Apple', 'AppleSliced', 'ButterKnife', 'DishSponge', 'Egg', 'EggCracked', 'Fork', 'Knife', 'Ladle', 'Lettuce', 'LettuceSliced', 'Potato', 'PotatoSliced', 'Spatula', 'Spoon', 'Tomato', 'TomatoSliced']),
    'Safe': frozenset(['CD', 'CellPhone', 'KeyChain', 'Statue', 'TeddyBear', 'Vase', 'Watch']),
    'Shelf': frozenset(['AlarmClock', 'AluminumFoil', 'Book', 'Bottle', 'Bowl', 'Box', 'CD', 'Candle', 'CellPhone', 'Cloth', 'CreditCard', 'Cup', 'DishSponge', 'Dumbbell', 'Kettle', 'KeyChain', 'Mug', 'Newspaper', 'PaperTowelRoll', 'Pen', 'Pencil', 'PepperShaker', 'Plate', 'Pot', 'RemoteControl', 'SaltShaker', 'SoapBar', 'SoapBottle', 'SprayBottle', 'Statue', 'TableTopDecor', 'TargetCircle', 'TissueBox', 'ToiletPaper', 'Vase', 'Watch', 'WateringCan', 'WineBottle']),
    'SideTable': frozenset(['AlarmClock', 'AluminumFoil', 'Apple', 'AppleSliced', 'BaseballBat', 'BasketBall', 'Book', 'Bottle', 'Bowl', 'Box', 'Bread', 'BreadSliced', 'ButterKnife', 'CD', 'Candle', 'CellPhone', 'Cloth', 'CreditCard', 'Cup', 'DishSponge', 'Dumbbell', 'Egg', 'EggCracked', 'Fork', 'Kettle', 'KeyChain', 'Knife', 'Ladle', 'Laptop', 'Lettuce', 'LettuceSliced', 'Mug', 'Newspaper', 'Pan', 'PaperTowelRoll', 'Pen', 'Pencil', 'PepperShaker', 'Plate', 'Pot', 'Potato', 'PotatoSliced', 'RemoteControl', 'SaltShaker', 'SoapBar', 'SoapBottle', 'Spatula', 'Spoon', 'SprayBottle', 'Statue', 'TableTopDecor', 'TargetCircle', 'TeddyBear', 'TennisRacket', 'TissueBox', 'ToiletPaper', 'Tomato', 'TomatoSliced', 'Vase', 'Watch', 'WateringCan', 'WineBottle']),
    'Sink': frozenset(['Apple', 'AppleSliced', 'Bottle', 'Bowl', 'ButterKnife', 'Cloth', 'Cup', 'DishSponge', 'Egg', 'EggCracked', 'Fork', 'Kettle', 'Knife', 'Ladle', 'Lettuce', 'LettuceSliced', 'Mug', 'Pan', 'Plate', 'Pot', 'Potato', 'PotatoSliced', 'SoapBar', 'SoapBottle', 'Spatula', 'Spoon', 'Tomato', 'TomatoSliced']),
    'SinkBasin': frozenset(['Apple', 'AppleSliced', 'Bottle', 'Bowl', 'ButterKnife', 'Cloth', 'Cup', 'DishSponge', 'Egg', 'EggCracked', 'Fork', 'Kettle', 'Knife', 'Ladle', 'Lettuce', 'LettuceSliced', 'Mug', 'Pan', 'Plate', 'Pot', 'Potato', 'PotatoSliced', 'SoapBar', 'Spatula', 'Spoon', 'Tomato', 'TomatoSliced']),
    'Sofa': frozenset(['BasketBall', 'Book', 'Box', 'CD', 'CellPhone', 'Cloth', 'CreditCard', 'Dumbbell', 'KeyChain', 'Laptop', 'Newspaper', 'Pillow', 'RemoteControl', 'TeddyBear']),
    'Stool': frozenset(['AlarmClock', 'BasketBall', 'Book', 'Box', 'CD', 'Candle', 'CellPhone', 'Cloth', 'CreditCard', 'Dumbbell', 'KeyChain', 'Laptop', 'Newspaper', 'Pen', 'Pencil', 'Pillow', 'RemoteControl', 'TeddyBear', 'TennisRacket', 'TissueBox', 'ToiletPaper', 'Watch', 'WateringCan']),
    'StoveBurner': frozenset(['Kettle', 'Pan', 'Pot']),
    'TVStand': frozenset(['AlarmClock', 'AluminumFoil', 'Apple', 'AppleSliced', 'BaseballBat', 'BasketBall', 'Book', 'Bottle', 'Bowl', 'Box', 'Bread', 'BreadSliced', 'ButterKnife', 'CD', 'Candle', 'CellPhone', 'Cloth', 'CreditCard', 'Cup', 'DishSponge', 'Dumbbell', 'Egg', 'EggCracked', 'Fork', 'Kettle', 'KeyChain', 'Knife', 'Ladle', 'Laptop', 'Lettuce', 'LettuceSliced', 'Mug', 'Newspaper', 'Pan', 'PaperTowelRoll', 'Pen', 'Pencil', 'PepperShaker', 'Plate', 'Pot', 'Potato', 'PotatoSliced', 'RemoteControl', 'SaltShaker', 'SoapBar', 'SoapBottle', 'Spatula', 'Spoon', 'SprayBottle', 'Statue', 'TableTopDecor', 'TargetCircle', 'TeddyBear', 'TennisRacket', 'TissueBox', 'ToiletPaper', 'Tomato', 'TomatoSliced', 'Vase', 'Watch', 'WateringCan', 'WineBottle']),
    'Toaster': frozenset(['BreadSliced']),
    'Toilet': frozenset(['Candle', 'Cloth', 'DishSponge', 'Newspaper', 'PaperTowelRoll', 'SoapBar', 'SoapBottle', 'SprayBottle', 'TissueBox', 'ToiletPaper']),
    'ToiletPaperHanger': frozenset(['ToiletPaper']),
    'TowelHolder': frozenset(['Towel']),
}
RESTRICTED_HELD_TYPES: FrozenSet[str] = frozenset(
    t for allowed in RECEPTACLE_ALLOWED.values() for t in allowed
)


def placement_allowed(held_type: str, receptacle_type: str) -> bool:
    """THOR's ReceptacleRestrictions: may `held_type` be put on `receptacle_type`?"""
    if held_type not in RESTRICTED_HELD_TYPES:
        return True
    return held_type in RECEPTACLE_ALLOWED.get(receptacle_type, frozenset())
