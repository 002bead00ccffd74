"""ALFRED model.pth <-> AllenAct checkpoint: official keys/shapes load strictly, every tensor survives
a round trip, ALFRED's objects (Namespace, vocab.Vocab) come back, bad input gives one line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import torch

from alfred_task import constants as C
from alfred_task.training.convert_checkpoint import load_seq2seq_checkpoint, main
from alfred_task.data.vocabulary import AlfredVocab, Vocab, lookup

KEYS_JSON = (
    Path(__file__).resolve().parent / "fixtures" / "alfred_seq2seq_official_state_dict_keys.json"
)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _vocab(n_words: int) -> AlfredVocab:
    v = AlfredVocab.new()
    for i in range(n_words - len(v.word)):
        lookup(v.word, f"w{i}", True)
    lookup(v.action_high, "GotoLocation", True)
    return v


def fake_alfred_pth(path: Path, variant: str, shapes: dict | None = None) -> dict:
    """A model.pth as ALFRED's train_seq2seq writes it, tensors from the official key/shape list."""
    if shapes is None:
        shapes = json.loads(KEYS_JSON.read_text())[variant]
    g = torch.Generator().manual_seed(len(shapes))
    state = {k: (torch.randn(s, generator=g) if s else torch.tensor(11)) for k, s in shapes.items()}
    state["dec.emb.weight"] = state["emb_action_low.weight"]
    args = argparse.Namespace(
        seed=123,
        batch=8,
        lr=1e-4,
        dhid=512,
        dframe=2500,
        demb=100,
        pframe=300,
        vis_dropout=0.3,
        hstate_dropout=0.3,
        lang_dropout=0.0,
        input_dropout=0.0,
        attn_dropout=0.0,
        actor_dropout=0.0,
        zero_goal=False,
        zero_instr=False,
        dec_teacher_forcing=False,
        pm_aux_loss_wt=0.1,
        subgoal_aux_loss_wt=0.1,
        model="seq2seq_im_mask",
        dout="exp/model:{model}",
    )
    optim = {
        "state": {0: {"step": 10, "exp_avg": torch.ones(3)}},
        "param_groups": [{"lr": 1e-4, "params": [0]}],
    }
    obj = {
        "metric": {"action_low_f1": 0.5},
        "model": state,
        "optim": optim,
        "args": args,
        "vocab": _vocab(shapes["emb_word.weight"][0]).to_alfred(),
    }
    torch.save(obj, path)
    return obj


@pytest.mark.parametrize("variant", ["seq2seq_im_mask+PM", "seq2seq_im_mask"])
def test_round_trip_preserves_every_tensor(tmp_path, variant, capsys):
    src = tmp_path / "model.pth"
    orig = fake_alfred_pth(src, variant)
    assert main([str(src), str(tmp_path / "allenact.pt")]) == 0
    ckpt = torch.load(
        tmp_path / "allenact.pt", weights_only=True
    )  # as AllenAct's checkpoint_load reads it
    assert set(ckpt["model_state_dict"]) == {"seq2seq." + k for k in orig["model"]}
    wrapper, vocab = load_seq2seq_checkpoint(tmp_path / "allenact.pt")  # strict load inside
    assert wrapper.seq2seq.progress_monitor == (variant.endswith("+PM"))
    assert (
        wrapper.seq2seq.dhid == 512
        and wrapper.seq2seq.dframe == 2500
        and not wrapper.seq2seq.mask_lang_padding
    )
    for k, v in orig["model"].items():
        assert torch.equal(wrapper.state_dict()["seq2seq." + k], v), k
    assert vocab == AlfredVocab.from_dict(orig["vocab"])

    assert main(["--to-alfred", str(tmp_path / "allenact.pt"), str(tmp_path / "back.pth")]) == 0
    back = torch.load(tmp_path / "back.pth", weights_only=False)  # what ALFRED's code does
    assert back["model"].keys() == orig["model"].keys()
    assert all(torch.equal(back["model"][k], v) for k, v in orig["model"].items())
    assert back["args"] == orig["args"] and isinstance(back["args"], argparse.Namespace)
    assert all(type(v) is Vocab and v == orig["vocab"][k] for k, v in back["vocab"].items())
    assert (
        torch.equal(back["optim"]["state"][0]["exp_avg"], torch.ones(3))
        and back["metric"] == orig["metric"]
    )
    assert "wrote" in capsys.readouterr().out


def _small_shapes(pm: bool) -> dict:
    from alfred_task.models.seq2seq import Seq2Seq

    m = Seq2Seq(num_words=40, demb=8, dhid=16, dframe=24, progress_monitor=pm)
    return {k: list(v.shape) for k, v in m.state_dict().items()}


