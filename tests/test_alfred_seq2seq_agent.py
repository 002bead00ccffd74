"""The Seq2Seq evaluation agent through `--agent checkpoint`: a converted checkpoint builds it,
it acts over the 13 agent actions with 300×300 masks, follows the model's step API and takes
teacher-forced expert steps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from alfred_task import constants as C
from alfred_task.evaluation.agents import CheckpointAgent
from alfred_task.training.convert_checkpoint import allenact_checkpoint
from alfred_task.data.features import ResnetFeatures
from alfred_task.models.actor_critic import build_actor_critic
from alfred_task.data.vocabulary import AlfredVocab, lookup

KW = dict(num_words=30, demb=8, dhid=16, dframe=24, progress_monitor=True, mask_lang_padding=False)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


class _Ev:
    def __init__(self, frame):
        self.frame = frame


class FrameEnv:
    """Only what the agent reads: ``last_event.frame``; each `advance` shows a new seeded frame."""

    def __init__(self):
        self.rng = np.random.default_rng(0)
        self.advance()

    def advance(self):
        self.last_event = _Ev(self.rng.integers(0, 256, (300, 300, 3), dtype=np.uint8))


def _vocab() -> AlfredVocab:
    v = AlfredVocab.new()
    for w in ("put", "the", "apple", "on", "counter", "walk", ".", C.STOP):
        lookup(v.word, w, True)
    while len(v.word) < KW["num_words"]:
        lookup(v.word, f"w{len(v.word)}", True)
    return v


def _checkpoint(tmp_path):
    torch.manual_seed(0)
    policy = build_actor_critic(dict(KW))
    path = tmp_path / "seq2seq.pt"
    torch.save(
        allenact_checkpoint(policy.state_dict(), dict(KW), _vocab(), "random_resnet18"), path
    )
    return path, policy


TRAJ = {
    "turk_annotations": {
        "anns": [
            {
                "task_desc": "Put the apple on the counter.",
                "high_descs": ["Walk to the counter.", "Put the unknownword apple."],
            }
        ]
    }
}


def test_checkpoint_agent_acts_like_the_model(tmp_path):
    path, policy = _checkpoint(tmp_path)
    agent = CheckpointAgent(path).inner
    assert agent.visual_encoder == {"name": "random_resnet18", "weights": "random", "seed": 0}
    env = FrameEnv()
    agent.reset(TRAJ, 0, env)
    # the same episode by hand: ALFRED's numericalisation (unknown words -> <<pad>>), start, step
    ids = agent.vocab.word._word2index
    goal = [ids[w] for w in ("put", "the", "apple", "on", "the", "counter", ".")] + [C.GOAL_INDEX]
    instr = [
        ids["walk"],
        0,
        ids["the"],
        ids["counter"],
        ids["."],
        ids["put"],
        ids["the"],
        0,
        ids["apple"],
        ids["."],
        ids[C.STOP],
    ]
    model = policy.seq2seq.eval()
    with torch.no_grad():
        state = model.start(torch.tensor([goal]), torch.tensor([instr]))
    assert torch.equal(state.enc, agent.state.enc)
    feats = ResnetFeatures("random_resnet18")
    allowed = [C.ACTION_LOW_VOCAB.index(a) for a in C.AGENT_ACTIONS]
    for _ in range(3):
        with torch.no_grad():
            out, _ = model.step(feats([env.last_event.frame]), state)
        expect = C.ACTION_LOW_VOCAB[allowed[int(out.action_logits[0, allowed].argmax())]]
        action, mask = agent.act(env)
        assert action == expect
        if C.has_interaction(action):
            assert mask.shape == C.MASK_SHAPE and mask.dtype == bool
        else:
            assert mask is None
        vid = torch.tensor([C.ACTION_LOW_VOCAB.index(action)])
        with torch.no_grad():
            _, state = model.step(feats([env.last_event.frame]), state)
        state.e_prev = model.dec.emb(vid)  # the agent feeds back the action it chose
        env.advance()


def test_teacher_forced_steps_set_previous_action(tmp_path):
    path, _ = _checkpoint(tmp_path)
    a, b = CheckpointAgent(path).inner, CheckpointAgent(path).inner
    env_a, env_b = FrameEnv(), FrameEnv()
    a.reset(TRAJ, 0, env_a)
    b.reset(TRAJ, 0, env_b)
    env_a.advance(), env_b.advance()
    a.teacher_force(env_a, "MoveAhead_25", None, True)
    b.teacher_force(env_b, "PickupObject", np.zeros(C.MASK_SHAPE, bool), True)
    assert torch.equal(a.state.h, b.state.h)  # same frames so far: same decoder state
    assert torch.equal(
        a.state.e_prev,
        a.model.dec.emb.weight[C.ACTION_LOW_VOCAB.index("MoveAhead_25")].unsqueeze(0),
    )
    assert not torch.equal(a.state.e_prev, b.state.e_prev)
    assert isinstance(a.act(env_a)[0], str)


def test_repeated_frames_are_featurised_once_with_identical_features(tmp_path):
    """Subgoal evaluation replays the same expert prefix once per subgoal: the agent's feature
    cache must run ResNet once per distinct frame and return exactly what ResNet returns."""
    path, _ = _checkpoint(tmp_path)
    inner = CheckpointAgent(path).inner
    calls = []
    encoder = inner.features

    def counting(frames):
        calls.append(len(frames))
        return encoder(frames)

    inner.features = counting
    env = FrameEnv()
    first = env.last_event.frame
    a = inner._featurize(first)
    env.advance()
    b = inner._featurize(env.last_event.frame)
    again = inner._featurize(first.copy())  # equal content, another array
    assert calls == [1, 1]
    assert torch.equal(again, a) and not torch.equal(a, b)
    assert torch.equal(a, encoder([first]))


def test_mask_rules_threshold_is_alfreds_and_top_k_keeps_the_most_confident_pixels():
    from alfred_task.models.mask_rules import parse_mask_rule

    logits = torch.randn(300, 300, generator=torch.Generator().manual_seed(0)) * 3
    assert np.array_equal(
        parse_mask_rule("threshold")(logits), (torch.sigmoid(logits) > 0.5).numpy()
    )
    top = parse_mask_rule("top_k:1500")(logits)
    assert top.sum() == 1500
    # every kept pixel is at least as confident as every dropped one
    assert logits.numpy()[top].min() >= logits.numpy()[~top].max()
    for bad in ("top_k:0", "top_k:x", "top_k", "peak", "", "top_k:5@", "top_k:5@MoveAhead_25"):
        with pytest.raises(ValueError, match="mask rule"):
            parse_mask_rule(bad)
    only_pickup = parse_mask_rule("top_k:1500@PickupObject+SliceObject")
    assert only_pickup.spec == "top_k:1500@PickupObject+SliceObject"
    assert np.array_equal(only_pickup(logits, "PickupObject"), top)
    assert np.array_equal(only_pickup(logits, "PutObject"), parse_mask_rule("threshold")(logits))


def test_checkpoint_overrides_choose_the_agents_mask_rule(tmp_path):
    path, _ = _checkpoint(tmp_path)
    default = CheckpointAgent(path).inner
    topk = CheckpointAgent(path, mask_rule="top_k:700").inner
    assert default.mask_rule.spec == "threshold" and topk.mask_rule.spec == "top_k:700"
    env = FrameEnv()
    for agent in (default, topk):
        agent.reset(TRAJ, 0, env)
    # force an interaction so both agents decode a mask from the same state
    interact = C.ACTION_LOW_VOCAB.index("PickupObject")
    for agent in (default, topk):
        agent.allowed = torch.tensor([interact])
    (a1, _), (a2, m2) = default.act(env), topk.act(env)
    assert a1 == a2 == "PickupObject"
    assert m2.sum() == 700 and m2.shape == C.MASK_SHAPE
    with pytest.raises(Exception, match="mask rule 'top_k:-1'"):
        CheckpointAgent(path, mask_rule="top_k:-1")


class _MetaEv(_Ev):
    def __init__(self, frame, ok: bool):
        super().__init__(frame)
        self.metadata = {"lastActionSuccess": ok}


def _rank_actions(agent, order: list[str]) -> list[int]:
    """Make the agent's decoder rank the actions of `order` first to last at every step; the
    returned id list is read at each step, so reordering it in place changes the ranking."""
    ids = [C.ACTION_LOW_VOCAB.index(a) for a in order]
    real_decode = agent._decode

    def fixed_decode(frame):
        lo, cont, h, c, feat = real_decode(frame)
        lo = torch.full_like(lo, -10.0)
        for rank, i in enumerate(ids):
            lo[0, i] = 3.0 - rank
        return lo, cont, h, c, feat

    agent._decode = fixed_decode
    return ids


@pytest.mark.parametrize("evasion", [False, True])
def test_obstruction_evasion_skips_a_navigation_action_that_just_failed(tmp_path, evasion):
    path, _ = _checkpoint(tmp_path)
    agent = CheckpointAgent(path, obstruction_evasion=evasion).inner
    env = FrameEnv()
    agent.reset(TRAJ, 0, env)
    ids = _rank_actions(
        agent, ["MoveAhead_25", "RotateLeft_90", "PickupObject"]
    )  # most to least likely
    env.last_event = _MetaEv(env.last_event.frame, True)
    assert agent.act(env)[0] == "MoveAhead_25"
    env.last_event = _MetaEv(env.last_event.frame, False)  # blocked: THOR reports the failure
    assert agent.act(env)[0] == ("RotateLeft_90" if evasion else "MoveAhead_25")
    env.last_event = _MetaEv(env.last_event.frame, True)
    assert agent.act(env)[0] == "MoveAhead_25"
    # only navigation is evaded: a failed interaction may be retried (its mask can change)
    ids[0], ids[2] = ids[2], ids[0]
    assert agent.act(env)[0] == "PickupObject"
    env.last_event = _MetaEv(env.last_event.frame, False)
    assert agent.act(env)[0] == "PickupObject"
    # a snapshot carries the last action: restoring it restores what gets evaded
    agent._prev_action = "RotateLeft_90"
    snap = agent.snapshot()
    agent._prev_action = None
    agent.restore(snap)
    assert agent._prev_action == "RotateLeft_90"
    with pytest.raises(Exception, match="obstruction_evasion"):
        CheckpointAgent(path, obstruction_evasion="yes")


def test_mask_rules_never_choose_excluded_pixels():
    from alfred_task.models.mask_rules import parse_mask_rule

    logits = torch.randn(300, 300, generator=torch.Generator().manual_seed(1)) * 3
    first = parse_mask_rule("top_k:700")(logits)
    second = parse_mask_rule("top_k:700")(logits, exclude=first)
    assert second.sum() == 700 and not (first & second).any()
    # the next 700 most confident pixels: together they are the top 1400
    assert np.array_equal(first | second, parse_mask_rule("top_k:1400")(logits))
    thr = parse_mask_rule("threshold")
    assert np.array_equal(thr(logits, exclude=first), thr(logits) & ~first)
    # fewer allowed pixels than k: only the allowed ones
    almost_all = np.ones((300, 300), dtype=bool)
    almost_all[0, :5] = False
    assert parse_mask_rule("top_k:700")(logits, exclude=almost_all).sum() == 5


@pytest.mark.parametrize("retries", [0, 2])
def test_interaction_retry_repeats_a_failed_interaction_with_untried_pixels(tmp_path, retries):
    path, _ = _checkpoint(tmp_path)
    agent = CheckpointAgent(path, interaction_retry=retries, mask_rule="top_k:700").inner
    env = FrameEnv()
    agent.reset(TRAJ, 0, env)
    ids = _rank_actions(
        agent, ["PickupObject", "LookUp_15", "MoveAhead_25"]
    )  # most to least likely
    env.last_event = _MetaEv(env.last_event.frame, True)
    action, first = agent.act(env)
    assert action == "PickupObject" and first.sum() == 700
    ids[0], ids[1] = ids[1], ids[0]  # the model now prefers to look up (moves on after the pickup)
    env.last_event = _MetaEv(env.last_event.frame, False)  # THOR: the pickup failed
    sent = [first]
    snap = None
    for k in range(retries):
        action, mask = agent.act(env)
        assert action == "PickupObject" and mask.sum() == 700
        assert not any((mask & m).any() for m in sent)  # never a pixel it already tried
        sent.append(mask)
        if k == 0:
            snap = agent.snapshot()
    assert agent.act(env)[0] == "LookUp_15"  # retries used up (or off): the model's own choice
    if retries:
        agent.restore(snap)  # a snapshot carries the retry state: one retry left
        action, mask = agent.act(env)
        assert action == "PickupObject" and np.array_equal(mask, sent[2])
        assert agent.act(env)[0] == "LookUp_15"
    # a successful interaction is never repeated
    ids[0], ids[1] = ids[1], ids[0]
    env.last_event = _MetaEv(env.last_event.frame, True)
    assert agent.act(env)[0] == "PickupObject"
    ids[0], ids[1] = ids[1], ids[0]
    assert agent.act(env)[0] == "LookUp_15"
    for bad in (-1, True, "2", 1.5):
        with pytest.raises(Exception, match="interaction_retry"):
            CheckpointAgent(path, interaction_retry=bad)


def test_retry_actions_limit_which_failed_interactions_are_retried(tmp_path):
    path, _ = _checkpoint(tmp_path)
    env = FrameEnv()
    for retry_actions, expected in (
        (["PutObject"], "LookUp_15"),
        (["PickupObject", "SliceObject"], "PickupObject"),
    ):
        agent = CheckpointAgent(
            path, interaction_retry=3, retry_actions=retry_actions, mask_rule="top_k:700"
        ).inner
        agent.reset(TRAJ, 0, env)
        ids = _rank_actions(agent, ["PickupObject", "LookUp_15"])
        env.last_event = _MetaEv(env.last_event.frame, True)
        assert agent.act(env)[0] == "PickupObject"
        ids.reverse()
        env.last_event = _MetaEv(env.last_event.frame, False)
        assert agent.act(env)[0] == expected
    for bad in ("PickupObject", [], ["MoveAhead_25"]):
        with pytest.raises(Exception, match="retry_actions"):
            CheckpointAgent(path, interaction_retry=1, retry_actions=bad)
