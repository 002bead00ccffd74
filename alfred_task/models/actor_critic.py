"""AllenAct wrapper of ALFRED's Seq2Seq(+PM): one policy for offline imitation (teacher-forced
sequences, [T, B] batches) and online DAgger (one step at a time with recurrent memory).

Observations (`observations` uuids): goal and instruction word ids, the ResNet-18 512×7×7
features of the current frame. Memory: the decoder's LSTMCell state ``h``/``c`` and the
previous action (action_low vocabulary id). At an episode start (``masks == 0``) the state is
ALFRED's: h = pooled language, c = 0, previous-action embedding = the learned ``go``.

The previous-action input is ALFRED's default, the model's own argmax (``prev_action_input=
"argmax"``), or the action actually taken (``"taken"``, AllenAct's ``prev_actions``; ALFRED's
``--dec_teacher_forcing`` when the expert acts). The policy's actions are `action_names` (the
task's list, default the 13 agent actions); their logits are picked out of the 15-entry
action_low vocabulary, so <<pad>>/<<seg>> are never emitted. There is no critic (values are 0).

``freeze_batchnorm=True`` keeps batch norm (visual encoder, mask decoder) on its running
statistics in training mode too (dropout stays on). Why: on-policy (DAgger) batches are T×B frames
of a couple of episodes, whose batch statistics are far from the population's, and every
training-mode forward would also pull the running statistics toward them. Measured on 32
expert-driven online frames with session 11's imitation checkpoint: action CE 0.29 in eval mode,
1.95 in training mode, 0.34 in training mode with batch norm frozen (the DAgger fine-tune that
collapsed in session 11 started at a train CE of 1.83).

``emit_masks=True`` (what ``allenact --eval`` builds): every action is ``{"action": index,
"mask": the mask decoder's P×P logits}`` (a ``Dict`` action space, `ActionAndMaskDistr`), so the
task interacts with the model's own mask, as ALFRED's evaluation does; AllenAct actions are
otherwise plain integers and the task would have to pick a mask itself (`alfred_task.alfred_tasks`).

``state_dict`` keys are ALFRED's with the prefix ``seq2seq.`` (`STATE_PREFIX`).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Mapping, Optional, Sequence

import gym
import numpy as np
import torch
from allenact.algorithms.onpolicy_sync.policy import ActorCriticModel
from allenact.base_abstractions.distributions import CategoricalDistr, Distr
from allenact.base_abstractions.misc import ActorCriticOutput, Memory

from alfred_task import constants as C
from .observations import EXPERT_ACTION_UUID, LANG_GOAL_UUID, LANG_INSTR_UUID, RESNET_UUID
from .seq2seq import Seq2Seq, ablation_flags

__all__ = [
    "PREV_ACTION_INPUTS",
    "STATE_PREFIX",
    "ActionAndMaskDistr",
    "AlfredSeq2SeqActorCritic",
    "build_actor_critic",
]

STATE_PREFIX = "seq2seq."
#: previous-action input: the model's own argmax (ALFRED's default) or the action taken (--dec_teacher_forcing)
PREV_ACTION_INPUTS = ("argmax", "taken")


def _pad_to(x: torch.Tensor, length: int) -> torch.Tensor:
    """Zero/False-pad dim 1 of [B, L, ...] to `length` (zero encoder outputs, as ALFRED's padding)."""
    if x.shape[1] >= length:
        return x
    return torch.cat([x, x.new_zeros(x.shape[0], length - x.shape[1], *x.shape[2:])], dim=1)


def action_part(actions: Any) -> torch.Tensor:
    """The action ids of plain or `emit_masks` (``{"action", "mask"}``) actions."""
    return actions["action"] if isinstance(actions, Mapping) else actions


class ActionAndMaskDistr(Distr):
    """The action distribution plus the mask decoder's logits of the same steps: sampling or taking
    the mode draws the action and passes the logits along (the mask is not sampled; the task
    applies ALFRED's rule to them). Probabilities are the action's alone."""

    def __init__(self, actions: CategoricalDistr, mask_logits: torch.Tensor) -> None:
        self.actions, self.mask_logits = actions, mask_logits

    def sample(self, sample_shape=torch.Size()) -> "OrderedDict[str, torch.Tensor]":
        return OrderedDict(action=self.actions.sample(sample_shape), mask=self.mask_logits)

    def mode(self) -> "OrderedDict[str, torch.Tensor]":
        return OrderedDict(action=self.actions.mode(), mask=self.mask_logits)

    def log_prob(self, actions: Any) -> torch.Tensor:
        return self.actions.log_prob(action_part(actions))

    def entropy(self) -> torch.Tensor:
        return self.actions.entropy()


class AlfredSeq2SeqActorCritic(ActorCriticModel[CategoricalDistr]):
    """ALFRED Seq2Seq(+PM) as an AllenAct policy; see the module doc."""

    def __init__(
        self,
        action_space: gym.spaces.Discrete,
        observation_space: gym.spaces.Dict,
        num_words: int,
        action_names: Sequence[str] = C.AGENT_ACTIONS,
        action_vocab: Sequence[str] = C.ACTION_LOW_VOCAB,
        prev_action_input: str = "argmax",
        ablation: str = "none",
        mask_lang_padding: bool = True,
        freeze_batchnorm: bool = False,
        emit_masks: bool = False,
        **seq2seq_kwargs,
    ) -> None:
        if not isinstance(action_space, gym.spaces.Discrete) or action_space.n != len(action_names):
            raise ValueError(
                f"action_space must be Discrete({len(action_names)}) for {len(action_names)} action names, "
                f"got {action_space}"
            )
        super().__init__(action_space=action_space, observation_space=observation_space)
        missing = [
            u
            for u in (LANG_GOAL_UUID, LANG_INSTR_UUID, RESNET_UUID)
            if u not in observation_space.spaces
        ]
        if missing:
            raise ValueError(f"observation space lacks {missing}")
        unknown = [a for a in action_names if a not in action_vocab]
        if unknown:
            raise ValueError(
                f"actions {unknown} are not in the action_low vocabulary {list(action_vocab)}"
            )
        if prev_action_input not in PREV_ACTION_INPUTS:
            raise ValueError(
                f"prev_action_input must be one of {PREV_ACTION_INPUTS}, got {prev_action_input!r}"
            )
        self.action_names, self.action_vocab = tuple(action_names), tuple(action_vocab)
        self.prev_action_input, self.ablation = prev_action_input, ablation
        self.freeze_batchnorm = bool(freeze_batchnorm)
        self.seq2seq = Seq2Seq(
            num_words,
            len(action_vocab),
            mask_lang_padding=mask_lang_padding,
            **{**ablation_flags(ablation), **seq2seq_kwargs},
        )
        self.emit_masks = bool(emit_masks)
        if self.emit_masks:
            side = self.seq2seq.pframe
            self.action_space = gym.spaces.Dict(
                OrderedDict(
                    action=action_space,
                    mask=gym.spaces.Box(-np.inf, np.inf, (side * side,), np.float32),
                )
            )
        ids = torch.tensor([self.action_vocab.index(a) for a in action_names], dtype=torch.long)
        self.register_buffer("task_to_vocab", ids, persistent=False)
        interact = torch.tensor([C.has_interaction(a) for a in action_names], dtype=torch.bool)
        self.register_buffer("task_interacts", interact, persistent=False)
        #: (key, encoding) of the last rollout step's language (see `_language`); never saved
        self._lang_cache: Optional[tuple] = None

    def train(self, mode: bool = True):
        """`nn.Module.train`; with `freeze_batchnorm` the batch-norm layers stay in eval mode."""
        super().train(mode)
        if self.freeze_batchnorm:
            for m in self.modules():
                if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                    m.eval()
        return self

    def _recurrent_memory_specification(self):
        hid = 2 * self.seq2seq.dhid
        return {
            "h": ((("layer", 1), ("sampler", None), ("hidden", hid)), torch.float32),
            "c": ((("layer", 1), ("sampler", None), ("hidden", hid)), torch.float32),
            "prev_action": ((("layer", 1), ("sampler", None), ("one", 1)), torch.float32),
        }

    def _encode(self, goal: torch.Tensor, instr: torch.Tensor):
        s = self.seq2seq
        return s.encode_lang(*s.join_language(goal.long(), instr.long()))

    def _language(self, goal: torch.Tensor, instr: torch.Tensor):
        """`_encode`, reused across rollout steps while the language and the encoder's weights stay
        the same. Why: AllenAct calls the policy once per environment step with the episode's
        whole language, and re-running the BiLSTM every step cost as much as the ResNet
        (benchmarks/alfred_dagger_sampler.py). Only without autograd (rollouts, evaluation) and
        without active language dropout, so outputs and random draws are unchanged; the
        parameters' in-place version counters invalidate it after every optimizer step."""
        s = self.seq2seq
        if torch.is_grad_enabled() or (self.training and s.lang_dropout.p > 0):
            self._lang_cache = None
            return self._encode(goal, instr)
        weights = tuple(
            (id(p), p._version) for m in (s.emb_word, s.enc, s.enc_att) for p in m.parameters()
        )
        hit = self._lang_cache
        if (
            hit is not None
            and hit[0] == weights
            and hit[1].shape == goal.shape
            and hit[2].shape == instr.shape
            and torch.equal(hit[1], goal)
            and torch.equal(hit[2], instr)
        ):
            return hit[3]
        lang = self._encode(goal, instr)
        self._lang_cache = (weights, goal.clone(), instr.clone(), lang)
        return lang

    def _reencode(self, lang, rows, goal_t, instr_t):
        """Language of the samplers whose episode starts at this step replaces theirs."""
        enc, cont_lang, valid = lang
        new_enc, new_cont, new_valid = self._encode(goal_t[rows], instr_t[rows])
        length = max(enc.shape[1], new_enc.shape[1])
        enc = _pad_to(enc, length).clone()
        enc[rows] = _pad_to(new_enc, length)
        cont_lang = cont_lang.clone()
        cont_lang[rows] = new_cont
        if valid is not None:
            valid = _pad_to(valid, length).clone()
            valid[rows] = _pad_to(new_valid, length)
        return enc, cont_lang, valid

    def forward(
        self, observations, memory: Memory, prev_actions: torch.Tensor, masks: torch.FloatTensor
    ):
        """[T, B] observations -> (distribution over `action_names`, memory after the last step).

        Extras: ``alfred_cont`` [T, B, cont_dim] (what the mask head reads; losses decode masks
        from it only where needed), ``alfred_vocab_logits`` [T, B, 15] and, with the progress
        monitor, ``alfred_subgoal``/``alfred_progress`` [T, B]. In training mode with the
        expert's actions observed (``expert_action``): ``alfred_mask_steps`` [T, B] bool, the
        steps whose expert action interacts, and ``alfred_mask_logits`` [N, P, P] at those steps.
        """
        s, dec = self.seq2seq, self.seq2seq.dec
        goal, instr = observations[LANG_GOAL_UUID], observations[LANG_INSTR_UUID]
        frames = s.prepare_frames(observations[RESNET_UUID].float())
        n_t, n_b = frames.shape[:2]
        h, c = memory.tensor("h")[0], memory.tensor("c")[0]
        prev = memory.tensor("prev_action")[0, :, 0].long()
        lang = self._language(goal[0], instr[0])
        outs = {k: [] for k in ("logits", "cont", "sub", "prog")}
        vis = dec.encode_frames(frames)
        for t in range(n_t):
            keep = masks[t].view(n_b, 1) > 0
            starts = (~keep[:, 0]).nonzero().view(-1)
            if t > 0 and len(starts):
                lang = self._reencode(lang, starts, goal[t], instr[t])
            enc, cont_lang, valid = lang
            if self.prev_action_input == "taken":
                prev = self.task_to_vocab[action_part(prev_actions)[t].view(n_b).long()]
            h = torch.where(keep, h, cont_lang)
            c = torch.where(keep, c, torch.zeros_like(c))
            e_t = torch.where(keep, dec.emb(prev), dec.go.unsqueeze(0).expand(n_b, -1))
            logits, cont, (h, c), sub, prog = dec.step_encoded(enc, vis[t], e_t, (h, c), valid)
            prev = logits.argmax(1)
            for k, v in zip(("logits", "cont", "sub", "prog"), (logits, cont, sub, prog)):
                outs[k].append(v)
        vocab_logits = torch.stack(outs["logits"], 0)
        extras = {"alfred_cont": torch.stack(outs["cont"], 0), "alfred_vocab_logits": vocab_logits}
        if s.progress_monitor:
            extras["alfred_subgoal"] = torch.stack(outs["sub"], 0)
            extras["alfred_progress"] = torch.stack(outs["prog"], 0)
        if self.training and EXPERT_ACTION_UUID in observations:
            sel = self.task_interacts[observations[EXPERT_ACTION_UUID][..., 0].long()]
            extras["alfred_mask_steps"] = sel
            extras["alfred_mask_logits"] = self.decode_masks(
                extras["alfred_cont"][sel], frames[sel]
            )
        memory = memory.set_tensor("h", h.unsqueeze(0)).set_tensor("c", c.unsqueeze(0))
        memory = memory.set_tensor("prev_action", prev.float().view(1, n_b, 1))
        distr = CategoricalDistr(logits=vocab_logits[..., self.task_to_vocab])
        if self.emit_masks:
            flat = self.decode_masks(extras["alfred_cont"].flatten(0, 1), frames.flatten(0, 1))
            distr = ActionAndMaskDistr(distr, flat.reshape(n_t, n_b, -1))
        out = ActorCriticOutput(
            distributions=distr, values=vocab_logits.new_zeros(n_t, n_b, 1), extras=extras
        )
        return out, memory

    def decode_masks(self, cont: torch.Tensor, frames: torch.Tensor) -> torch.Tensor:
        """Mask logits [N, P, P] from decoder features [N, cont_dim] (e.g. ``extras['alfred_cont'][sel]``)
        and the prepared frame features [N, 512, 7, 7] of those steps (a spatial mask decoder reads them)."""
        return self.seq2seq.dec.decode_mask(cont, frames)

    @staticmethod
    def alfred_state_dict(state: dict) -> dict:
        """This wrapper's state_dict -> ALFRED's key names (prefix removed)."""
        return {k[len(STATE_PREFIX) :]: v for k, v in state.items() if k.startswith(STATE_PREFIX)}

    @staticmethod
    def from_alfred_state_dict(state: dict) -> dict:
        """ALFRED's ``model`` state_dict -> this wrapper's key names."""
        return {STATE_PREFIX + k: v for k, v in state.items()}


def build_actor_critic(model_kwargs: dict) -> AlfredSeq2SeqActorCritic:
    """The wrapper for `model_kwargs` (as stored in checkpoints), acting over the 13 agent actions,
    with an observation space holding the uuids it reads (language lengths are not fixed here)."""
    import numpy as np

    words = int(model_kwargs["num_words"])
    obs = gym.spaces.Dict(
        {
            LANG_GOAL_UUID: gym.spaces.Box(0, words, (1,), np.int64),
            LANG_INSTR_UUID: gym.spaces.Box(0, words, (1,), np.int64),
            RESNET_UUID: gym.spaces.Box(-np.inf, np.inf, (512, 7, 7), np.float32),
        }
    )
    return AlfredSeq2SeqActorCritic(gym.spaces.Discrete(len(C.AGENT_ACTIONS)), obs, **model_kwargs)
