"""ALFRED's Seq2Seq(+PM) model, ``seq2seq_im_mask`` (reference §6), with its ablations.

Language: goal tokens (ending ``<<goal>>``) then all instruction tokens (ending ``<<stop>>``),
one sequence, encoded by a bidirectional LSTM and pooled by self-attention into the decoder's
initial hidden state. Each step the LSTMCell decoder reads the encoded 512×7×7 ResNet frame,
attends over the language with its previous hidden state and embeds its previous action;
heads give action logits (tied to the action embedding), a mask and, with the progress
monitor, subgoal and overall progress. With the official dimensions the ``state_dict`` keys
and shapes are exactly ALFRED's (``alfred_seq2seq_official_state_dict_keys.json``).

Ablations (ALFRED zeroes inputs, keeping the end tokens ``<<goal>>``/``<<stop>>``): ``zero_goal``,
``zero_instr`` (ALFRED's flags) and ``zero_vis``; `ABLATIONS` names the paper's variants.

``mask_lang_padding=False`` is ALFRED: both attentions also weigh the (zero) padding of a batch,
so outputs depend on the batch's longest instruction; True leaves padding out, which equals
ALFRED's batch-of-one inference for every batch (the AllenAct wrapper uses it).

``spatial_mask=True`` (not ALFRED's; two extra modules, official keys otherwise unchanged) lets
the mask decoder read the frame's 7×7 features directly (`modules.MaskDecoder`);
``subcell_mask=True`` (likewise) adds its 28×28 sub-cell head.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .modules import FEAT_SHAPE, MaskDecoder, ResnetVisualEncoder, SelfAttn, dot_attn

__all__ = [
    "ABLATIONS",
    "ablation_flags",
    "Decoder",
    "Seq2Seq",
    "Seq2SeqOutput",
    "StepState",
    "StepOutput",
    "seq_lengths",
]

#: paper ablation name -> (zero_goal, zero_instr, zero_vis)
ABLATIONS = {
    "none": (False, False, False),
    "no_vision": (False, False, True),
    "no_language": (True, True, False),
    "goal_only": (False, True, False),
    "instructions_only": (True, False, False),
}


def ablation_flags(name: str) -> dict[str, bool]:
    """Constructor flags of a named ablation (`ABLATIONS`)."""
    if name not in ABLATIONS:
        raise ValueError(f"unknown ablation {name!r}; expected one of {sorted(ABLATIONS)}")
    return dict(zip(("zero_goal", "zero_instr", "zero_vis"), ABLATIONS[name]))


def seq_lengths(tokens: torch.Tensor) -> torch.Tensor:
    """Lengths of right-padded (pad id 0) rows: index of the last non-pad token + 1."""
    nz = (tokens != 0).long()
    pos = torch.arange(1, tokens.shape[1] + 1, device=tokens.device)
    return (nz * pos).max(dim=1).values


def _zero_keep_end(tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Pad out every token but each row's last real one (ALFRED's ``zero_input``)."""
    pos = torch.arange(tokens.shape[1], device=tokens.device).unsqueeze(0)
    return torch.where(
        pos == (lengths - 1).clamp(min=0).unsqueeze(1), tokens, torch.zeros_like(tokens)
    )


@dataclass
class Seq2SeqOutput:
    """Teacher-forced outputs; time-major per row: [B, T, ...]."""

    action_logits: torch.Tensor  # [B, T, num_actions]
    cont: torch.Tensor  # [B, T, cont_dim]: decoder features every head reads
    mask_logits: Optional[torch.Tensor]  # [B, T, P, P], or [N, P, P] at the `mask_steps` rows
    subgoal: Optional[torch.Tensor]  # [B, T] in [0, 1] (progress monitor only)
    progress: Optional[torch.Tensor]  # [B, T]


@dataclass
class StepState:
    """Recurrent state of step-by-step inference (§6.5)."""

    enc: torch.Tensor  # [B, L, 2*dhid] encoded language
    valid: Optional[torch.Tensor]  # [B, L] bool non-padding positions (None: attend to all)
    h: torch.Tensor
    c: torch.Tensor
    e_prev: torch.Tensor  # [B, demb] embedding of the previous predicted action (or `go`)


