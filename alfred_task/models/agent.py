"""ALFRED evaluation agent around the Seq2Seq(+PM) model (the `alfred_task.evaluation.agents` protocol).

Converted and trained checkpoints name this class, so ``python -m alfred_task.evaluation --agent
checkpoint --checkpoint <ckpt>`` builds it through `CheckpointAgent` as
``Seq2SeqAgent(model_kwargs=..., vocab=..., visual_encoder=...)`` then ``load_state_dict``.

Per episode the language is numericalised as ALFRED's preprocessing does (words missing from the
vocabulary become <<pad>>) and encoded once; each `act` featurises ``env.last_event.frame`` with
ResNet-18 and takes one decoder step (§6.5). The action is the argmax over the 13 agent actions
(ALFRED can also emit <<pad>>/<<seg>>, which its evaluator then drops or fails, §7); the mask is
sigmoid > 0.5 at 300×300 (ALFRED's rule; ``mask_rule="top_k:N"`` keeps the N most confident
pixels instead, see `mask_rules`). ``obstruction_evasion=True`` (off by default = ALFRED's
agent) never repeats a navigation action that THOR just reported failed (``lastActionSuccess``
false: blocked by a wall or an object) but takes the next most likely action, as MOCA's
obstruction evasion (Singh et al., 2021): a policy trained only on expert demonstrations has never
seen a blocked step, sees the same frame again and repeats the move until ALFRED's 10-failure
limit ends the episode. ``interaction_retry=N`` (0 by default = ALFRED's agent) is the same idea
for interactions: after THOR reports an interaction failed (e.g. the mask resolved to a counter,
which cannot be picked up), the agent repeats that action up to N times in a row, each time with a
mask that excludes every pixel it already tried, instead of moving on as if the object were in
hand (the demonstrations never show a failed interaction either); ``retry_actions`` limits it to
some interactions (e.g. ``["PickupObject", "SliceObject"]``: a failed Put is better left to the
policy, whose next view often succeeds, than retried on the untried rest of a receptacle-sized
mask). The mask-head study (``experiments/alfred_masks``) subclasses this agent to take masks
from a separately trained head; `_mask_logits` is the one method it overrides.
`teacher_force` feeds the expert's step (subgoal evaluation): the
decoder reads the frame before the expert action and the expert action becomes the previous action.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Optional

import numpy as np
import torch

from alfred_task import constants as C
from alfred_task.agent_api import ActionMask, Agent
from alfred_task.data.vocabulary import AlfredVocab, normalize_text, numericalize_token, tokenize
from .mask_rules import DEFAULT_MASK_RULE, frame_logits, parse_mask_rule
from .seq2seq import StepState

__all__ = ["AGENT_REF", "Seq2SeqAgent"]

#: how checkpoints name this class (`CheckpointAgent`'s "agent" field)
AGENT_REF = "alfred_task.models.agent:Seq2SeqAgent"
#: ResNet feature maps kept per agent (≈100 kB each): identical frames recur (failed actions leave
#: the frame unchanged; agents that snapshot skip the per-subgoal prefix replay, others repeat it)
FEATURE_CACHE_SIZE = 512


class Seq2SeqAgent(Agent):
    """See the module doc. `vocab` is an `AlfredVocab.to_record()` dict."""

    def __init__(
        self,
        model_kwargs: dict,
        vocab: dict,
        visual_encoder: str = "imagenet",
        mask_rule: str = DEFAULT_MASK_RULE,
        obstruction_evasion: bool = False,
        interaction_retry: int = 0,
        retry_actions: Optional[list[str]] = None,
    ) -> None:
        from alfred_task.data.features import ResnetFeatures
        from .actor_critic import build_actor_critic

        self.mask_rule = parse_mask_rule(mask_rule)
        if not isinstance(obstruction_evasion, bool):
            raise ValueError(
                f"obstruction_evasion must be true or false, got {obstruction_evasion!r}"
            )
        self.obstruction_evasion = obstruction_evasion
        if (
            isinstance(interaction_retry, bool)
            or not isinstance(interaction_retry, int)
            or interaction_retry < 0
        ):
            raise ValueError(
                f"interaction_retry must be an integer >= 0, got {interaction_retry!r}"
            )
        self.interaction_retry = interaction_retry
        if retry_actions is not None and (
            not isinstance(retry_actions, list)
            or not retry_actions
            or any(a not in C.INTERACT_ACTIONS for a in retry_actions)
        ):
            raise ValueError(
                f"retry_actions must be a non-empty list of interaction actions, got {retry_actions!r}"
            )
        self.retry_actions = frozenset(retry_actions or C.INTERACT_ACTIONS)
        self._tried: Optional[np.ndarray] = (
            None  # pixels sent by the current run of one interaction
        )
        self._retries = 0  # retries in that run
        self._prev_action: Optional[str] = (
            None  # what this agent's last step sent (own or teacher-forced)
        )
        self.vocab = AlfredVocab.from_record(vocab, "checkpoint vocab")
        self.policy = build_actor_critic(dict(model_kwargs)).eval()
        self.model = self.policy.seq2seq
        try:
            self.features = ResnetFeatures(visual_encoder)
        except FileNotFoundError as e:
            raise ValueError(str(e)) from None
        self.visual_encoder = self.features.encoder
        self.allowed = self.policy.task_to_vocab  # agent actions' ids in the action_low vocabulary
        self.state: Optional[StepState] = None
        self._frame: Optional[np.ndarray] = None
        self._cache: "OrderedDict[bytes, torch.Tensor]" = OrderedDict()

    #: the episode state is (decoder state, last frame, last action); tensors are replaced, never
    #: changed in place
    supports_snapshot = True

    def snapshot(self) -> tuple:
        return self.state, self._frame, self._prev_action, self._tried, self._retries

    def restore(self, state: tuple) -> None:
        self.state, self._frame, self._prev_action, self._tried, self._retries = state

    def load_state_dict(self, state: dict) -> None:
        """Weights of the wrapper (``seq2seq.``-prefixed keys), loaded strictly."""
        self.policy.load_state_dict(state, strict=True)

    def _ids(self, tokens: list[str]) -> list[int]:
        stoi = self.vocab.word._word2index  # noqa: SLF001 - no public lookup without counting
        return [stoi.get(numericalize_token(t), 0) for t in tokens]

    def reset(self, traj: dict, repeat_idx: int, env) -> None:
        ann = traj["turk_annotations"]["anns"][repeat_idx]
        goal = self._ids(tokenize(normalize_text(ann["task_desc"])) + [C.GOAL])
        instr = [i for d in ann["high_descs"] for i in self._ids(tokenize(normalize_text(d)))]
        instr += self._ids([C.STOP])
        with torch.no_grad():
            self.state = self.model.start(torch.tensor([goal]), torch.tensor([instr]))
        self._frame = np.asarray(env.last_event.frame)
        self._prev_action = None
        self._tried, self._retries = None, 0

    def _featurize(self, frame: np.ndarray) -> torch.Tensor:
        """ResNet features of one frame, memoised by the frame's bytes (identical frames give
        identical features, so results do not change; only repeated work is skipped)."""
        frame = np.ascontiguousarray(frame)
        key = hashlib.blake2b(
            frame.tobytes(), digest_size=16, person=repr(frame.shape).encode()[:16]
        ).digest()
        feat = self._cache.get(key)
        if feat is None:
            feat = self.features([frame])
            self._cache[key] = feat
            if len(self._cache) > FEATURE_CACHE_SIZE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return feat

    def _decode(self, frame: np.ndarray):
        feat = self.model.prepare_frames(self._featurize(frame))  # zeros for the no-vision ablation
        lo, cont, (h, c), _, _ = self.model.dec.step(
            self.state.enc, feat, self.state.e_prev, (self.state.h, self.state.c), self.state.valid
        )
        return lo, cont, h, c, feat

    @torch.no_grad()
    def act(self, env) -> ActionMask:
        frame = np.asarray(env.last_event.frame)
        lo, cont, h, c, feat = self._decode(frame)
        action, mask = self._retry(env, cont, feat)
        if action is None:
            scores = lo[0, self.allowed].clone()
            blocked = self._blocked_action(env)
            if blocked is not None:
                scores[self.allowed == self.vocab.action_low.word2index(blocked)] = -float("inf")
            action = self.vocab.action_low.index2word(int(self.allowed[scores.argmax()]))
            if C.has_interaction(action):
                mask = self.mask_rule(self._mask_logits(cont, feat, frame, action), action)
            self._tried, self._retries = mask, 0
        vocab_id = torch.tensor([self.vocab.action_low.word2index(action)])
        self.state = StepState(self.state.enc, self.state.valid, h, c, self.model.dec.emb(vocab_id))
        self._prev_action = action
        return action, mask

    def _mask_logits(
        self, cont: torch.Tensor, feat: torch.Tensor, frame: np.ndarray, action: str
    ) -> torch.Tensor:
        """The mask decoder's logits at 300×300 (`frame` and `action` are for subclasses)."""
        return frame_logits(self.model.dec.decode_mask(cont, feat), C.MASK_SHAPE)[0]

    def _retry(
        self, env, cont: torch.Tensor, feat: torch.Tensor
    ) -> tuple[Optional[str], Optional[np.ndarray]]:
        """(the failed interaction again, a mask of untried pixels) when interaction retry applies,
        else (None, None)."""
        action = self._prev_action
        if (
            self.interaction_retry == 0
            or action not in self.retry_actions
            or self._tried is None
            or self._retries >= self.interaction_retry
            or env.last_event.metadata.get("lastActionSuccess", True)
        ):
            return None, None
        mask = self.mask_rule(
            self._mask_logits(cont, feat, np.asarray(env.last_event.frame), action),
            action,
            exclude=self._tried,
        )
        if not mask.any():
            return None, None
        self._tried, self._retries = self._tried | mask, self._retries + 1
        return action, mask

    def _blocked_action(self, env) -> Optional[str]:
        """The navigation action to skip this step (obstruction evasion), else None."""
        if not self.obstruction_evasion or self._prev_action not in C.NAV_ACTION_SET:
            return None
        return None if env.last_event.metadata.get("lastActionSuccess", True) else self._prev_action

    @torch.no_grad()
    def teacher_force(self, env, action: str, mask: Optional[np.ndarray], success: bool) -> None:
        _, _, h, c, _ = self._decode(self._frame)
        vocab_id = torch.tensor([self.vocab.action_low.word2index(action)])
        self.state = StepState(self.state.enc, self.state.valid, h, c, self.model.dec.emb(vocab_id))
        self._frame = np.asarray(env.last_event.frame)
        self._prev_action = action
        self._tried, self._retries = None, 0
