"""The ALFRED config options (`baseline_configs.alfred.options`): defaults as the configs always
had, one-line errors naming field and value, unknown keys refused, the test-stage storage decided
by AllenAct's mode, and the named recipes equal to the kwargs their shipped checkpoints record."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from baseline_configs.alfred.options import (
    AlfredSeq2SeqDaggerOptions,
    AlfredSeq2SeqILOptions,
    AlfredSeq2SeqOptions,
    ConfigError,
    PATH_OPTIONS,
)

REPO = Path(__file__).resolve().parents[1]
CKPTS = REPO / "pretrained_model_ckpts"


def test_defaults_are_the_configs_historical_defaults():
    o = AlfredSeq2SeqOptions()
    assert (
        o.data_root,
        o.visual_encoder,
        o.model_size,
        o.ablation,
        o.lr,
        o.batch_size,
        o.training_frames,
    ) == ("out/alfred_s2s", "imagenet", "official", "none", 1e-4, 8, 200_000)
    assert (o.test_split, o.max_steps, o.planner, o.sampler_torch_threads, o.prev_action_input) == (
        "valid_seen",
        1000,
        "template",
        1,
        "argmax",
    )
    assert (
        o.mask_dice_weight,
        o.spatial_mask,
        o.subcell_mask,
        o.eval_storage,
        o.trainer_torch_threads,
    ) == (0.0, False, False, None, None)
    assert o.dims == dict(demb=100, dhid=512, dframe=2500, pframe=300)
    assert AlfredSeq2SeqOptions(model_size="lite", dhid="24").dims == dict(
        demb=64, dhid=24, dframe=256, pframe=100
    )
    il, dagger = AlfredSeq2SeqILOptions(), AlfredSeq2SeqDaggerOptions(training_frames=1000)
    assert (il.train_split, il.max_examples) == ("train", None)
    assert (dagger.num_steps, dagger.freeze_batchnorm, dagger.demo_split) == (32, True, "train")
    assert dagger.teacher_forcing_steps() == (100, 500)
    assert AlfredSeq2SeqDaggerOptions(bc_tf1_steps=0, dagger_steps=7).teacher_forcing_steps() == (
        0,
        7,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.lr = 1.0  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, line",
    [
        ({"model_size": "huge"}, "model_size: 'huge' is not one of ['lite', 'official']"),
        ({"ablation": "no_eyes"}, "ablation: 'no_eyes' is not one of"),
        ({"prev_action_input": "gold"}, "prev_action_input: 'gold' is not one of"),
        ({"mask_dice_weight": -1}, "mask_dice_weight: -1 must be a number >= 0"),
        ({"mask_dice_weight": "lots"}, "mask_dice_weight: 'lots' must be a number >= 0"),
        ({"spatial_mask": "yes"}, "spatial_mask: 'yes' must be true or false"),
        ({"subcell_mask": 1}, "subcell_mask: 1 must be true or false"),
        (
            {"sampler_torch_threads": 0},
            "sampler_torch_threads / trainer_torch_threads must be >= 1, got 0 / None",
        ),
        ({"lr": "fast"}, "lr: 'fast' is not a number"),
        ({"dhid": "wide"}, "dhid: 'wide' is not a number"),
        ({"bogus": 1, "lr": 1e-3}, "unknown option 'bogus' (options: "),
    ],
)
def test_a_bad_option_is_one_line_naming_field_and_value(kwargs, line):
    with pytest.raises(ConfigError) as e:
        AlfredSeq2SeqDaggerOptions.from_kwargs(kwargs)
    msg = str(e.value)
    assert (
        isinstance(e.value, SystemExit)
        and msg.startswith("alfred config: " + line)
        and "\n" not in msg
    )


def test_options_of_one_config_are_unknown_to_another():
    with pytest.raises(ConfigError, match="unknown option 'bc_tf1_steps'"):
        AlfredSeq2SeqILOptions.from_kwargs({"bc_tf1_steps": 0})
    with pytest.raises(ConfigError, match="freeze_batchnorm: 'yes' is not true or false"):
        AlfredSeq2SeqDaggerOptions.from_kwargs({"freeze_batchnorm": "yes"})


@pytest.fixture(scope="module")
def tiny_dataset(tmp_path_factory):
    """One generated train demonstration with random-encoder features."""
    from alfred_task.gen.generate import generate

    out = tmp_path_factory.mktemp("alfred_ds")
    generate(out, 1, seed=0, features="random_resnet18", planner="template", split="train")
    return out


def test_eval_storage_follows_allenacts_mode_unless_given(tiny_dataset):
    """`allenact --eval` runs the test mode: its engines call machine_params("test") before
    create_model and training_pipeline, and only there do the storage and the model's masks appear."""
    from baseline_configs.alfred.alfred_seq2seq_pm_il import AlfredSeq2SeqPMILConfig

    kw = {"data_root": str(tiny_dataset), "visual_encoder": "random_resnet18", "model_size": "lite"}
    cfg = AlfredSeq2SeqPMILConfig(**kw)
    assert cfg.eval_storage is False and set(cfg.storages()) == {"demos"}
    for mode, on in (("train", False), ("valid", False), ("test", True), ("train", False)):
        cfg.machine_params(mode)
        assert cfg.eval_storage is on and ("onpolicy" in cfg.storages()) is on
    forced = AlfredSeq2SeqPMILConfig(**kw, eval_storage=False)
    forced.machine_params("test")
    assert forced.eval_storage is False
    with pytest.raises(SystemExit, match="alfred config: unknown option 'nonsense'"):
        AlfredSeq2SeqPMILConfig(**kw, nonsense=1)


