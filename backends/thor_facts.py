"""AI2-THOR 5.0 facts that task code relies on, whichever backend runs.

A leaf module (no imports from the simulators): the receptacle placement table, the agent and
standing camera heights, the iTHOR floor-plan numbering and the pinned THOR release. thor_lite's constants import these, so the
embedded simulator and the task packages read one definition, and a real-THOR run never
has to import thor_lite to learn them.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Tuple

# --- the pinned AI2-THOR release -------------------------------------------------------
REQUIRED_THOR_VERSION = "5.0.0"
THOR_COMMIT_ID = "a9ccb07faf771377c9ff1615bfe7e0ad01968663"

# --- agent -----------------------------------------------------------------------------
AGENT_Y_OFFSET = 0.9009992  # agent.position.y above the floor
CAMERA_STANDING_OFFSET = 0.675  # camera local y above agent.position.y when standing

# --- scenes ----------------------------------------------------------------------------
# iTHOR floor plans: FloorPlan<offset + i>, i = 1..30, per room type.
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

# --- slicing ---------------------------------------------------------------------------
# SliceObject turns a sliceable type into pieces of this type (the egg cracks instead).
SLICED_TYPE: Dict[str, str] = {
    "Apple": "AppleSliced",
    "Bread": "BreadSliced",
    "Lettuce": "LettuceSliced",
    "Potato": "PotatoSliced",
    "Tomato": "TomatoSliced",
    "Egg": "EggCracked",
}

# --- receptacles -----------------------------------------------------------------------
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

# Object-specific receptacles snap one allowed object to an attach point; holding one, they
# are full (THOR's ObjectSpecificReceptacle: "<name> is full right now").
OBJECT_SPECIFIC_RECEPTACLES: Dict[str, FrozenSet[str]] = {
    "StoveBurner": frozenset({"Pot", "Pan", "Kettle"}),
    "CoffeeMachine": frozenset({"Mug"}),
    "ToiletPaperHanger": frozenset({"ToiletPaper"}),
    "TowelHolder": frozenset({"Towel"}),
    "HandTowelHolder": frozenset({"HandTowel"}),
}


def placement_allowed(held_type: str, receptacle_type: str) -> bool:
    """THOR's ReceptacleRestrictions: may `held_type` be put on `receptacle_type`?"""
    if held_type not in RESTRICTED_HELD_TYPES:
        return True
    return held_type in RECEPTACLE_ALLOWED.get(receptacle_type, frozenset())
