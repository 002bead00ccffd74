"""Convert a released ALFRED ``model.pth`` into an AllenAct checkpoint of our Seq2Seq wrapper, and back.

    python -m alfred_task.training.convert_checkpoint ALFRED_MODEL_PTH OUT.pt
    python -m alfred_task.training.convert_checkpoint --to-alfred ALLENACT_CKPT.pt OUT.pth [--vocab pp.vocab]
    python -m alfred_task.training.convert_checkpoint --attach TRAINED_CKPT.pt OUT.pt --vocab pp.vocab

ALFRED saves ``{model, optim, args, vocab}`` (plus ``metric``): the state dict, Adam's state, the
argparse Namespace and the ``vocab.Vocab`` dict. The AllenAct checkpoint holds
``model_state_dict`` (ALFRED's keys prefixed ``seq2seq.``, loads strictly into
`AlfredSeq2SeqActorCritic`), ``total_steps`` and ``trainer_seed`` (AllenAct's fields);
``agent``/``kwargs``/``state_dict`` (`alfred_task.evaluation.agents.CheckpointAgent`'s fields, so
``python -m alfred_task.evaluation --agent checkpoint`` evaluates it with `Seq2SeqAgent`; kwargs =
{model_kwargs, vocab (tokens and counts), visual_encoder}); and ``alfred`` = {args, optim, metric,
source}. Plain types only, so ``torch.load(weights_only=True)`` reads it, and converting back
restores ALFRED's objects.

Files are read without running arbitrary pickles (tensors, containers, Vocab, Counter and
Namespace only). Bad input: one line on stderr, exit 2, nothing written.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import Any, Optional, Sequence, Tuple

import torch

from common.atomic_io import write_bytes_atomic

from alfred_task.data.vocabulary import AlfredVocab, load_trusted, tokens_of


def build_actor_critic(model_kwargs: dict):
    """Lazy import: the wrapper pulls in allenact/gym, which `--help` does not need."""
    from alfred_task.models.actor_critic import build_actor_critic as build

    return build(model_kwargs)


__all__ = [
    "ConversionError",
    "model_kwargs_from_alfred",
    "allenact_checkpoint",
    "alfred_to_allenact",
    "allenact_to_alfred",
    "attach_metadata",
    "load_seq2seq_checkpoint",
    "main",
]

_DROPOUTS = (
    "vis_dropout",
    "hstate_dropout",
    "lang_dropout",
    "input_dropout",
    "attn_dropout",
    "actor_dropout",
)
_FLAGS = ("zero_goal", "zero_instr", "dec_teacher_forcing")


class ConversionError(ValueError):
    """A checkpoint cannot be converted; the message names the file and the field."""


def _plain(value: Any) -> Any:
    """Namespace values as plain Python types (AllenAct loads checkpoints with weights_only=True)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def _shape(state: dict, key: str, src: str) -> torch.Size:
    if key not in state or not torch.is_tensor(state[key]):
        raise ConversionError(
            f"{src}: model state dict lacks tensor {key!r}; not a seq2seq_im_mask checkpoint"
        )
    return state[key].shape


def model_kwargs_from_alfred(
    state: dict, args: dict, vocab: AlfredVocab, src: str = "<ckpt>"
) -> dict:
    """Our wrapper's constructor kwargs for an ALFRED state dict + args (dims read off the tensors)."""
    words, demb = _shape(state, "emb_word.weight", src)
    n_actions = _shape(state, "emb_action_low.weight", src)[0]
    kwargs = {
        "num_words": int(words),
        "demb": int(demb),
        "dhid": int(_shape(state, "enc.weight_hh_l0", src)[1]),
        "dframe": int(_shape(state, "dec.vis_encoder.fc.weight", src)[0]),
        "pframe": int(args.get("pframe", 300)),
        "progress_monitor": "dec.subgoal.weight" in state,
        "action_vocab": tokens_of(vocab.action_low),
        "mask_lang_padding": False,  # ALFRED's behaviour
    }
    kwargs.update({k: float(args[k]) for k in _DROPOUTS if k in args})
    kwargs.update({k: bool(args[k]) for k in _FLAGS if k in args})
    if len(vocab.word) != words or len(vocab.action_low) != n_actions:
        raise ConversionError(
            f"{src}: vocab sizes (word {len(vocab.word)}, action_low {len(vocab.action_low)}) do "
            f"not match the embeddings (word {words}, action_low {n_actions})"
        )
    return kwargs


