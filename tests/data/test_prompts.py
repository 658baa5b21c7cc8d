"""dfil.data.prompts: the paper's prompt and the compact CPU prompt."""

import pytest

from dfil.config.cell import CellConfig
from dfil.config.validation import validate
from dfil.data.prompts import prompt_for, strip_instruction
from dfil.util.errors import ConfigError


def test_compact_frog_prompt_is_the_sentence_and_answer():
    text = "[MASK] of the 20 students passed; specifically 15 out of 20."
    assert prompt_for("frog", text, "compact") == (
        "___ of the 20 students passed; specifically 15 out of 20.\nAnswer:")
    paper = prompt_for("frog", text)
    assert paper.endswith("Answer:") and "(H) all" in paper and len(paper) > 2 * len(text)


def test_compact_prompt_leaves_out_frogs_closing_instruction():
    synthetic = ("[MASK] of the 40 voters supported the proposal, specifically 3 out of 40."
                 "\n\nPlease select the quantifier that is closest to the meaning of [MASK] "
                 "from the following choices.")
    assert prompt_for("frog", synthetic, "compact") == (
        "___ of the 40 voters supported the proposal, specifically 3 out of 40.\nAnswer:")
    real = ("a shopkeeper sold an article offering a discount of [MASK] . what would ...?"
            "\n\nIf the answer to the question is 38, then please select the percentage "
            "value that is closest to the meaning of [MASK] from the following choices.")
    assert strip_instruction(real).endswith("?\n\nIf the answer to the question is 38.")
    # the paper's prompt keeps the question as it is
    assert "Please select the quantifier" in prompt_for("frog", synthetic)


def test_ordinal_prompts_do_not_depend_on_the_style():
    assert prompt_for("sst5", "Fine.", "compact") == prompt_for("sst5", "Fine.")


def test_probe_stride_must_be_positive():
    with pytest.raises(ConfigError, match=r"^eval\.probe_stride: must be >= 1, got 0$"):
        validate(CellConfig, {"eval": {"probe_stride": 0}})