def _fails(argv, capsys, match: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    assert match in err, err


def test_bad_inputs_one_line_nothing_written(tmp_path, capsys):
    out = tmp_path / "out.pt"
    _fails([str(tmp_path / "nope.pth"), str(out)], capsys, "nope.pth: file not found")
    (tmp_path / "junk.pth").write_bytes(b"not a checkpoint")
    _fails(
        [str(tmp_path / "junk.pth"), str(out)], capsys, "junk.pth: not a readable torch checkpoint"
    )
    torch.save([1, 2], tmp_path / "list.pth")
    _fails([str(tmp_path / "list.pth"), str(out)], capsys, "expected a dict, got list")
    obj = fake_alfred_pth(tmp_path / "ok.pth", "", _small_shapes(True))
    torch.save({k: v for k, v in obj.items() if k != "vocab"}, tmp_path / "novocab.pth")
    _fails([str(tmp_path / "novocab.pth"), str(out)], capsys, "missing 'vocab'")
    bad = dict(obj, model={k: v for k, v in obj["model"].items() if k != "dec.h_tm1_fc.bias"})
    torch.save(bad, tmp_path / "missing_key.pth")
    _fails([str(tmp_path / "missing_key.pth"), str(out)], capsys, "dec.h_tm1_fc.bias")
    small = dict(obj, vocab=_vocab(30).to_alfred())
    torch.save(small, tmp_path / "vocab_size.pth")
    _fails(
        [str(tmp_path / "vocab_size.pth"), str(out)], capsys, "do not match the embeddings (word 40"
    )
    torch.save({"model_state_dict": {}}, tmp_path / "empty_ckpt.pt")
    _fails(
        ["--to-alfred", str(tmp_path / "empty_ckpt.pt"), str(out)],
        capsys,
        "no 'seq2seq.' parameters",
    )
    _fails([str(tmp_path / "ok.pth"), str(tmp_path)], capsys, "is a folder")
    (tmp_path / "afile").write_text("x")
    _fails([str(tmp_path / "ok.pth"), str(tmp_path / "afile" / "out.pt")], capsys, "cannot write")
    assert not out.exists() and not list(tmp_path.glob("*.tmp*"))


def test_small_model_converts_and_reverse_needs_vocab(tmp_path, capsys):
    fake_alfred_pth(tmp_path / "m.pth", "", _small_shapes(False))
    assert main([str(tmp_path / "m.pth"), str(tmp_path / "a.pt")]) == 0
    wrapper, vocab = load_seq2seq_checkpoint(tmp_path / "a.pt")
    assert wrapper.seq2seq.dhid == 16 and tuple(wrapper.action_vocab) == C.ACTION_LOW_VOCAB
    ckpt = torch.load(tmp_path / "a.pt", weights_only=True)
    del ckpt["kwargs"], ckpt["alfred"]  # e.g. a checkpoint trained by AllenAct without our metadata
    torch.save(ckpt, tmp_path / "bare.pt")
    _fails(
        ["--to-alfred", str(tmp_path / "bare.pt"), str(tmp_path / "b.pth")],
        capsys,
        "pass --vocab pp.vocab",
    )
    vocab.save(tmp_path / "pp.vocab")
    assert (
        main(
            [
                "--to-alfred",
                str(tmp_path / "bare.pt"),
                str(tmp_path / "b.pth"),
                "--vocab",
                str(tmp_path / "pp.vocab"),
            ]
        )
        == 0
    )
    back = torch.load(tmp_path / "b.pth", weights_only=False)
    assert back["args"].dhid == 16 and len(back["vocab"]["word"]) == 40


def test_attach_makes_a_trained_checkpoint_evaluable(tmp_path, capsys):
    from alfred_task.models.actor_critic import build_actor_critic

    vocab = _vocab(40)
    vocab.save(tmp_path / "pp.vocab")
    kw = dict(num_words=40, demb=8, dhid=16, dframe=24)
    policy = build_actor_critic(kw)
    trained = {
        "model_state_dict": policy.state_dict(),
        "total_steps": 512,
        "trainer_seed": 3,
        "optimizer_state_dict": {"state": {}, "param_groups": []},
    }
    torch.save(trained, tmp_path / "exp__stage_00__steps_000000000512.pt")
    _fails(
        [
            "--attach",
            str(tmp_path / "exp__stage_00__steps_000000000512.pt"),
            str(tmp_path / "e.pt"),
        ],
        capsys,
        "--attach needs --vocab",
    )
    assert (
        main(
            [
                "--attach",
                str(tmp_path / "exp__stage_00__steps_000000000512.pt"),
                str(tmp_path / "e.pt"),
                "--vocab",
                str(tmp_path / "pp.vocab"),
                "--visual-encoder",
                "random_resnet18",
            ]
        )
        == 0
    )
    ckpt = torch.load(tmp_path / "e.pt", weights_only=True)
    assert ckpt["total_steps"] == 512 and ckpt["kwargs"]["visual_encoder"] == "random_resnet18"
    wrapper, back = load_seq2seq_checkpoint(tmp_path / "e.pt")
    assert wrapper.seq2seq.mask_lang_padding and back == vocab
    assert all(torch.equal(wrapper.state_dict()[k], v) for k, v in policy.state_dict().items())
