"""ALFRED Seq2Seq(+PM): official state-dict compatibility, ablations, losses, step API, AllenAct wrapper."""

from __future__ import annotations

import json
from pathlib import Path

import gym
import numpy as np
import pytest
import torch
from allenact.base_abstractions.misc import Memory

from alfred_task import constants as C
from alfred_task.models.actor_critic import STATE_PREFIX, AlfredSeq2SeqActorCritic
from alfred_task.models.allenact_losses import AlfredSeq2SeqLoss, AlfredSeq2SeqOfflineLoss
from alfred_task.models.losses import (
    LossWeights,
    balanced_mask_bce,
    progress_targets,
    seq2seq_losses,
    soft_dice_loss,
)
from alfred_task.models.observations import (
    EXPERT_ACTION_UUID,
    EXPERT_HIGH_IDX_UUID,
    EXPERT_MASK_UUID,
    EXPERT_PROGRESS_UUID,
    LANG_GOAL_UUID,
    LANG_INSTR_UUID,
    RESNET_UUID,
)
from alfred_task.models.seq2seq import ABLATIONS, Seq2Seq, ablation_flags, seq_lengths

KEYS_JSON = (
    Path(__file__).resolve().parent / "fixtures" / "alfred_seq2seq_official_state_dict_keys.json"
)
LITE = dict(demb=16, dhid=24, dframe=40)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def official_shapes() -> dict:
    return json.loads(KEYS_JSON.read_text())


