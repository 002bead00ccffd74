"""ALFRED's tokeniser and vocabularies, through the same packages ALFRED uses (§2.5).

Tokens come from ``revtok.tokenize`` (revtok 0.0.3): they keep their surrounding spaces, as
in ALFRED's ``pp/ann_<r>.json``; they are stripped and lower-cased when numericalised.
Vocabularies are ``vocab.Vocab`` objects (vocab 0.0.5), so ``pp.vocab`` and the ``vocab`` entry
of a released ``model.pth`` load here unchanged, and ours load in ALFRED's code.

``pp.vocab`` is written with torch's legacy (non-zip) serialisation, which torch 1.1 (ALFRED's
pin) still reads and torch 2.x reads too. Loading never runs arbitrary pickles: only the few
classes such files hold are allowed (`safe_globals`).
"""
from __future__ import annotations

import argparse
import collections
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import ContextManager, Iterable, Iterator, Sequence

import revtok
import vocab as vocab_pkg

from common.atomic_io import write_bytes_atomic, write_json_atomic

from alfred_task import constants as C

Vocab = vocab_pkg.Vocab
OutOfVocabularyException = vocab_pkg.OutOfVocabularyException

__all__ = ["Vocab", "OutOfVocabularyException", "normalize_text", "tokenize", "numericalize_token",
           "new_vocab", "lookup", "tokens_of", "AlfredVocab", "safe_globals", "load_trusted"]

#: classes a pp.vocab / ALFRED model.pth may hold besides tensors
SAFE_GLOBALS = (Vocab, collections.Counter, argparse.Namespace)