def _read(path: Path) -> dict:
    if not path.is_file():
        raise ConversionError(f"{path}: file not found")
    try:
        data = load_trusted(path)
    except Exception as e:  # noqa: BLE001 - any unreadable file is the same user error
        first = (str(e).strip().splitlines() or [""])[0][:160]
        raise ConversionError(
            f"{path}: not a readable torch checkpoint ({type(e).__name__}: {first})"
        ) from None
    if not isinstance(data, dict):
        raise ConversionError(f"{path}: expected a dict, got {type(data).__name__}")
    return data


def _save(obj: dict, out: Path) -> Path:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return write_bytes_atomic(out, buf.getvalue())


def allenact_checkpoint(
    state: dict,
    model_kwargs: dict,
    vocab: AlfredVocab,
    visual_encoder: str = "imagenet",
    alfred: Optional[dict] = None,
    total_steps: int = 0,
    seed: int = 0,
) -> dict:
    """The checkpoint dict AllenAct and `CheckpointAgent` both read (`state` has the wrapper's keys)."""
    from alfred_task.models.agent import AGENT_REF

    kwargs = {
        "model_kwargs": model_kwargs,
        "vocab": vocab.to_record(),
        "visual_encoder": visual_encoder,
    }
    return {
        "model_state_dict": state,
        "total_steps": total_steps,
        "trainer_seed": seed,
        "agent": AGENT_REF,
        "kwargs": kwargs,
        "state_dict": state,
        "alfred": alfred or {},
    }


def alfred_to_allenact(src: Path, out: Path, visual_encoder: str = "imagenet") -> Path:
    """ALFRED ``model.pth`` -> AllenAct checkpoint (verified by a strict load before writing)."""
    data = _read(src)
    for key in ("model", "args", "vocab"):
        if key not in data:
            raise ConversionError(
                f"{src}: missing {key!r}; an ALFRED model.pth holds model, optim, args, vocab"
            )
    state = data["model"]
    if not isinstance(state, dict):
        raise ConversionError(f"{src}: 'model' must be a state dict, got {type(state).__name__}")
    args = vars(data["args"]) if isinstance(data["args"], argparse.Namespace) else data["args"]
    if not isinstance(args, dict):
        raise ConversionError(
            f"{src}: 'args' must be an argparse Namespace or dict, got {type(args).__name__}"
        )
    vocab = AlfredVocab.from_dict(data["vocab"], f"{src}: vocab")
    kwargs = model_kwargs_from_alfred(state, args, vocab, str(src))
    wrapper = build_actor_critic(kwargs)
    prefixed = wrapper.from_alfred_state_dict(state)
    try:
        wrapper.load_state_dict(prefixed, strict=True)
    except RuntimeError as e:
        raise ConversionError(
            f"{src}: state dict does not match seq2seq_im_mask: {' '.join(str(e).split())[:300]}"
        ) from None
    meta = {
        "args": _plain(args),
        "optim": data.get("optim"),
        "metric": _plain(data.get("metric")),
        "source": str(src),
    }
    seed = args.get("seed", 0)
    return _save(
        allenact_checkpoint(
            prefixed,
            kwargs,
            vocab,
            visual_encoder,
            meta,
            seed=int(seed) if isinstance(seed, int) else 0,
        ),
        out,
    )


def _read_wrapper_checkpoint(src: Path) -> Tuple[dict, dict]:
    """(checkpoint, ALFRED-named state dict) of an AllenAct checkpoint of our Seq2Seq wrapper."""
    from alfred_task.models.actor_critic import AlfredSeq2SeqActorCritic

    data = _read(src)
    if not isinstance(data.get("model_state_dict"), dict):
        raise ConversionError(f"{src}: missing 'model_state_dict'; not an AllenAct checkpoint")
    state = AlfredSeq2SeqActorCritic.alfred_state_dict(data["model_state_dict"])
    if not state:
        raise ConversionError(
            f"{src}: no 'seq2seq.' parameters; not a checkpoint of AlfredSeq2SeqActorCritic"
        )
    return data, state


def allenact_to_alfred(src: Path, out: Path, vocab_path: Optional[Path] = None) -> Path:
    """AllenAct checkpoint of our wrapper -> ALFRED ``model.pth`` ({model, optim, args, vocab})."""
    data, state = _read_wrapper_checkpoint(src)
    meta = data.get("alfred") or {}
    stored = (data.get("kwargs") or {}).get("vocab")
    if vocab_path is not None:
        vocab = AlfredVocab.load(vocab_path)
    elif stored is not None:
        vocab = AlfredVocab.from_record(stored, str(src))
    else:
        raise ConversionError(f"{src}: holds no vocabulary; pass --vocab pp.vocab")
    args = dict(meta.get("args") or {})
    kwargs = model_kwargs_from_alfred(state, args, vocab, str(src))
    args.setdefault("dhid", kwargs["dhid"]), args.setdefault("demb", kwargs["demb"])
    args.setdefault("dframe", kwargs["dframe"]), args.setdefault("pframe", kwargs["pframe"])
    out_obj = {
        "model": state,
        "optim": meta.get("optim") or {},
        "args": argparse.Namespace(**args),
        "vocab": vocab.to_alfred(),
    }
    if meta.get("metric") is not None:
        out_obj["metric"] = meta["metric"]
    return _save(out_obj, out)


