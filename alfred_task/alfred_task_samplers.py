"""The AllenAct task sampler for ALFRED: episodes over the entries of an ALFRED split file.

Why its own module: AllenAct plugins keep tasks (`alfred_tasks`), samplers and sensors apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Mapping, Optional, Sequence, Union

import numpy as np
from allenact.base_abstractions.sensor import Sensor
from allenact.base_abstractions.task import TaskSampler

from backends import DEFAULT_BACKEND

from alfred_task import constants as C
from alfred_task.alfred_tasks import AlfredOnlineTask
from alfred_task.env.environment import AlfredEnv
from alfred_task.data.il_dataset import read_traj_json, resolve_vocab
from alfred_task.data.preprocess import preprocess_traj
from alfred_task.data.traj_data import load_split_file


class AlfredTaskSampler(TaskSampler):
    """Episodes over the (trajectory, annotation) entries of an ALFRED split file.

    Training (``deterministic=False``) cycles forever through seeded reshuffles; evaluation
    visits every entry once, in file order, then returns None (AllenAct's end of an eval set).
    Several samplers: give each its slice, ``entries=all_entries[i::n]``, and its own seed.
    `vocab`: an AlfredVocab, a ``pp.vocab`` path (``python -m alfred_task.data.preprocess`` writes
    one; cheapest when many samplers start) or None (built from every split, as the IL dataset
    does, so both agree on the word ids).
    """

    def __init__(
        self,
        data_root: str,
        splits: Union[str, Mapping[str, Sequence[Any]]],
        split: str,
        sensors: Sequence[Sensor],
        vocab: Any = None,
        max_steps: int = C.MAX_STEPS,
        seed: int = 0,
        deterministic: bool = False,
        backend: str = DEFAULT_BACKEND,
        planner: str = "template",
        entries: Optional[Sequence[Any]] = None,
        env: Optional[AlfredEnv] = None,
        **kwargs: Any,
    ) -> None:
        self.data_root = Path(data_root)
        all_splits = dict(splits) if isinstance(splits, Mapping) else load_split_file(splits)
        if split not in all_splits:
            raise ValueError(f"split {split!r} is not in the split file (has {sorted(all_splits)})")
        self.split, self.sensors = split, list(sensors)
        self.vocab = resolve_vocab(vocab, self.data_root, all_splits)  # same rule as the IL dataset
        self.entries = list(entries if entries is not None else all_splits[split])
        self.max_steps, self.deterministic, self.planner = (
            int(max_steps),
            bool(deterministic),
            planner,
        )
        self.backend = backend
        self._env = env
        self._last: Optional[AlfredOnlineTask] = None
        self.set_seed(seed)

    @property
    def env(self) -> AlfredEnv:
        if self._env is None:
            self._env = AlfredEnv(
                backend=self.backend, width=C.SCREEN_WIDTH, height=C.SCREEN_HEIGHT
            )
        return self._env

    @property
    def length(self) -> Union[int, float]:
        return len(self.entries) - self._pos if self.deterministic else float("inf")

    @property
    def total_unique(self) -> int:
        return len(self.entries)

    @property
    def last_sampled_task(self) -> Optional[AlfredOnlineTask]:
        return self._last

    @property
    def all_observation_spaces_equal(self) -> bool:
        return True

    def close(self) -> None:
        if self._env is not None:
            self._env.stop()
            self._env = None

    def reset(self) -> None:
        self._pos, self._epoch = 0, 0
        self._order = self._make_order()

    def set_seed(self, seed: int) -> None:
        self.seed = int(seed)
        self.reset()

    def _make_order(self) -> List[int]:
        if self.deterministic:
            return list(range(len(self.entries)))
        return [
            int(i)
            for i in np.random.default_rng([self.seed, self._epoch]).permutation(len(self.entries))
        ]

    def next_task(self, force_advance_scene: bool = False) -> Optional[AlfredOnlineTask]:
        if self._pos >= len(self._order):
            if self.deterministic:
                return None
            self._epoch, self._pos = self._epoch + 1, 0
            self._order = self._make_order()
        entry = self.entries[self._order[self._pos]]
        self._pos += 1
        traj = read_traj_json(entry.traj_path(self.data_root, self.split))
        pp = preprocess_traj(traj, self.vocab, entry.repeat_idx, split=self.split, grow=False)
        self.env.init_episode(traj)
        info = {
            "traj": traj,
            "task": entry.task,
            "repeat_idx": entry.repeat_idx,
            "task_type": traj["task_type"],
            "lang_goal": list(pp["num"]["lang_goal"]),
            "lang_instr": [w for seg in pp["num"]["lang_instr"] for w in seg],
        }
        self._last = AlfredOnlineTask(
            self.env, self.sensors, info, self.max_steps, planner=self.planner
        )
        return self._last