@dataclass
class StepOutput:
    action: torch.Tensor  # [B] argmax action id (action_low vocabulary)
    action_logits: torch.Tensor  # [B, num_actions]
    mask_logits: torch.Tensor  # [B, P, P]
    mask: torch.Tensor  # [B, P, P] bool: sigmoid(logits) > 0.5
    subgoal: Optional[torch.Tensor]
    progress: Optional[torch.Tensor]


class Decoder(nn.Module):
    """One LSTMCell step over [frame ; attended language ; previous action] plus the heads."""

    def __init__(
        self,
        emb: nn.Embedding,
        dframe: int,
        dhid: int,
        pframe: int,
        progress_monitor: bool,
        attn_dropout: float = 0.0,
        hstate_dropout: float = 0.3,
        actor_dropout: float = 0.0,
        input_dropout: float = 0.0,
        spatial_mask: bool = False,
        subcell_mask: bool = False,
    ) -> None:
        super().__init__()
        demb = emb.weight.size(1)
        self.emb = emb  # shared with the model's emb_action_low (both keys appear, as ALFRED)
        self.dframe, self.dhid = dframe, dhid
        self.vis_encoder = ResnetVisualEncoder(dframe=dframe)
        self.cell = nn.LSTMCell(dhid + dframe + demb, dhid)
        self.input_dropout = nn.Dropout(input_dropout)
        self.attn_dropout = nn.Dropout(attn_dropout)
        self.hstate_dropout = nn.Dropout(hstate_dropout)
        self.actor_dropout = nn.Dropout(actor_dropout)
        self.go = nn.Parameter(torch.empty(demb).uniform_(-0.1, 0.1))
        cont_dim = dhid + dhid + dframe + demb
        self.cont_dim = cont_dim
        self.actor = nn.Linear(cont_dim, demb)
        self.mask_dec = MaskDecoder(
            dhid=cont_dim, pframe=pframe, spatial=spatial_mask, subcell=subcell_mask
        )
        self.h_tm1_fc = nn.Linear(dhid, dhid)
        self.progress_monitor = progress_monitor
        if progress_monitor:
            self.subgoal = nn.Linear(cont_dim, 1)
            self.progress = nn.Linear(cont_dim, 1)

    def decode_mask(self, cont: torch.Tensor, frame: torch.Tensor) -> torch.Tensor:
        """Mask logits [N, P, P] from decoder features [N, cont_dim] and the (prepared) frames
        [N, 512, 7, 7] they were computed on (only a spatial mask decoder reads the frames)."""
        return self.mask_dec(cont, frame if self.mask_dec.reads_frame else None)

    def step(
        self,
        enc: torch.Tensor,
        frame: torch.Tensor,
        e_t: torch.Tensor,
        state: tuple[torch.Tensor, torch.Tensor],
        valid: Optional[torch.Tensor] = None,
    ):
        """-> (action logits [B, V], cont [B, cont_dim], (h, c), subgoal [B] | None, progress [B] | None)."""
        return self.step_encoded(enc, self.vis_encoder(frame), e_t, state, valid)

    def encode_frames(self, frames: torch.Tensor) -> torch.Tensor:
        """Visual encoding of a whole unroll at once: [T, B, 512, 7, 7] -> [T, B, dframe].

        Why: the visual encoder does not depend on the recurrence. In training mode batch norm then
        normalises over all T×B frames of the batch instead of each step's B (ALFRED's per-step
        statistics also mix in the zero frames of finished sequences); its running statistics, which
        evaluation uses, match training better: memorising 3 sequences, eval-mode action CE 0.0007 vs
        0.020 per step. Eval-mode outputs are identical; speed is the same within noise on CPU."""
        n_t, n_b = frames.shape[:2]
        return self.vis_encoder(frames.reshape(n_t * n_b, *frames.shape[2:])).view(n_t, n_b, -1)

    def step_encoded(
        self,
        enc: torch.Tensor,
        vis_t: torch.Tensor,
        e_t: torch.Tensor,
        state: tuple[torch.Tensor, torch.Tensor],
        valid: Optional[torch.Tensor] = None,
    ):
        """`step` on an already encoded frame [B, dframe] (see `encode_frames`)."""
        lang_t, _ = dot_attn(self.attn_dropout(enc), self.h_tm1_fc(state[0]), valid)
        inp_t = self.input_dropout(torch.cat([vis_t, lang_t, e_t], dim=1))
        h, c = self.cell(inp_t, state)
        h, c = self.hstate_dropout(h), self.hstate_dropout(c)
        cont_t = torch.cat([h, inp_t], dim=1)
        logits = self.actor(self.actor_dropout(cont_t)).mm(self.emb.weight.t())
        sub = prog = None
        if self.progress_monitor:
            sub = torch.sigmoid(self.subgoal(cont_t)).squeeze(1)
            prog = torch.sigmoid(self.progress(cont_t)).squeeze(1)
        return logits, cont_t, (h, c), sub, prog