def attach_metadata(
    src: Path, out: Path, vocab_path: Path, visual_encoder: str = "imagenet"
) -> Path:
    """A checkpoint written by an AllenAct run of our wrapper + what evaluation needs (model_kwargs
    read off the tensors, the run's vocabulary, the visual encoder); AllenAct's fields are kept."""
    data, state = _read_wrapper_checkpoint(src)
    vocab = AlfredVocab.load(vocab_path)
    kwargs = dict(model_kwargs_from_alfred(state, {}, vocab, str(src)), mask_lang_padding=True)
    try:
        build_actor_critic(kwargs).load_state_dict(data["model_state_dict"], strict=True)
    except RuntimeError as e:
        raise ConversionError(
            f"{src}: model_state_dict does not load: {' '.join(str(e).split())[:300]}"
        ) from None
    extra = allenact_checkpoint(data["model_state_dict"], kwargs, vocab, visual_encoder)
    return _save({**data, **{k: extra[k] for k in ("agent", "kwargs", "state_dict")}}, out)


def load_seq2seq_checkpoint(path: str | Path):
    """(wrapper with weights loaded strictly, AlfredVocab) from a checkpoint written by
    `allenact_checkpoint` (converted, or saved by our training with the same fields)."""
    src = Path(path)
    data = _read(src)
    meta = data.get("kwargs")
    if not isinstance(meta, dict) or "model_kwargs" not in meta or "vocab" not in meta:
        raise ConversionError(
            f"{src}: no 'kwargs' with model_kwargs and vocab; convert it with "
            f"python -m alfred_task.training.convert_checkpoint"
        )
    wrapper = build_actor_critic(meta["model_kwargs"])
    try:
        wrapper.load_state_dict(data["model_state_dict"], strict=True)
    except (RuntimeError, KeyError) as e:
        raise ConversionError(
            f"{src}: model_state_dict does not fit its model_kwargs: {' '.join(str(e).split())[:300]}"
        ) from None
    return wrapper, AlfredVocab.from_record(meta["vocab"], str(src))


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m alfred_task.training.convert_checkpoint",
        description="ALFRED model.pth <-> AllenAct checkpoint of the Seq2Seq wrapper.",
    )
    ap.add_argument(
        "src", type=Path, help="ALFRED model.pth (or, with --to-alfred, an AllenAct checkpoint)"
    )
    ap.add_argument("out", type=Path, help="file to write")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument(
        "--to-alfred", action="store_true", help="convert an AllenAct checkpoint back to model.pth"
    )
    mode.add_argument(
        "--attach",
        action="store_true",
        help="add evaluation metadata (needs --vocab) to a checkpoint our AllenAct configs trained",
    )
    ap.add_argument(
        "--vocab",
        type=Path,
        default=None,
        help="pp.vocab for --to-alfred when the checkpoint has none",
    )
    ap.add_argument(
        "--visual-encoder",
        default="imagenet",
        help="encoder evaluation featurises frames with: imagenet (ALFRED's; default), random_resnet18[:seed] "
        "or a resnet18 state_dict file (see alfred_task.data.features)",
    )
    args = ap.parse_args(argv)
    try:
        if args.out.is_dir():
            raise ConversionError(f"{args.out}: is a folder; OUT must be a file path")
        if args.attach:
            if args.vocab is None:
                raise ConversionError(
                    "--attach needs --vocab pp.vocab (the vocabulary the run trained with)"
                )
            written = attach_metadata(args.src, args.out, args.vocab, args.visual_encoder)
        elif args.to_alfred:
            written = allenact_to_alfred(args.src, args.out, args.vocab)
        else:
            written = alfred_to_allenact(args.src, args.out, args.visual_encoder)
    except (ConversionError, ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # unwritable OUT, a file where a folder should be, disk full
        print(
            f"error: {args.out}: cannot write ({e.strerror or type(e).__name__})", file=sys.stderr
        )
        return 2
    print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)
