"""DAgger with an aggregated dataset on a config's own model, sensors, tasks and expert.

AllenAct's on-policy DAgger (`one_phase_rgb_dagger.py`) throws each rollout away after a few
epochs, which on 2 CPU cores leaves too few updates per visited state to get past the
expert's action marginal. This module runs the same algorithm (teacher forcing beta, the
expert labels every state the learner visits, AllenAct's `Imitation` loss over BPTT through
the model's RNN) but keeps every labelled trajectory (Ross et al.'s dataset aggregation), so a
small CPU budget trains on each state many times. The model, sensors, task sampler and expert
are the experiment config's, so the weights load into `allenact --eval` and `rearrange.eval`.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

import numpy as np
import torch
from allenact.algorithms.onpolicy_sync.losses.imitation import Imitation
from allenact.base_abstractions.misc import Memory

EXPERT_UUID = "expert_action"
Preprocess = Callable[[Dict[str, torch.Tensor]], Dict[str, torch.Tensor]]


@dataclass
class Trajectory:
    """One episode as the learner saw it: model inputs, the expert's labels, actions taken."""

    obs: Dict[str, np.ndarray]  # uuid -> [T, ...] (float16 to halve memory)
    expert: np.ndarray  # [T] expert action index (0 where the expert had none)
    expert_ok: np.ndarray  # [T] 1 where the expert gave an action
    actions: np.ndarray  # [T] the action taken (the next step's prev_action)
    metrics: Dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.actions)


def initial_memory(model: torch.nn.Module, samplers: int) -> Memory:
    """Zero recurrent state shaped by the model's own memory specification."""
    mem = Memory()
    for key, (dims, dtype) in model._recurrent_memory_specification().items():
        shape = [samplers if size is None else size for _, size in dims]
        sampler_dim = [name for name, _ in dims].index("sampler")
        mem.check_append(key, torch.zeros(*shape, dtype=dtype), sampler_dim)
    return mem


def _to_step_tensors(obs: Dict[str, Any], uuids: Sequence[str]) -> Dict[str, torch.Tensor]:
    return {u: torch.as_tensor(np.asarray(obs[u], dtype=np.float32))[None, None] for u in uuids}


class PolicyRunner:
    """Steps a model through one task at a time (argmax or sampled actions); `last_inputs`
    holds the model's inputs of the last step (after `preprocess`, e.g. ResNet features)."""

    def __init__(
        self,
        model: torch.nn.Module,
        uuids: Sequence[str],
        preprocess: Optional[Preprocess] = None,
        greedy: bool = True,
        seed: int = 0,
    ) -> None:
        self.model, self.uuids, self.preprocess = model, list(uuids), preprocess
        self.greedy = greedy
        self.gen = torch.Generator().manual_seed(seed)
        self.reset()

    def reset(self) -> None:
        self.memory = initial_memory(self.model, 1)
        self.prev_action = torch.zeros(1, 1, dtype=torch.long)
        self.mask = torch.zeros(1, 1, 1)

    @torch.no_grad()
    def act(self, obs: Dict[str, Any]) -> int:
        x = _to_step_tensors(obs, self.uuids)
        if self.preprocess is not None:
            x = self.preprocess(x)
        self.last_inputs = x
        out, self.memory = self.model(x, self.memory, self.prev_action, self.mask)
        logits = out.distributions.logits[0, 0]
        if self.greedy:
            action = int(torch.argmax(logits))
        else:
            action = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=self.gen))
        self.prev_action.fill_(action)
        self.mask.fill_(1.0)
        return action

    def record_action(self, action: int) -> None:
        """The action actually executed (the expert's, under teacher forcing)."""
        self.prev_action.fill_(action)


def rollout(
    task, runner: PolicyRunner, beta: float, rng: random.Random, max_steps: Optional[int] = None
) -> Trajectory:
    """Play one task: the expert's action with probability `beta` (where it has one), else the
    learner's; every visited state keeps the expert's label. Stored are the model's inputs
    (after the runner's preprocessing), so training never recomputes frozen features."""
    runner.reset()
    obs = task.get_observations()
    frames: Dict[str, List[np.ndarray]] = {}
    expert, ok, actions = [], [], []
    while not task.is_done() and (max_steps is None or len(actions) < max_steps):
        e_act, e_ok = (int(v) for v in obs[EXPERT_UUID][:2])
        learner = runner.act(obs)
        action = e_act if e_ok and rng.random() < beta else learner
        runner.record_action(action)
        for u, v in runner.last_inputs.items():
            frames.setdefault(u, []).append(v[0, 0].numpy().astype(np.float16))
        expert.append(e_act if e_ok else 0)
        ok.append(int(e_ok))
        actions.append(action)
        obs = task.step(action).observation
    metrics = task.metrics() if task.is_done() else {}
    return Trajectory(
        {u: np.stack(v) for u, v in frames.items()},
        np.array(expert),
        np.array(ok),
        np.array(actions),
        metrics,
    )