class Seq2Seq(nn.Module):
    """ALFRED's Seq2Seq(+PM). Dimensions are arguments; defaults are the official ones."""

    def __init__(
        self,
        num_words: int,
        num_actions: int = 15,
        demb: int = 100,
        dhid: int = 512,
        dframe: int = 2500,
        pframe: int = 300,
        progress_monitor: bool = True,
        vis_dropout: float = 0.3,
        hstate_dropout: float = 0.3,
        lang_dropout: float = 0.0,
        input_dropout: float = 0.0,
        attn_dropout: float = 0.0,
        actor_dropout: float = 0.0,
        zero_goal: bool = False,
        zero_instr: bool = False,
        zero_vis: bool = False,
        dec_teacher_forcing: bool = False,
        mask_lang_padding: bool = False,
        spatial_mask: bool = False,
        subcell_mask: bool = False,
    ) -> None:
        super().__init__()
        self.num_words, self.num_actions = int(num_words), int(num_actions)
        self.demb, self.dhid, self.dframe, self.pframe = demb, dhid, dframe, pframe
        self.zero_goal, self.zero_instr, self.zero_vis = zero_goal, zero_instr, zero_vis
        self.dec_teacher_forcing, self.mask_lang_padding = dec_teacher_forcing, mask_lang_padding
        self.emb_word = nn.Embedding(self.num_words, demb)
        self.emb_action_low = nn.Embedding(self.num_actions, demb)
        self.enc = nn.LSTM(demb, dhid, bidirectional=True, batch_first=True)
        self.enc_att = SelfAttn(dhid * 2)
        self.dec = Decoder(
            self.emb_action_low,
            dframe,
            2 * dhid,
            pframe,
            progress_monitor,
            attn_dropout=attn_dropout,
            hstate_dropout=hstate_dropout,
            actor_dropout=actor_dropout,
            input_dropout=input_dropout,
            spatial_mask=spatial_mask,
            subcell_mask=subcell_mask,
        )
        self.vis_dropout = nn.Dropout(vis_dropout)
        self.lang_dropout = nn.Dropout(lang_dropout, inplace=False)

    @property
    def progress_monitor(self) -> bool:
        return self.dec.progress_monitor

    # ------------------------------------------------------------------ language
    def join_language(
        self, goal: torch.Tensor, instr: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded goal [B, Lg] and flattened instructions [B, Li] -> the joined sequence
        [B, L] and its lengths, after the ablation zeroing."""
        lg, li = seq_lengths(goal), seq_lengths(instr)
        if self.zero_goal:
            goal = _zero_keep_end(goal, lg)
        if self.zero_instr:
            instr = _zero_keep_end(instr, li)
        lengths = lg + li
        out = goal.new_zeros(goal.shape[0], int(lengths.max().item()) if len(lengths) else 0)
        for b in range(goal.shape[0]):  # ragged concatenation; B is small
            n_g, n_i = int(lg[b]), int(li[b])
            out[b, :n_g] = goal[b, :n_g]
            out[b, n_g : n_g + n_i] = instr[b, :n_i]
        return out, lengths

    def encode_lang(self, tokens: torch.Tensor, lengths: torch.Tensor):
        """Joined tokens [B, L] -> (encoder outputs [B, L', 2*dhid], pooled [B, 2*dhid],
        valid [B, L'] bool or None when padding is attended as in ALFRED)."""
        emb = self.emb_word(tokens)
        packed = pack_padded_sequence(
            emb, lengths.clamp(min=1).cpu(), batch_first=True, enforce_sorted=False
        )
        enc, _ = pad_packed_sequence(self.enc(packed)[0], batch_first=True)
        enc = self.lang_dropout(enc)
        valid = None
        if self.mask_lang_padding:
            valid = torch.arange(enc.shape[1], device=enc.device).unsqueeze(0) < lengths.clamp(
                min=1
            ).unsqueeze(1)
        return enc, self.enc_att(enc, valid), valid

    def prepare_frames(self, frames: torch.Tensor) -> torch.Tensor:
        """Visual dropout (or the no-vision ablation's zeros) on raw ResNet features."""
        return torch.zeros_like(frames) if self.zero_vis else self.vis_dropout(frames)

    # ------------------------------------------------------------------ teacher-forced unroll
    def forward(
        self,
        goal: torch.Tensor,
        instr: torch.Tensor,
        frames: torch.Tensor,
        actions: Optional[torch.Tensor] = None,
        mask_steps: Optional[torch.Tensor] = None,
    ) -> Seq2SeqOutput:
        """Unroll over the expert's frames [B, T, 512, 7, 7] (T = gold length), as ALFRED's forward.

        The previous-action input is the model's own argmax (ALFRED's default) or, with
        `dec_teacher_forcing`, the gold `actions` [B, T]. `mask_steps` [B, T] bool decodes masks
        only at those steps (returned flattened, row-major over (b, t)); None decodes all steps.
        """
        if frames.shape[2:] != FEAT_SHAPE:
            raise ValueError(
                f"frames must be [B, T, {', '.join(map(str, FEAT_SHAPE))}], got {list(frames.shape)}"
            )
        if self.dec_teacher_forcing and actions is None:
            raise ValueError("dec_teacher_forcing needs the gold actions")
        enc, cont_lang, valid = self.encode_lang(*self.join_language(goal, instr))
        frames = self.prepare_frames(frames)
        b, t_max = frames.shape[:2]
        state = (cont_lang, torch.zeros_like(cont_lang))
        e_t = self.dec.go.unsqueeze(0).expand(b, -1)
        logits, conts, subs, progs = [], [], [], []
        vis = self.dec.encode_frames(frames.transpose(0, 1))
        for t in range(t_max):
            lo, cont, state, sub, prog = self.dec.step_encoded(enc, vis[t], e_t, state, valid)
            logits.append(lo), conts.append(cont), subs.append(sub), progs.append(prog)
            nxt = actions[:, t] if self.dec_teacher_forcing else lo.argmax(1)
            e_t = self.dec.emb(nxt)
        cont = torch.stack(conts, 1)
        if mask_steps is None:
            masks = self.dec.decode_mask(
                cont.reshape(b * t_max, -1), frames.reshape(b * t_max, *FEAT_SHAPE)
            )
            masks = masks.view(b, t_max, self.pframe, self.pframe)
        elif mask_steps.any():
            sel = mask_steps.bool()
            masks = self.dec.decode_mask(cont[sel], frames[sel])
        else:
            masks = cont.new_zeros(0, self.pframe, self.pframe)
        pm = self.progress_monitor
        return Seq2SeqOutput(
            torch.stack(logits, 1),
            cont,
            masks,
            torch.stack(subs, 1) if pm else None,
            torch.stack(progs, 1) if pm else None,
        )

    # ------------------------------------------------------------------ step-by-step inference
    def start(self, goal: torch.Tensor, instr: torch.Tensor) -> StepState:
        """Encode the language once per episode (§6.5)."""
        enc, cont_lang, valid = self.encode_lang(*self.join_language(goal, instr))
        e0 = self.dec.go.unsqueeze(0).expand(goal.shape[0], -1)
        return StepState(enc, valid, cont_lang, torch.zeros_like(cont_lang), e0)

    def step(self, frame: torch.Tensor, state: StepState) -> tuple[StepOutput, StepState]:
        """One action and its 300×300 mask from the current frame [B, 512, 7, 7]."""
        frame = self.prepare_frames(frame)
        lo, cont, (h, c), sub, prog = self.dec.step(
            state.enc, frame, state.e_prev, (state.h, state.c), state.valid
        )
        action = lo.argmax(1)
        mask_logits = self.dec.decode_mask(cont, frame)
        out = StepOutput(action, lo, mask_logits, torch.sigmoid(mask_logits) > 0.5, sub, prog)
        return out, StepState(state.enc, state.valid, h, c, self.dec.emb(action))