RECIPES = [
    (
        "alfred_seq2seq_pm_lite_gpu",
        "AlfredSeq2SeqPMLiteGpuConfig",
        CKPTS / "alfred_seq2seq_pm_gpu" / "run.json",
        "imitation_config_kwargs",
    ),
    (
        "alfred_seq2seq_pm_lite_cpu",
        "AlfredSeq2SeqPMLiteCpuConfig",
        CKPTS / "alfred_seq2seq_pm_il" / "config_kwargs.json",
        None,
    ),
]


@pytest.mark.parametrize("module, name, record, key", RECIPES, ids=[r[0] for r in RECIPES])
def test_a_named_recipe_is_the_kwargs_its_checkpoint_records(module, name, record, key):
    import importlib

    from baseline_configs.alfred.alfred_seq2seq_pm_il import AlfredSeq2SeqPMILConfig

    if not record.is_file():
        pytest.skip(f"{record} is absent")
    recorded = json.loads(record.read_text())
    recorded = recorded[key] if key else recorded
    cls = getattr(importlib.import_module(f"baseline_configs.alfred.{module}"), name)
    assert issubclass(cls, AlfredSeq2SeqPMILConfig)
    paths = {k: v for k, v in recorded.items() if k in PATH_OPTIONS}
    assert (
        dict(cls.with_recipe(paths)) == recorded
    )  # the recipe plus the run's paths: the record, exactly
    assert not set(cls.RECIPE) & set(PATH_OPTIONS)
    AlfredSeq2SeqILOptions.from_kwargs(recorded)  # and the record is valid options


def test_a_recipe_option_can_be_repeated_not_changed():
    from baseline_configs.alfred.alfred_seq2seq_pm_lite_gpu import (
        AlfredSeq2SeqPMLiteGpuConfig as Gpu,
    )

    assert Gpu.with_recipe({"lr": 0.001, "data_root": "d"})["data_root"] == "d"
    with pytest.raises(
        SystemExit,
        match=r"^alfred config: lr: 0.01 differs from 0.001, fixed by the "
        r"AlfredSeq2SeqPMLiteGpuConfig recipe",
    ):
        Gpu(lr=0.01)
