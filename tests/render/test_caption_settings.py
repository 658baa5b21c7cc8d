"""A caption states only settings the table's runs used: T19's "LoRA on q,k,v,o" stays on
the paper's grid (its cross-task cells adapt q,k,v,o) and is left out, with a note naming
what ran, on a grid whose runs used another adapter or none."""

from pathlib import Path

import pytest

from dfil.config.grid import load_grid_files
from dfil.render import load_specs
from dfil.render.caption_settings import apply_settings, config_value, differing
from dfil.render.resolve import Resolver
from dfil.render.source import Source
from dfil.util.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
LORA = {"text": ", LoRA on $q,k,v,o$", "says": "LoRA on q,k,v,o",
        "config": {"model.adapter": "lora", "model.lora.targets": ("q", "k", "v", "o")}}
CAPTION = "Accuracy, 3 seeds, LoRA on $q,k,v,o$. Mono.: violations."


def _cell(adapter, *targets):
    return {"model": {"adapter": adapter, "lora": {"r": 16, "targets": list(targets)}}}


def test_a_config_value_is_read_by_its_dotted_key():
    cell = _cell("lora", "q", "v")
    assert config_value(cell, "model.lora.targets") == ["q", "v"]
    assert config_value(cell, "model.adapter") == "lora"
    assert config_value(cell, "model.heads.hidden") is None


def test_the_text_stays_when_every_run_used_the_setting():
    cells = [_cell("lora", "q", "k", "v", "o")] * 3
    assert apply_settings(CAPTION, {}, [LORA], cells, {}) == (CAPTION, {}, [])
    assert apply_settings(CAPTION, {}, [LORA], [], {}) == (CAPTION, {}, [])  # the paper's


def test_the_text_is_left_out_with_what_the_runs_used_when_they_differ():
    cells = [_cell("lora", "q", "v")] * 2 + [_cell("none", "q", "v")]
    caption, _, notes = apply_settings(CAPTION, {}, [LORA], cells, {})
    assert caption == "Accuracy, 3 seeds. Mono.: violations."
    assert notes == ["The paper's caption also says LoRA on q,k,v,o; left out here: these "
                     "runs used model.adapter lora (2 runs); model.adapter none (1 run)."]
    assert differing(LORA["config"], [_cell("lora", "q", "v")]) == (
        "model.lora.targets q,v (1 run)")


def test_a_setting_whose_text_is_not_in_the_caption_is_refused():
    with pytest.raises(ConfigError, match="'a word' is not in the caption"):
        apply_settings(CAPTION, {}, [{**LORA, "text": "a word"}], [], {})


QLORA = {"text": "$^\\dagger$ (QLoRA 4-bit)", "says": "QLoRA 4-bit",
         "config": {"model.backbone.quantized": True}, "rows": ("72b",)}
LABELS = {"7b": "Qwen2.5-7B", "72b": "Qwen2.5-72B$^\\dagger$ (QLoRA 4-bit)"}


def _backbone(quantized, batch=8):
    return {"model": {"backbone": {"quantized": quantized}}, "train": {"batch_size": batch}}


def test_a_setting_of_some_rows_is_judged_by_their_runs_alone_and_leaves_their_labels():
    caption = "Scaling, 3 seeds."
    unquantized = {"7b": [_backbone(False)] * 3, "72b": [_backbone(False)] * 2}
    everything = [c for runs in unquantized.values() for c in runs]
    kept = {"7b": [_backbone(False)] * 3, "72b": [_backbone(True)] * 2}  # 7B is not 4-bit
    assert apply_settings(caption, LABELS, [QLORA], everything, kept) == (
        caption, LABELS, [])
    out, labels, notes = apply_settings(caption, LABELS, [QLORA], everything, unquantized)
    assert (out, labels["7b"], labels["72b"]) == (caption, "Qwen2.5-7B", "Qwen2.5-72B")
    assert notes == ["The paper's row 72b also says QLoRA 4-bit; left out here: these "
                     "runs used model.backbone.quantized False (2 runs)."]
    no_72b = {"7b": [_backbone(False)] * 3}  # the row not run: the paper's label
    assert apply_settings(caption, LABELS, [QLORA], everything, no_72b)[1] == LABELS


def test_a_row_setting_in_the_caption_is_left_out_there_and_whole_numbers_match():
    caption = "Centers, Qwen2.5-7B and Qwen2.5-72B (QLoRA 4-bit), batch 64."
    setting = {**QLORA, "text": " (QLoRA 4-bit)"}
    batch = {"text": ", batch 64", "says": "batch 64", "config": {"train.batch_size": 64.0}}
    rows = {"72b": [_backbone(False, 64)]}
    out, _, notes = apply_settings(caption, LABELS, [setting, batch], rows["72b"], rows)
    assert out == "Centers, Qwen2.5-7B and Qwen2.5-72B, batch 64."  # 64.0 is 64
    assert notes == ["The paper's caption and row 72b also say QLoRA 4-bit; left out "
                     "here: these runs used model.backbone.quantized False (1 run)."]


def test_a_setting_naming_a_row_the_table_lacks_is_refused():
    with pytest.raises(ConfigError, match=r"rows \['70b'\] are not rows of this table"):
        apply_settings(CAPTION, LABELS, [{**QLORA, "rows": ("70b",)}], [], {})
    with pytest.raises(ConfigError, match="nor in the labels of rows"):
        apply_settings(CAPTION, LABELS, [{**QLORA, "rows": ("7b",)}], [], {})


@pytest.mark.parametrize("config, kept, note", [
    ("paper.yaml", True, None),
    ("smoke.yaml", False, "these runs used model.lora.targets q,v (2 runs)."),
    ("config.yaml", False, "these runs used model.adapter none (6 runs)."),
])
def test_t19s_caption_follows_the_grids_cross_task_cells(config, kept, note):
    grid = load_grid_files([ROOT / "config" / config])
    table = Resolver(load_specs(ROOT / "config/tables.yaml"), Source(grid)).table(
        "crosstask_full")
    assert ("LoRA on $q,k,v,o$ (Phi: fused \\texttt{qkv\\_proj} and $o$)" in table.caption) \
        is kept
    assert table.caption.startswith("Cross-task accuracy (\\%), mean $\\pm$ std over 3 seeds")
    said = [n for n in table.notes if n.startswith("The paper's caption also says")]
    assert said == ([] if kept else [f"The paper's caption also says LoRA on q,k,v,o; left "
                                     f"out here: {note}"])