def normalize_text(text: str) -> str:
    """Collapse whitespace and lower-case (ALFRED does this before tokenising)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return " ".join(text.split()).lower()


def tokenize(text: str) -> list[str]:
    """revtok tokens of `text`, surrounding spaces kept (ALFRED's ``ann`` format)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return revtok.tokenize(text)


def numericalize_token(token: str) -> str:
    """The vocabulary key of a revtok token: stripped and lower-cased (as ALFRED)."""
    return token.strip().lower()


def new_vocab(tokens: Iterable[str]) -> Vocab:
    """A `vocab.Vocab` seeded with `tokens` in order (each counted once, as ALFRED's seeding)."""
    tokens = list(tokens)
    if len(set(tokens)) != len(tokens):
        raise ValueError(f"duplicate token in vocabulary seed {tokens}")
    return Vocab(tokens)


def lookup(v: Vocab, token: str, grow: bool, name: str = "vocab", fixed: bool = False) -> int:
    """Index of `token`, counted when `grow` (ALFRED's ``train=True``). An unknown token is
    added when `grow` and not `fixed`, else KeyError naming the vocabulary."""
    if token in v._word2index:  # noqa: SLF001 - the package has no public membership test
        return v.word2index(token, train=grow)
    if not grow or fixed:
        raise KeyError(f"token {token!r} is not in the {name} vocabulary ({len(v)} entries)")
    return v.word2index(token, train=True)


def tokens_of(v: Vocab) -> list[str]:
    """All tokens in index order."""
    return [v.index2word(i) for i in range(len(v))]


def safe_globals() -> ContextManager:
    """Context manager allowing `torch.load(weights_only=True)` to rebuild Vocab/Namespace."""
    import torch

    return torch.serialization.safe_globals(list(SAFE_GLOBALS))


def load_trusted(path: str | os.PathLike, map_location: str = "cpu"):
    """`torch.load` with only tensors, plain containers and `SAFE_GLOBALS` allowed."""
    import torch

    with safe_globals():
        return torch.load(path, map_location=map_location, weights_only=True)


@dataclass
class AlfredVocab:
    """The three vocabularies of ``pp.vocab``: ``word``, ``action_low``, ``action_high``."""

    word: Vocab
    action_low: Vocab
    action_high: Vocab

    KEYS = ("word", "action_low", "action_high")

    @classmethod
    def new(cls) -> "AlfredVocab":
        """Seeded vocabularies: word <<pad>>,<<seg>>,<<goal>>; action_high <<pad>>,<<seg>>,<<stop>>;
        action_low all 15 entries in `constants.ACTION_LOW_VOCAB` order (fixed ids, counts of
        the 12 actions start at 0 so they equal ALFRED's occurrence counts)."""
        low = new_vocab(C.ACTION_SPECIAL_TOKENS)
        for a in C.ACTION_LOW_VOCAB[len(C.ACTION_SPECIAL_TOKENS):]:
            low.word2index(a, train=True)
            low.counts[a] -= 1
        return cls(word=new_vocab(C.WORD_SPECIAL_TOKENS), action_low=low,
                   action_high=new_vocab(C.ACTION_SPECIAL_TOKENS))

    def items(self) -> Iterator[tuple[str, Vocab]]:
        return ((k, getattr(self, k)) for k in self.KEYS)

    def to_dict(self) -> dict[str, list[str]]:
        """Token lists (index = position); the JSON form."""
        return {k: tokens_of(v) for k, v in self.items()}

    def to_alfred(self) -> dict[str, Vocab]:
        """ALFRED's in-memory form: ``{'word': Vocab, 'action_low': Vocab, 'action_high': Vocab}``."""
        return dict(self.items())

    def to_record(self) -> dict:
        """Tokens and counts as plain types (for checkpoints read with ``weights_only=True``)."""
        return {k: {"tokens": tokens_of(v), "counts": {w: int(c) for w, c in v.counts.items()}}
                for k, v in self.items()}

    @classmethod
    def from_record(cls, rec: object, source: str = "<record>") -> "AlfredVocab":
        """Inverse of `to_record`."""
        try:
            out = {}
            for k in cls.KEYS:
                v = new_vocab(rec[k]["tokens"])
                v.counts = collections.Counter({str(w): int(c) for w, c in rec[k]["counts"].items()})
                out[k] = v
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise ValueError(f"{source}: vocabulary record is malformed ({type(e).__name__}: {e})") from None
        return cls(**out)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AlfredVocab) and self.to_dict() == other.to_dict()

    @classmethod
    def from_dict(cls, d: object, source: str = "<vocab>") -> "AlfredVocab":
        """From token lists or from `vocab.Vocab` objects (ALFRED's ``pp.vocab`` / ``model.pth``)."""
        if not isinstance(d, dict):
            raise ValueError(f"{source}: vocabulary must be a dict with keys {list(cls.KEYS)}, "
                             f"got {type(d).__name__}")
        out = {}
        for k in cls.KEYS:
            if k not in d:
                raise ValueError(f"{source}: vocabulary is missing {k!r}")
            out[k] = _as_vocab(d[k], f"{source}: vocabulary {k!r}")
        specials = {"word": C.WORD_SPECIAL_TOKENS, "action_low": C.ACTION_SPECIAL_TOKENS,
                    "action_high": C.ACTION_SPECIAL_TOKENS}
        for k, seed in specials.items():
            head = tokens_of(out[k])[: len(seed)]
            if tuple(head) != seed:
                raise ValueError(f"{source}: vocabulary {k!r} must start with {list(seed)}, got {head}")
        return cls(**out)

    def save(self, path: str | os.PathLike, fmt: str | None = None) -> Path:
        """Write ALFRED's ``pp.vocab`` (torch, legacy format, Vocab objects; byte-deterministic)
        or JSON token lists (`fmt='json'` or a ``.json`` path). Atomic."""
        p = Path(path)
        fmt = fmt or ("json" if p.suffix == ".json" else "torch")
        if fmt == "json":
            return write_json_atomic(p, self.to_dict(), indent=1, sort_keys=False)
        if fmt != "torch":
            raise ValueError(f"unknown vocabulary format {fmt!r} (use 'torch' or 'json')")
        import torch

        buf = io.BytesIO()
        torch.save(self.to_alfred(), buf, _use_new_zipfile_serialization=False)
        return write_bytes_atomic(p, buf.getvalue())

    @classmethod
    def load(cls, path: str | os.PathLike) -> "AlfredVocab":
        """Read a vocabulary written by ALFRED or by `save` (torch or JSON)."""
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"vocabulary file {p} not found")
        with open(p, "rb") as f:
            head = f.read(1)
        if head in (b"{", b" ", b"\n"):
            with open(p, "r", encoding="utf-8") as f:
                return cls.from_dict(json.load(f), str(p))
        try:
            data = load_trusted(p)
        except Exception as e:  # noqa: BLE001 - any unpickling failure is a bad file
            raise ValueError(f"{p}: not a pp.vocab file ({type(e).__name__}: {str(e).splitlines()[0][:200]})") from None
        return cls.from_dict(data, str(p))


def _as_vocab(value: object, where: str) -> Vocab:
    if isinstance(value, Vocab):
        return value
    if isinstance(value, Sequence) and not isinstance(value, str) and all(isinstance(t, str) for t in value):
        return new_vocab(value)
    raise ValueError(f"{where} must be a vocab.Vocab or a list of strings, got {type(value).__name__}")