def batch_tensors(trajs: Sequence[Trajectory]) -> Dict[str, Any]:
    """Pad trajectories to [T, N, ...]: observations (+ expert_action with its validity mask),
    prev_actions and masks (0 on each episode's first step), as AllenAct's rollout storage."""
    t_max, n = max(len(t) for t in trajs), len(trajs)
    obs = {u: torch.zeros((t_max, n) + v.shape[1:]) for u, v in trajs[0].obs.items()}
    expert = torch.zeros(t_max, n, 2, dtype=torch.long)
    prev = torch.zeros(t_max, n, dtype=torch.long)
    masks = torch.ones(t_max, n, 1)
    masks[0] = 0
    for j, t in enumerate(trajs):
        k = len(t)
        for u, v in t.obs.items():
            obs[u][:k, j] = torch.from_numpy(v.astype(np.float32))
        expert[:k, j, 0] = torch.from_numpy(t.expert)
        expert[:k, j, 1] = torch.from_numpy(t.expert_ok)
        prev[1:k, j] = torch.from_numpy(t.actions[:-1])
    return {"observations": obs, "expert_action": expert, "prev_actions": prev, "masks": masks}


def imitation_loss(
    model: torch.nn.Module,
    batch: Dict[str, Any],
    preprocess: Optional[Preprocess] = None,
    loss: Optional[Imitation] = None,
) -> torch.Tensor:
    """AllenAct's Imitation loss (mean expert cross-entropy) of the model over padded episodes."""
    obs = dict(batch["observations"])
    if preprocess is not None:
        obs = preprocess(obs)
    n = batch["masks"].shape[1]
    out, _ = model(obs, initial_memory(model, n), batch["prev_actions"], batch["masks"])
    value, _ = (loss or Imitation()).loss(
        step_count=0,
        batch={"observations": {EXPERT_UUID: batch["expert_action"]}},
        actor_critic_output=out,
    )
    return value


def train_epochs(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    data: Sequence[Trajectory],
    epochs: int,
    batch_episodes: int,
    rng: random.Random,
    preprocess: Optional[Preprocess] = None,
    max_grad_norm: float = 0.5,
) -> float:
    """`epochs` passes over `data` in shuffled mini-batches of whole episodes; mean loss of the last."""
    losses: List[float] = []
    for _ in range(epochs):
        order = list(range(len(data)))
        rng.shuffle(order)
        losses = []
        for i in range(0, len(order), batch_episodes):
            batch = batch_tensors([data[k] for k in order[i : i + batch_episodes]])
            value = imitation_loss(model, batch, preprocess)
            optimizer.zero_grad()
            value.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            optimizer.step()
            losses.append(value.item())
    return float(np.mean(losses)) if losses else float("nan")


def sampler_for(
    config,
    episodes: "OrderedDict[str, List[Dict[str, Any]]]",
    stage: str = "train",
    max_steps: Optional[int] = None,
    seed: int = 0,
):
    """The config's task sampler over exactly `episodes` (one pass); only a "train" sampler
    has the (privileged, and per step costly) expert sensor."""
    from allenact.base_abstractions.sensor import SensorSuite

    args = config.stagewise_task_sampler_args("train", 0, 1)
    args.update(
        scenes_to_task_spec_dicts=episodes,
        epochs=1,
        seed=seed,
        stage=stage,
        sensors=SensorSuite(config.sensors_for(stage)),
    )
    if max_steps is not None:
        args["max_steps"] = {"walkthrough": max_steps, "unshuffle": max_steps}
    return config.make_sampler_fn(**args)


def play_all(
    config,
    episodes,
    runner: PolicyRunner,
    beta: float,
    rng: random.Random,
    max_steps: Optional[int] = None,
    progress: Optional[Callable[[Iterable], Iterable]] = None,
) -> List[Trajectory]:
    """One rollout per episode of `episodes` (scene -> specs)."""
    sampler = sampler_for(config, episodes, max_steps=max_steps)
    out: List[Trajectory] = []
    try:
        total = int(sampler.length)
        for _ in progress(range(total)) if progress else range(total):
            task = sampler.next_task()
            if task is None:
                break
            out.append(rollout(task, runner, beta, rng, max_steps))
    finally:
        sampler.close()
    return out
