; ALFRED-shaped planning domain (own encoding; see alfred.md §3.2, planning.md §5).
;
; Shape follows ALFRED's put_task domain: an agent moves between abstract
; interaction locations, picks up / puts down task objects, and uses abstract
; macro actions for cleaning (sink basin), heating (microwave), cooling (fridge),
; toggling and slicing.  The low-level THOR expansion (open/close around
; pick/put, appliance on/off, ...) happens outside the planner, which is why
; PickupObject*/PutObject* do not require the receptacle to be opened.
;
; Deliberate differences from ALFRED's Metric-FF domain, so that a standard
; planner (Fast Downward) accepts it without axioms or conditional effects:
;  * the item type is called `item` (not PDDL's built-in `object`);
;  * action costs use `total-cost` (:action-costs), class constants are
;    declared in :constants;
;  * "no receptacle is open" is the 0-ary flag (allClosed) instead of a
;    universally quantified precondition (at most one receptacle can be open at
;    a time, because OpenObject itself requires allClosed);
;  * items lying in no receptacle carry the positive flag (isLoose) instead of
;    a negated universal precondition;
;  * contents of a movable receptacle (Bowl, Cup, ...) are not located
;    directly: they are reached through their container's location, so moving
;    the container needs no conditional effect;
;  * slices are explicit placeholder items (sliceOf slice whole) that appear
;    in the whole object's receptacle when it is sliced (static `when`);
;  * optional zero-cost ReachGoal* actions let a problem use the plain goal
;    (goalReached) instead of an existential one (goal_style="action");
;  * ToggleObject is split into On/Off schemas instead of a conditional flip;
;  * static guards (canPlace, canPlaceInObject) restrict placements.

(define (domain alfred_task)
  (:requirements :adl :typing :action-costs)

  (:types
    agent location receptacle item otype rtype)

  (:constants
    SinkBasinType MicrowaveType FridgeType - rtype
    KnifeType ButterKnifeType - otype)

  (:predicates
    ; locations
    (atLocation ?a - agent ?l - location)
    (receptacleAtLocation ?r - receptacle ?l - location)
    (objectAtLocation ?o - item ?l - location)
    ; containers
    (openable ?r - receptacle)
    (opened ?r - receptacle)
    (allClosed)
    (inReceptacle ?o - item ?r - receptacle)
    (isLoose ?o - item)
    (isReceptacleObject ?o - item)
    (inReceptacleObject ?o - item ?m - item)
    (canPlace ?o - item ?r - receptacle)
    (canPlaceInObject ?o - item ?m - item)
    ; class tags
    (receptacleType ?r - receptacle ?t - rtype)
    (objectType ?o - item ?t - otype)
    ; hands
    (holds ?a - agent ?o - item)
    (handEmpty ?a - agent)
    (pickupable ?o - item)
    ; affordances and states
    (cleanable ?o - item)
    (isClean ?o - item)
    (heatable ?o - item)
    (isHot ?o - item)
    (coolable ?o - item)
    (isCool ?o - item)
    (toggleable ?o - item)
    (isOn ?o - item)
    (isToggled ?o - item)
    (sliceable ?o - item)
    (isSliced ?o - item)
    (sliceOf ?s - item ?o - item)
    ; goal markers (goal_style="action")
    (goalReached)
    (taskPlace) (taskClean) (taskHeat) (taskCool) (taskTwo) (taskMovable) (taskLook)
    (targetObjectType ?t - otype)
    (targetParentType ?t - rtype)
    (targetMrecepType ?t - otype)
    (targetToggleType ?t - otype))

  (:functions
    (distance ?from - location ?to - location) - number
    (total-cost) - number)

  ;; ------------------------------------------------------------ navigation
  (:action GotoLocation
    :parameters (?a - agent ?lStart - location ?lEnd - location)
    :precondition (and (atLocation ?a ?lStart)
                       (allClosed)
                       (not (= ?lStart ?lEnd)))
    :effect (and (not (atLocation ?a ?lStart))
                 (atLocation ?a ?lEnd)
                 (increase (total-cost) (distance ?lStart ?lEnd))))

  ;; ------------------------------------------------------- open / close
  (:action OpenObject
    :parameters (?a - agent ?l - location ?r - receptacle)
    :precondition (and (atLocation ?a ?l)
                       (receptacleAtLocation ?r ?l)
                       (openable ?r)
                       (allClosed))
    :effect (and (opened ?r)
                 (not (allClosed))
                 (increase (total-cost) 1)))

  (:action CloseObject
    :parameters (?a - agent ?l - location ?r - receptacle)
    :precondition (and (atLocation ?a ?l)
                       (receptacleAtLocation ?r ?l)
                       (openable ?r)
                       (opened ?r))
    :effect (and (not (opened ?r))
                 (allClosed)
                 (increase (total-cost) 1)))

  ;; ------------------------------------------------------------ pick up
  (:action PickupObjectInReceptacle
    :parameters (?a - agent ?l - location ?o - item ?r - receptacle)
    :precondition (and (atLocation ?a ?l)
                       (objectAtLocation ?o ?l)
                       (inReceptacle ?o ?r)
                       (pickupable ?o)
                       (handEmpty ?a))
    :effect (and (not (objectAtLocation ?o ?l))
                 (not (inReceptacle ?o ?r))
                 (not (handEmpty ?a))
                 (holds ?a ?o)
                 (increase (total-cost) 1)))

  (:action PickupObjectNoReceptacle
    :parameters (?a - agent ?l - location ?o - item)
    :precondition (and (atLocation ?a ?l)
                       (objectAtLocation ?o ?l)
                       (isLoose ?o)
                       (pickupable ?o)
                       (handEmpty ?a))
    :effect (and (not (objectAtLocation ?o ?l))
                 (not (isLoose ?o))
                 (not (handEmpty ?a))
                 (holds ?a ?o)
                 (increase (total-cost) 1)))

  (:action PickupObjectInReceptacleObject
    :parameters (?a - agent ?l - location ?o - item ?m - item)
    :precondition (and (atLocation ?a ?l)
                       (objectAtLocation ?m ?l)
                       (inReceptacleObject ?o ?m)
                       (pickupable ?o)
                       (handEmpty ?a))
    :effect (and (not (inReceptacleObject ?o ?m))
                 (not (handEmpty ?a))
                 (holds ?a ?o)
                 (increase (total-cost) 1)))

  ;; ---------------------------------------------------------------- put
  ; Used for ordinary items and for movable receptacles alike: the contents of
  ; a movable receptacle stay (inReceptacleObject ?x ?o) and travel with it.
  (:action PutObjectInReceptacle
    :parameters (?a - agent ?l - location ?o - item ?r - receptacle)
    :precondition (and (atLocation ?a ?l)
                       (receptacleAtLocation ?r ?l)
                       (holds ?a ?o)
                       (canPlace ?o ?r))
    :effect (and (not (holds ?a ?o))
                 (handEmpty ?a)
                 (inReceptacle ?o ?r)
                 (objectAtLocation ?o ?l)
                 (increase (total-cost) 1)))

  (:action PutObjectInReceptacleObject
    :parameters (?a - agent ?l - location ?o - item ?m - item)
    :precondition (and (atLocation ?a ?l)
                       (objectAtLocation ?m ?l)
                       (isReceptacleObject ?m)
                       (holds ?a ?o)
                       (canPlaceInObject ?o ?m))
    :effect (and (not (holds ?a ?o))
                 (handEmpty ?a)
                 (inReceptacleObject ?o ?m)
                 (increase (total-cost) 1)))

  ;; ------------------------------------------- clean / heat / cool (macros)
  (:action CleanObject
    :parameters (?a - agent ?l - location ?r - receptacle ?o - item)
    :precondition (and (atLocation ?a ?l)
                       (receptacleAtLocation ?r ?l)
                       (receptacleType ?r SinkBasinType)
                       (holds ?a ?o)
                       (cleanable ?o))
    :effect (and (isClean ?o)
                 (increase (total-cost) 5)))

  (:action HeatObject
    :parameters (?a - agent ?l - location ?r - receptacle ?o - item)
    :precondition (and (atLocation ?a ?l)
                       (receptacleAtLocation ?r ?l)
                       (receptacleType ?r MicrowaveType)
                       (holds ?a ?o)
                       (heatable ?o))
    :effect (and (isHot ?o)
                 (increase (total-cost) 5)))

  (:action CoolObject
    :parameters (?a - agent ?l - location ?r - receptacle ?o - item)
    :precondition (and (atLocation ?a ?l)
                       (receptacleAtLocation ?r ?l)
                       (receptacleType ?r FridgeType)
                       (holds ?a ?o)
                       (coolable ?o))
    :effect (and (isCool ?o)
                 (increase (total-cost) 5)))

  ;; ------------------------------------------------------------- toggle
  (:action ToggleObjectOn
    :parameters (?a - agent ?l - location ?o - item)
    :precondition (and (atLocation ?a ?l)
                       (objectAtLocation ?o ?l)
                       (toggleable ?o)
                       (not (isOn ?o)))
    :effect (and (isOn ?o)
                 (isToggled ?o)
                 (increase (total-cost) 5)))

  (:action ToggleObjectOff
    :parameters (?a - agent ?l - location ?o - item)
    :precondition (and (atLocation ?a ?l)
                       (objectAtLocation ?o ?l)
                       (toggleable ?o)
                       (isOn ?o))
    :effect (and (not (isOn ?o))
                 (isToggled ?o)
                 (increase (total-cost) 5)))

  ;; -------------------------------------------------------------- slice
  ; The slices of ?co are placeholder items (sliceOf ?s ?co) that have no location
  ; until ?co is sliced; they then appear where ?co lies (THOR spawns the slices in
  ; the whole object's receptacle).  sliceOf is static, so FD's grounding resolves
  ; these `when` effects into plain effects (no conditional effects remain).
  (:action SliceObjectInReceptacle
    :parameters (?a - agent ?l - location ?co - item ?ko - item ?r - receptacle)
    :precondition (and (atLocation ?a ?l)
                       (objectAtLocation ?co ?l)
                       (inReceptacle ?co ?r)
                       (sliceable ?co)
                       (not (isSliced ?co))
                       (holds ?a ?ko)
                       (or (objectType ?ko KnifeType)
                           (objectType ?ko ButterKnifeType)))
    :effect (and (isSliced ?co)
                 (not (pickupable ?co))
                 (forall (?s - item)
                   (when (sliceOf ?s ?co)
                     (and (objectAtLocation ?s ?l) (inReceptacle ?s ?r))))
                 (increase (total-cost) 5)))

  (:action SliceObjectNoReceptacle
    :parameters (?a - agent ?l - location ?co - item ?ko - item)
    :precondition (and (atLocation ?a ?l)
                       (objectAtLocation ?co ?l)
                       (isLoose ?co)
                       (sliceable ?co)
                       (not (isSliced ?co))
                       (holds ?a ?ko)
                       (or (objectType ?ko KnifeType)
                           (objectType ?ko ButterKnifeType)))
    :effect (and (isSliced ?co)
                 (not (pickupable ?co))
                 (forall (?s - item)
                   (when (sliceOf ?s ?co)
                     (and (objectAtLocation ?s ?l) (isLoose ?s))))
                 (increase (total-cost) 5)))

  ;; ------------------------------------------------------- goal markers
  ; Optional, for goal_style="action" problems: one zero-cost action per ALFRED goal
  ; template sets (goalReached), so the problem goal is a plain conjunction and FD
  ; needs no axiom (axioms rule out lmcut).  Plays the role of FF's REACH-GOAL step
  ; (mapped to End/NoOp).  The task* flags and target* tags are static facts of the
  ; problem; with goal_style="exists" none is set and FD prunes these actions.
  (:action ReachGoalPlace
    :parameters (?o - item ?r - receptacle ?ot - otype ?rt - rtype)
    :precondition (and (taskPlace) (allClosed)
                       (targetObjectType ?ot) (objectType ?o ?ot)
                       (targetParentType ?rt) (receptacleType ?r ?rt)
                       (inReceptacle ?o ?r))
    :effect (goalReached))

  (:action ReachGoalPlaceClean
    :parameters (?o - item ?r - receptacle ?ot - otype ?rt - rtype)
    :precondition (and (taskClean) (allClosed)
                       (targetObjectType ?ot) (objectType ?o ?ot)
                       (targetParentType ?rt) (receptacleType ?r ?rt)
                       (isClean ?o) (inReceptacle ?o ?r))
    :effect (goalReached))

  (:action ReachGoalPlaceHot
    :parameters (?o - item ?r - receptacle ?ot - otype ?rt - rtype)
    :precondition (and (taskHeat) (allClosed)
                       (targetObjectType ?ot) (objectType ?o ?ot)
                       (targetParentType ?rt) (receptacleType ?r ?rt)
                       (isHot ?o) (inReceptacle ?o ?r))
    :effect (goalReached))

  (:action ReachGoalPlaceCool
    :parameters (?o - item ?r - receptacle ?ot - otype ?rt - rtype)
    :precondition (and (taskCool) (allClosed)
                       (targetObjectType ?ot) (objectType ?o ?ot)
                       (targetParentType ?rt) (receptacleType ?r ?rt)
                       (isCool ?o) (inReceptacle ?o ?r))
    :effect (goalReached))

  (:action ReachGoalPlaceTwo
    :parameters (?o1 - item ?o2 - item ?r - receptacle ?ot - otype ?rt - rtype)
    :precondition (and (taskTwo) (allClosed) (not (= ?o1 ?o2))
                       (targetObjectType ?ot) (objectType ?o1 ?ot) (objectType ?o2 ?ot)
                       (targetParentType ?rt) (receptacleType ?r ?rt)
                       (inReceptacle ?o1 ?r) (inReceptacle ?o2 ?r))
    :effect (goalReached))

  (:action ReachGoalPlaceMovable
    :parameters (?o - item ?m - item ?r - receptacle ?ot - otype ?mt - otype ?rt - rtype)
    :precondition (and (taskMovable) (allClosed)
                       (targetObjectType ?ot) (objectType ?o ?ot)
                       (targetMrecepType ?mt) (objectType ?m ?mt) (isReceptacleObject ?m)
                       (targetParentType ?rt) (receptacleType ?r ?rt)
                       (inReceptacleObject ?o ?m) (inReceptacle ?m ?r))
    :effect (goalReached))

  (:action ReachGoalLook
    :parameters (?a - agent ?o - item ?t - item ?l - location ?ot - otype ?tt - otype)
    :precondition (and (taskLook)
                       (targetObjectType ?ot) (objectType ?o ?ot) (holds ?a ?o)
                       (targetToggleType ?tt) (objectType ?t ?tt) (toggleable ?t)
                       (isOn ?t) (objectAtLocation ?t ?l) (atLocation ?a ?l))
    :effect (goalReached))
)
