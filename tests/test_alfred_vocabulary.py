"""ALFRED tokenisation and vocabularies through ALFRED's own packages (revtok, vocab): ALFRED's
``ann`` token format, ``pp.vocab`` files readable by ALFRED's code and ALFRED's readable by ours."""

from __future__ import annotations

import json

import pytest

from alfred_task import constants as C
from alfred_task.data.vocabulary import (
    AlfredVocab,
    Vocab,
    lookup,
    normalize_text,
    numericalize_token,
    tokenize,
    tokens_of,
)


def test_tokenize_is_revtok_with_alfred_normalisation():
    """Tokens are revtok's (spaces kept, as ALFRED's ann); numericalisation strips + lower-cases."""
    toks = tokenize(normalize_text("  Go to the\tSINK, don't stop. "))
    assert toks == [" go ", " to ", " the ", " sink ", ", ", " don ", "'", " t ", " stop ", ". "]
    assert [numericalize_token(t) for t in toks] == [
        "go",
        "to",
        "the",
        "sink",
        ",",
        "don",
        "'",
        "t",
        "stop",
        ".",
    ]
    assert tokenize("") == [] and normalize_text("A \n B") == "a b"
    with pytest.raises(ValueError, match="string"):
        tokenize(None)


def test_vocab_basics_and_files(tmp_path):
    v = AlfredVocab.new()
    assert isinstance(v.word, Vocab) and isinstance(
        v.action_low, Vocab
    )  # the `vocab` package's class
    assert tokens_of(v.word) == list(C.WORD_SPECIAL_TOKENS) and tokens_of(v.action_low) == list(
        C.ACTION_LOW_VOCAB
    )
    assert tokens_of(v.action_high) == list(C.ACTION_SPECIAL_TOKENS)
    assert [lookup(v.word, t, True) for t in ("a", "b", "a")] == [3, 4, 3] and v.word.index2word(
        [3, 4]
    ) == ["a", "b"]
    assert v.word.counts["a"] == 2 and v.action_low.counts["PickupObject"] == 0
    with pytest.raises(KeyError, match="'zzz' is not in the word vocabulary"):
        lookup(v.word, "zzz", False, "word")
    with pytest.raises(KeyError, match="action_low"):
        lookup(v.action_low, "Jump", True, "action_low", fixed=True)  # fixed vocabulary
    for name in ("pp.vocab", "pp.vocab.json"):
        p = v.save(tmp_path / name)
        assert AlfredVocab.load(p) == v
    import torch

    raw = torch.load(tmp_path / "pp.vocab", weights_only=False)  # what ALFRED's torch.load sees
    assert set(raw) == {"word", "action_low", "action_high"} and all(
        type(x) is Vocab for x in raw.values()
    )
    assert raw["word"] == v.word and raw["word"].counts == v.word.counts  # counts travel too
    assert (tmp_path / "pp.vocab").read_bytes()[:2] != b"PK"  # legacy format: torch 1.1 can read it
    v.save(tmp_path / "again.vocab")
    assert (tmp_path / "again.vocab").read_bytes() == (
        tmp_path / "pp.vocab"
    ).read_bytes()  # deterministic
    (tmp_path / "bad.json").write_text(
        json.dumps({"word": ["x"], "action_low": [], "action_high": []})
    )
    with pytest.raises(ValueError, match="must start with"):
        AlfredVocab.load(tmp_path / "bad.json")
    (tmp_path / "dup.json").write_text(
        json.dumps({**v.to_dict(), "word": list(C.WORD_SPECIAL_TOKENS) + ["a", "a"]})
    )
    with pytest.raises(ValueError, match="duplicate"):
        AlfredVocab.load(tmp_path / "dup.json")
    (tmp_path / "junk.vocab").write_bytes(b"\x80\x02junk")
    with pytest.raises(ValueError, match="junk.vocab: not a pp.vocab"):
        AlfredVocab.load(tmp_path / "junk.vocab")
    with pytest.raises(FileNotFoundError):
        AlfredVocab.load(tmp_path / "missing.vocab")


def test_vocab_reads_alfred_style_pickles(tmp_path):
    """A pp.vocab as ALFRED wrote it (its own Vocab objects, grown with train=True) loads here."""
    import torch

    word = Vocab(list(C.WORD_SPECIAL_TOKENS))
    word.word2index(["put", "mug", "put"], train=True)
    low = Vocab(list(C.ACTION_SPECIAL_TOKENS))
    low.word2index(list(C.ACTION_LOW_VOCAB[3:]), train=True)
    high = Vocab(list(C.ACTION_SPECIAL_TOKENS))
    torch.save(
        {"word": word, "action_low": low, "action_high": high}, tmp_path / "zip.vocab"
    )  # zip format too
    v = AlfredVocab.load(tmp_path / "zip.vocab")
    assert tokens_of(v.word)[3:] == ["put", "mug"] and v.word.counts["put"] == 2
    assert v.action_low is not low and v.action_low == low