def _lang(b: int, lg: int = 6, li: int = 11, vocab: int = 50, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    goal = torch.randint(3, vocab, (b, lg), generator=g)
    instr = torch.randint(3, vocab, (b, li), generator=g)
    for r in range(b):  # ragged right padding
        goal[r, lg - r % 3 :] = 0
        instr[r, li - 2 * r :] = 0
    return goal, instr


@pytest.mark.parametrize("variant,pm", [("seq2seq_im_mask+PM", True), ("seq2seq_im_mask", False)])
def test_official_keys_and_shapes_load_strict(variant, pm):
    shapes = official_shapes()[variant]
    model = Seq2Seq(
        num_words=shapes["emb_word.weight"][0],
        num_actions=shapes["emb_action_low.weight"][0],
        progress_monitor=pm,
    )
    got = {k: list(v.shape) for k, v in model.state_dict().items()}
    assert got == shapes and list(got) == list(shapes)  # same keys, shapes and order
    g = torch.Generator().manual_seed(1)
    fake = {k: (torch.randn(s, generator=g) if s else torch.tensor(7)) for k, s in shapes.items()}
    fake["dec.emb.weight"] = fake["emb_action_low.weight"]  # one tensor in ALFRED (shared module)
    model.load_state_dict(fake, strict=True)
    assert torch.equal(model.dec.vis_encoder.fc.weight, fake["dec.vis_encoder.fc.weight"])
    assert model.dec.emb is model.emb_action_low
    wrong = dict(fake)
    wrong.pop("dec.h_tm1_fc.bias")
    with pytest.raises(RuntimeError, match="h_tm1_fc.bias"):
        model.load_state_dict(wrong, strict=True)


def test_lite_dimensions_and_outputs():
    m = Seq2Seq(num_words=50, pframe=64, **LITE).eval()
    goal, instr = _lang(3)
    out = m(goal, instr, torch.randn(3, 4, 512, 7, 7))
    assert out.action_logits.shape == (3, 4, 15) and out.mask_logits.shape == (3, 4, 64, 64)
    assert out.cont.shape == (3, 4, 2 * 24 + 40 + 2 * 24 + 16) and out.subgoal.shape == (3, 4)
    assert ((out.progress > 0) & (out.progress < 1)).all()
    sel = torch.zeros(3, 4, dtype=torch.bool)
    sel[1, 2] = sel[2, 0] = True
    part = m(goal, instr, torch.randn(3, 4, 512, 7, 7), mask_steps=sel)
    assert part.mask_logits.shape == (2, 64, 64)
    no_pm = Seq2Seq(num_words=50, progress_monitor=False, **LITE)
    assert no_pm(goal, instr, torch.randn(3, 2, 512, 7, 7)).subgoal is None
    with pytest.raises(ValueError, match="frames must be"):
        m(goal, instr, torch.randn(3, 2, 256, 7, 7))


def test_ablations_zero_inputs_keep_end_tokens():
    assert set(ABLATIONS) == {"none", "no_vision", "no_language", "goal_only", "instructions_only"}
    with pytest.raises(ValueError, match="unknown ablation"):
        ablation_flags("blind")
    goal = torch.tensor([[5, 6, C.GOAL_INDEX, 0], [7, C.GOAL_INDEX, 0, 0]])
    instr = torch.tensor([[8, 9, 4, 0], [10, 4, 0, 0]])
    assert seq_lengths(goal).tolist() == [3, 2]
    joined = {}
    for name in ABLATIONS:
        joined[name] = Seq2Seq(num_words=20, **LITE, **ablation_flags(name)).join_language(
            goal, instr
        )
    tokens, lengths = joined["none"]
    assert tokens.tolist() == [[5, 6, 2, 8, 9, 4], [7, 2, 10, 4, 0, 0]] and lengths.tolist() == [
        6,
        4,
    ]
    assert joined["no_language"][0].tolist() == [[0, 0, 2, 0, 0, 4], [0, 2, 0, 4, 0, 0]]
    assert joined["goal_only"][0].tolist() == [[5, 6, 2, 0, 0, 4], [7, 2, 0, 4, 0, 0]]
    assert joined["instructions_only"][0].tolist() == [[0, 0, 2, 8, 9, 4], [0, 2, 10, 4, 0, 0]]
    torch.manual_seed(0)
    blind = Seq2Seq(num_words=20, **LITE, **ablation_flags("no_vision")).eval()
    a = blind(goal, instr, torch.randn(2, 3, 512, 7, 7)).action_logits
    b = blind(goal, instr, torch.randn(2, 3, 512, 7, 7)).action_logits
    assert torch.equal(a, b)  # frames do not matter without vision


@pytest.mark.parametrize("mask_head", [{}, {"spatial_mask": True}, {"subcell_mask": True}])
def test_step_api_matches_teacher_forced_unroll(mask_head):
    """§6.5 step-by-step inference with own argmax equals the unroll (batch of one, eval mode)."""
    torch.manual_seed(3)
    m = Seq2Seq(num_words=50, **LITE, **mask_head).eval()
    goal, instr = _lang(1)
    frames = torch.randn(1, 5, 512, 7, 7)
    with torch.no_grad():
        full = m(goal, instr, frames)
        state = m.start(goal, instr)
        for t in range(5):
            out, state = m.step(frames[:, t], state)
            assert torch.allclose(out.action_logits, full.action_logits[:, t], atol=1e-5)
            assert torch.allclose(out.mask_logits, full.mask_logits[:, t], atol=1e-5)
            assert out.mask.shape == (1, 300, 300) and out.mask.dtype == torch.bool
            assert torch.equal(out.mask, torch.sigmoid(out.mask_logits) > 0.5)
            assert out.action.item() == full.action_logits[0, t].argmax().item()


def test_losses_follow_alfred_definitions():
    logits = torch.randn(2, 3, 15)
    actions = torch.tensor([[4, 5, 2], [3, 2, 0]])
    total, info = seq2seq_losses(logits, actions)
    ce = torch.nn.functional.cross_entropy(logits.view(-1, 15), actions.view(-1), reduction="none")
    assert info["action_low"] == pytest.approx(
        float((ce * (actions.view(-1) != 0)).sum() / 6), rel=1e-6
    )
    assert set(info) == {"action_low", "total"} and float(total) == pytest.approx(
        info["action_low"]
    )
    assert progress_targets(actions).view(-1).tolist() == pytest.approx(
        [1 / 3, 2 / 3, 1.0, 0.5, 1.0, 0.0]
    )
    gold = torch.zeros(2, 4, 4)
    gold[0, :2] = 1
    perfect = torch.where(gold > 0, 20.0, -20.0)
    assert float(balanced_mask_bce(perfect, gold)) < 1e-6
    wrong = -perfect
    assert float(balanced_mask_bce(wrong, gold)) == pytest.approx(
        40.0, rel=1e-3
    )  # 20 inside + 20 outside
    sub, prog = torch.full((2, 3), 0.5), torch.full((2, 3), 0.5)
    high = torch.tensor([[0, 1, 1], [0, 0, 0]])
    w = LossWeights(subgoal_aux=0.2, progress_aux=0.3)
    total, info = seq2seq_losses(
        logits,
        actions,
        mask_logits=wrong,
        gold_masks=gold,
        subgoal=sub,
        progress=prog,
        high_idx=high,
        weights=w,
    )
    exp_sub = (
        sum(
            (0.5 - h / 25) ** 2
            for h, a in zip(high.view(-1).tolist(), actions.view(-1).tolist())
            if a
        )
        / 6
    )
    assert info["subgoal_aux"] == pytest.approx(exp_sub, rel=1e-5)
    expect = (
        info["action_low"]
        + info["action_low_mask"]
        + 0.2 * info["subgoal_aux"]
        + 0.3 * info["progress_aux"]
    )
    assert info["total"] == pytest.approx(expect, rel=1e-5)


def test_dice_term_punishes_blob_masks_that_balanced_bce_tolerates():
    """The opt-in Dice term (off by default: ALFRED's loss unchanged) prefers a tight mask to a blob."""
    gold = torch.zeros(1, 20, 20)
    gold[0, 9:11, 9:11] = 1  # a 4-pixel target
    tight = torch.where(gold > 0, 8.0, -8.0)
    blob = torch.full((1, 20, 20), -8.0)
    blob[0, 2:18, 2:18] = 8.0  # 256 pixels over the target
    assert float(soft_dice_loss(tight, gold)) < 0.05 < 0.9 < float(soft_dice_loss(blob, gold))
    logits, actions = torch.zeros(1, 2, 15), torch.tensor([[3, 4]])
    _, plain = seq2seq_losses(logits, actions, mask_logits=blob, gold_masks=gold)
    assert "action_low_mask_dice" not in plain
    total, info = seq2seq_losses(
        logits, actions, mask_logits=blob, gold_masks=gold, weights=LossWeights(mask_dice=0.5)
    )
    assert info["action_low_mask_dice"] == pytest.approx(
        float(soft_dice_loss(blob, gold)), rel=1e-5
    )
    assert info["total"] == pytest.approx(
        plain["total"] + 0.5 * info["action_low_mask_dice"], rel=1e-5
    )


def test_spatial_mask_decoder_adds_two_modules_and_reads_the_frame():
    torch.manual_seed(0)
    plain, spatial = Seq2Seq(num_words=50, **LITE), Seq2Seq(num_words=50, **LITE, spatial_mask=True)
    extra = set(spatial.state_dict()) - set(plain.state_dict())
    assert extra == {
        f"dec.mask_dec.vis_{m}.{p}" for m in ("conv", "film") for p in ("weight", "bias")
    }
    assert set(plain.state_dict()) <= set(spatial.state_dict())
    dec = spatial.dec.mask_dec.eval()
    cont = torch.randn(2, spatial.dec.cont_dim)
    with pytest.raises(ValueError, match="needs the frames"):
        dec(cont)
    f1, f2 = torch.randn(2, 512, 7, 7), torch.randn(2, 512, 7, 7)
    with torch.no_grad():
        assert not torch.allclose(dec(cont, f1), dec(cont, f2))
        official = plain.dec.mask_dec.eval()
        assert torch.equal(
            plain.dec.decode_mask(cont, f1), official(cont)
        )  # frames are not its input


def _localisation_batch(n: int, gen: torch.Generator):
    """Frames with one 'apple' cell (channel 0) and one 'mug' cell (channel 1) at random places; the
    state names which one (one-hot); the target is that cell's 1/7 of a 28×28 mask."""
    frames = torch.zeros(n, 512, 7, 7)
    state = torch.zeros(n, 8)
    target = torch.zeros(n, 28, 28)
    for i in range(n):
        cells = torch.randperm(49, generator=gen)[:2]
        which = int(torch.randint(2, (1,), generator=gen))
        for ch, cell in enumerate(cells.tolist()):
            frames[i, ch, cell // 7, cell % 7] = 3.0
        state[i, which] = 1.0
        r, c = divmod(int(cells[which]), 7)
        target[i, 4 * r : 4 * r + 4, 4 * c : 4 * c + 4] = 1.0
    return frames, state, target


def _fit_and_predict(dec, make_batch, steps: int, batch: int, lr: float):
    """Train `dec` with ALFRED's balanced mask BCE on seeded synthetic batches, then its logits
    and the targets on 64 fresh examples."""
    gen = torch.Generator().manual_seed(0)
    opt = torch.optim.Adam(dec.parameters(), lr=lr)
    for _ in range(steps):
        frames, state, target = make_batch(batch, gen)
        loss = balanced_mask_bce(dec(state, frames), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dec.eval()
    frames, state, target = make_batch(64, gen)
    with torch.no_grad():
        return dec(state, frames), target


@pytest.mark.parametrize("spatial", [False, True])
def test_only_the_spatial_mask_decoder_finds_the_object_the_state_names(spatial):
    """Where the named object is lies only in the frame: the spatial decoder learns to put the mask
    on it (checked on fresh layouts), ALFRED's decoder, which reads only the state, cannot."""
    from alfred_task.models.modules import MaskDecoder

    torch.manual_seed(0)
    dec = MaskDecoder(dhid=8, pframe=28, spatial=spatial)
    logits, target = _fit_and_predict(dec, _localisation_batch, steps=50, batch=8, lr=3e-3)
    hits = [
        int(logits[i].argmax()) in set(target[i].flatten().nonzero().view(-1).tolist())
        for i in range(64)
    ]
    accuracy = sum(hits) / len(hits)
    assert accuracy > 0.9 if spatial else accuracy < 0.3, accuracy


def _subcell_batch(n: int, gen: torch.Generator):
    """Frames where an 'apple' and a 'mug' each sit in one sub-cell of a random 7×7 cell (channel
    16·object + sub-cell position); the state names one; the target is its single 28×28 sub-cell."""
    frames = torch.zeros(n, 512, 7, 7)
    state = torch.zeros(n, 8)
    target = torch.zeros(n, 28, 28)
    for i in range(n):
        cells = torch.randperm(49, generator=gen)[:2]
        subs = torch.randint(16, (2,), generator=gen)
        which = int(torch.randint(2, (1,), generator=gen))
        for obj, (cell, sub) in enumerate(zip(cells.tolist(), subs.tolist())):
            frames[i, 16 * obj + sub, cell // 7, cell % 7] = 3.0
        state[i, which] = 1.0
        (r, c), (sr, sc) = divmod(int(cells[which]), 7), divmod(int(subs[which]), 4)
        target[i, 4 * r + sr, 4 * c + sc] = 1.0
    return frames, state, target


def test_subcell_mask_head_finds_the_named_object_inside_a_cell():
    """The sub-cell head puts the mask's peak on the named object's own sub-cell (fresh layouts),
    smaller than a 7×7 cell; its two modules are the only extra keys."""
    from alfred_task.models.modules import MaskDecoder

    plain, sub = Seq2Seq(num_words=50, **LITE), Seq2Seq(num_words=50, **LITE, subcell_mask=True)
    assert set(sub.state_dict()) - set(plain.state_dict()) == {
        f"dec.mask_dec.sub_{m}.{p}" for m in ("key", "query") for p in ("weight", "bias")
    }
    torch.manual_seed(0)
    dec = MaskDecoder(dhid=8, pframe=28, subcell=True)
    with pytest.raises(ValueError, match="needs the frames"):
        dec(torch.zeros(1, 8))
    logits, target = _fit_and_predict(dec, _subcell_batch, steps=150, batch=16, lr=1e-2)
    hits = [int(logits[i].argmax()) == int(target[i].argmax()) for i in range(64)]
    assert sum(hits) / len(hits) > 0.8, sum(hits) / len(hits)


def test_lite_model_learns_a_sequence():
    """A few Adam steps on one demonstration drive action CE and mask loss down (not a stub)."""
    torch.manual_seed(0)
    m = Seq2Seq(num_words=50, pframe=32, vis_dropout=0.0, hstate_dropout=0.0, **LITE)
    goal, instr = _lang(2)
    frames = torch.randn(2, 6, 512, 7, 7)
    actions = torch.tensor([[3, 4, 6, 5, 11, 2], [4, 4, 9, 2, 0, 0]])
    inter = torch.tensor(
        [[C.has_interaction(C.ACTION_LOW_VOCAB[a]) for a in row] for row in actions.tolist()]
    )
    gold = torch.zeros(int(inter.sum()), 32, 32)
    gold[:, 8:20, 10:22] = 1
    opt = torch.optim.Adam(m.parameters(), lr=3e-3)
    first = last = None
    for _ in range(30):
        out = m(goal, instr, frames, mask_steps=inter)
        total, info = seq2seq_losses(
            out.action_logits,
            actions,
            mask_logits=out.mask_logits,
            gold_masks=gold,
            subgoal=out.subgoal,
            progress=out.progress,
            high_idx=torch.zeros_like(actions),
        )
        opt.zero_grad()
        total.backward()
        opt.step()
        first = first or info
        last = info
    assert last["action_low"] < 0.3 * first["action_low"]
    assert last["action_low_mask"] < 0.5 * first["action_low_mask"]


# ----------------------------------------------------------------------------- AllenAct wrapper
def _obs_space(lg: int = 6, li: int = 11) -> gym.spaces.Dict:
    return gym.spaces.Dict(
        {
            LANG_GOAL_UUID: gym.spaces.Box(0, 10**6, (lg,), np.int64),
            LANG_INSTR_UUID: gym.spaces.Box(0, 10**6, (li,), np.int64),
            RESNET_UUID: gym.spaces.Box(-np.inf, np.inf, (512, 7, 7), np.float32),
        }
    )


def _memory(model, b: int) -> Memory:
    mem = Memory()
    for key, (dims, dtype) in model.recurrent_memory_specification.items():
        mem.check_append(
            key, torch.zeros(*[d if d is not None else b for _, d in dims], dtype=dtype), 1
        )
    return mem


def _rollout_obs(t: int, b: int, seed: int = 0, new_episode: tuple[int, int] = (3, 1)) -> dict:
    """Rollout observations; language is constant per episode, and sampler new_episode[1]
    starts another episode (other language) at step new_episode[0]."""
    g = torch.Generator().manual_seed(seed)
    goal, instr = _lang(b + 1, seed=seed)
    goal, instr = goal.unsqueeze(0).repeat(t, 1, 1), instr.unsqueeze(0).repeat(t, 1, 1)
    at, row = new_episode
    goal[at:, row], instr[at:, row] = goal[at:, b], instr[at:, b]
    expert = torch.stack(
        [torch.randint(0, 13, (t, b), generator=g), torch.ones(t, b, dtype=torch.long)], -1
    )
    expert[1, 0, 1] = 0  # an expert failure: ignored by the loss
    return {
        LANG_GOAL_UUID: goal[:, :b],
        LANG_INSTR_UUID: instr[:, :b],
        RESNET_UUID: torch.randn(t, b, 512, 7, 7, generator=g),
        EXPERT_ACTION_UUID: expert,
        EXPERT_MASK_UUID: (torch.rand(t, b, 300, 300, generator=g) > 0.8).to(torch.uint8),
        EXPERT_HIGH_IDX_UUID: torch.randint(0, 4, (t, b, 1), generator=g),
        EXPERT_PROGRESS_UUID: torch.rand(t, b, 1, generator=g),
    }


def test_wrapper_state_dict_is_alfreds_with_prefix():
    shapes = official_shapes()["seq2seq_im_mask+PM"]
    ac = AlfredSeq2SeqActorCritic(
        gym.spaces.Discrete(13), _obs_space(), num_words=shapes["emb_word.weight"][0]
    )
    got = {k: list(v.shape) for k, v in ac.state_dict().items()}
    assert got == {STATE_PREFIX + k: v for k, v in shapes.items()}
    assert AlfredSeq2SeqActorCritic.alfred_state_dict(ac.state_dict()).keys() == shapes.keys()
    with pytest.raises(ValueError, match="Discrete\\(13\\)"):
        AlfredSeq2SeqActorCritic(gym.spaces.Discrete(12), _obs_space(), num_words=10)
    with pytest.raises(ValueError, match="lacks"):
        AlfredSeq2SeqActorCritic(gym.spaces.Discrete(13), gym.spaces.Dict({}), num_words=10)


@pytest.mark.parametrize("prev", ["argmax", "taken"])
def test_wrapper_sequence_equals_step_by_step(prev):
    """Offline [T, B] batches and online one-step calls with carried memory give the same outputs,
    including an episode reset (masks == 0) in the middle of the batch."""
    torch.manual_seed(0)
    ac = AlfredSeq2SeqActorCritic(
        gym.spaces.Discrete(13), _obs_space(), num_words=50, prev_action_input=prev, **LITE
    ).eval()
    t, b = 5, 3
    obs = _rollout_obs(t, b)
    masks = torch.ones(t, b, 1)
    masks[0] = 0
    masks[3, 1] = 0
    prev_actions = torch.randint(0, 13, (t, b))
    with torch.no_grad():
        full, mem_full = ac(obs, _memory(ac, b), prev_actions, masks)
        mem, logits = _memory(ac, b), []
        for i in range(t):
            out, mem = ac(
                {k: v[i : i + 1] for k, v in obs.items()},
                mem,
                prev_actions[i : i + 1],
                masks[i : i + 1],
            )
            logits.append(out.distributions.logits)
    assert full.distributions.logits.shape == (t, b, 13) and full.values.abs().sum() == 0
    assert torch.allclose(torch.cat(logits), full.distributions.logits, atol=1e-5)
    assert torch.allclose(mem.tensor("h"), mem_full.tensor("h"), atol=1e-5)
    # the 13 task actions are the vocabulary's, in the task's order
    ids = [C.ACTION_LOW_VOCAB.index(name) for name in C.AGENT_ACTIONS]
    picked = torch.log_softmax(full.extras["alfred_vocab_logits"][..., ids], -1)
    assert torch.allclose(full.distributions.logits, picked, atol=1e-5)


@pytest.mark.parametrize("prev", ["argmax", "taken"])
def test_previous_action_input_is_the_taken_action_only_when_asked(prev):
    """`taken` (ALFRED's --dec_teacher_forcing, what evaluation feeds) reads AllenAct's prev_actions
    from step 1 on; `argmax` (ALFRED's default) ignores them."""
    torch.manual_seed(2)
    ac = AlfredSeq2SeqActorCritic(
        gym.spaces.Discrete(13), _obs_space(), num_words=50, prev_action_input=prev, **LITE
    ).eval()
    t, b = 4, 2
    obs, masks = _rollout_obs(t, b), torch.ones(t, b, 1)
    masks[0] = 0
    first = torch.zeros(t, b, dtype=torch.long)
    other = first.clone()
    other[2] = 5  # a different action taken before step 2
    with torch.no_grad():
        out_a, _ = ac(obs, _memory(ac, b), first, masks)
        out_b, _ = ac(obs, _memory(ac, b), other, masks)
    la, lb = out_a.distributions.logits, out_b.distributions.logits
    assert torch.allclose(la[:2], lb[:2])
    assert torch.allclose(la[2:], lb[2:]) == (prev == "argmax")


def test_wrapper_episode_reset_uses_new_language():
    torch.manual_seed(1)
    ac = AlfredSeq2SeqActorCritic(
        gym.spaces.Discrete(13), _obs_space(), num_words=50, **LITE
    ).eval()
    obs = _rollout_obs(2, 1, new_episode=(1, 0))
    with torch.no_grad():
        fresh, _ = ac(
            {k: v[1:] for k, v in obs.items()}, _memory(ac, 1), None, torch.zeros(1, 1, 1)
        )
        cont, _ = ac(obs, _memory(ac, 1), None, torch.tensor([[[0.0]], [[0.0]]]))
        carry, _ = ac(obs, _memory(ac, 1), None, torch.tensor([[[0.0]], [[1.0]]]))
    assert torch.allclose(cont.distributions.logits[1], fresh.distributions.logits[0], atol=1e-5)
    assert not torch.allclose(
        carry.distributions.logits[1], fresh.distributions.logits[0], atol=1e-3
    )


def _step_rollout(ac, obs, masks, seed):
    """One-step-at-a-time rollout in train mode without autograd (AllenAct's collection), seeded."""
    torch.manual_seed(seed)
    t, b = masks.shape[:2]
    mem, logits = _memory(ac, b), []
    with torch.no_grad():
        for i in range(t):
            out, mem = ac({k: v[i : i + 1] for k, v in obs.items()}, mem, None, masks[i : i + 1])
            logits.append(out.distributions.logits)
    return torch.cat(logits)


def test_rollout_language_cache_changes_nothing():
    """The per-rollout language cache (`_language`) gives bit-identical outputs and random draws
    (train-mode dropout), re-encodes a new episode's language, and is dropped when weights change."""
    torch.manual_seed(0)
    ac = AlfredSeq2SeqActorCritic(
        gym.spaces.Discrete(13), _obs_space(), num_words=50, **LITE
    ).train()
    obs = _rollout_obs(6, 2, new_episode=(3, 1))
    masks = torch.ones(6, 2, 1)
    masks[0] = 0
    masks[3, 1] = 0
    calls = []
    encode = ac._encode
    ac._encode = lambda g, i: calls.append(1) or encode(g, i)
    cached = _step_rollout(ac, obs, masks, seed=3)
    assert len(calls) == 2  # the first step and the new episode of sampler 1, not every step
    uncached = AlfredSeq2SeqActorCritic(
        gym.spaces.Discrete(13), _obs_space(), num_words=50, **LITE
    ).train()
    uncached.load_state_dict(ac.state_dict())
    uncached._language = uncached._encode
    assert torch.equal(cached, _step_rollout(uncached, obs, masks, seed=3))
    same = _rollout_obs(6, 2, new_episode=(6, 1))  # one language per sampler throughout
    _step_rollout(ac, same, masks, seed=4)  # the cache now holds it
    with torch.no_grad():  # an in-place weight change with no forward in between (optimizer step)
        for p in ac.seq2seq.enc.parameters():
            p.add_(0.5)
    uncached.load_state_dict(ac.state_dict())
    assert torch.equal(
        _step_rollout(ac, same, masks, seed=4), _step_rollout(uncached, same, masks, seed=4)
    )


@pytest.mark.parametrize("mask_head", ["alfred", "spatial_mask", "subcell_mask"])
def test_allenact_losses_train_the_wrapper(mask_head):
    torch.manual_seed(0)
    extra = {} if mask_head == "alfred" else {mask_head: True}
    ac = AlfredSeq2SeqActorCritic(
        gym.spaces.Discrete(13), _obs_space(), num_words=50, pframe=300, **LITE, **extra
    ).train()
    t, b = 4, 2
    obs = _rollout_obs(t, b)
    masks = torch.ones(t, b, 1)
    masks[0] = 0
    out, _ = ac(obs, _memory(ac, b), None, masks)
    sel = out.extras["alfred_mask_steps"]
    inter = torch.tensor([C.has_interaction(a) for a in C.AGENT_ACTIONS])
    assert torch.equal(sel, inter[obs[EXPERT_ACTION_UUID][..., 0]])
    assert out.extras["alfred_mask_logits"].shape == (int(sel.sum()), 300, 300)
    total, info = AlfredSeq2SeqLoss().loss(0, {"observations": obs}, out)
    assert set(info) >= {"action_low", "subgoal_aux", "progress_aux", "total"}
    if sel.any():
        assert "action_low_mask" in info
    total.backward()
    assert ac.seq2seq.emb_word.weight.grad is not None
    if extra and sel.any():  # the mask loss reaches the frame path
        dec = ac.seq2seq.dec.mask_dec
        frame_path = dec.vis_conv if mask_head == "spatial_mask" else dec.sub_key
        assert frame_path.weight.grad.abs().sum() > 0
    offline = AlfredSeq2SeqOfflineLoss().loss(
        model=ac,
        batch={"observations": obs, "masks": masks},
        batch_memory=Memory(),
        stream_memory=_memory(ac, b),
    )
    assert offline.bsize == t * b and offline.value.requires_grad
    assert not offline.stream_memory.tensor("h").requires_grad


@pytest.mark.parametrize("freeze", [False, True])
def test_frozen_batchnorm_keeps_running_statistics_in_training_mode(freeze):
    """DAgger's rollouts are a couple of episodes' frames: with `freeze_batchnorm` a training-mode
    forward normalises with (and leaves untouched) the running statistics, dropout stays active."""
    torch.manual_seed(3)
    ac = AlfredSeq2SeqActorCritic(
        gym.spaces.Discrete(13), _obs_space(), num_words=50, freeze_batchnorm=freeze, **LITE
    )
    bns = [m for m in ac.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    drops = [m for m in ac.modules() if isinstance(m, torch.nn.Dropout) and m.p > 0]
    assert bns and drops
    ac.train()
    assert all(m.training != freeze for m in bns) and all(m.training for m in drops)
    before = [m.running_mean.clone() for m in bns]
    t, b = 4, 2
    obs, masks = _rollout_obs(t, b), torch.ones(t, b, 1)
    masks[0] = 0
    obs[RESNET_UUID] = obs[RESNET_UUID] * 5 + 3  # far from the running statistics
    with torch.no_grad():
        ac(obs, _memory(ac, b), torch.zeros(t, b, dtype=torch.long), masks)
    moved = any(not torch.equal(m.running_mean, x) for m, x in zip(bns, before))
    assert moved != freeze
    ac.eval()
    assert not any(m.training for m in bns + drops)


def test_emit_masks_policy_acts_with_its_mask_logits_and_the_same_action_distribution():
    """allenact --eval's policy: Dict actions {action, mask}; the action part, its probabilities
    and the previous-action input (a Dict from AllenAct's storage) are those of the plain policy."""
    from collections import OrderedDict

    torch.manual_seed(0)
    plain = AlfredSeq2SeqActorCritic(
        gym.spaces.Discrete(13), _obs_space(), num_words=50, prev_action_input="taken", **LITE
    ).eval()
    emit = AlfredSeq2SeqActorCritic(
        gym.spaces.Discrete(13),
        _obs_space(),
        num_words=50,
        prev_action_input="taken",
        emit_masks=True,
        **LITE,
    ).eval()
    emit.load_state_dict(plain.state_dict())
    p = plain.seq2seq.pframe
    assert isinstance(emit.action_space, gym.spaces.Dict) and emit.action_space["mask"].shape == (
        p * p,
    )
    t, b = 3, 2
    obs = _rollout_obs(t, b)
    masks = torch.ones(t, b, 1)
    masks[0] = 0
    prev = torch.randint(0, 13, (t, b))
    with torch.no_grad():
        a, _ = plain(obs, _memory(plain, b), prev, masks)
        e, _ = emit(
            obs, _memory(emit, b), OrderedDict(action=prev, mask=torch.zeros(t, b, p * p)), masks
        )
        frames = plain.seq2seq.prepare_frames(obs[RESNET_UUID].float())
        want = plain.decode_masks(a.extras["alfred_cont"].flatten(0, 1), frames.flatten(0, 1)).view(
            t, b, -1
        )
    mode = e.distributions.mode()
    assert list(mode) == ["action", "mask"] and torch.equal(mode["action"], a.distributions.mode())
    assert torch.allclose(mode["mask"], want, atol=1e-5)
    assert torch.allclose(e.distributions.log_prob(mode), a.distributions.log_prob(mode["action"]))
    assert torch.allclose(e.distributions.entropy(), a.distributions.entropy())
