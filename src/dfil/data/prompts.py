"""The model input of each task: FRoG's App. C.2 prompt, and the cross-task prompts."""

from __future__ import annotations

import re

from dfil.data.frog import format_prompt
from dfil.data.ordinal import SST5_CLASSES, STS22_CLASSES

_ORDINAL = {
    "sst5": ("Review: {text}\nSentiment ({options}):", SST5_CLASSES),
    "ordinal_standin": ("Review: {text}\nSentiment ({options}):", SST5_CLASSES),
    "sts22": ("{text}\nSimilarity ({options}):", STS22_CLASSES),
}


COMPACT_FROG = "{sentence}\nAnswer:"
#: FRoG's closing multiple-choice instruction, which the compact prompt leaves out.
_INSTRUCTION = re.compile(
    r"(?:,\s*then)?\s*please select the (?:quantifier|percentage value) that is closest to "
    r"the meaning of \[MASK\] from the following choices\.?\s*$", re.IGNORECASE)


def strip_instruction(question: str) -> str:
    """``question`` without FRoG's closing "please select the quantifier ..." sentence
    (its "If the answer to the question is 38" clause is kept), ending in punctuation."""
    text = _INSTRUCTION.sub("", question).rstrip()
    return text if not text or text[-1] in ".?!\"" else text + "."


def prompt_for(task: str, text: str, style: str = "paper") -> str:
    """The prompt a model of ``task`` reads for ``text`` (the probes use FRoG's).

    ``style="compact"`` drops FRoG's instruction, its closing "please select ..." sentence
    and the option list, so that FRoG items and the probe sentences (which have no such
    sentence) read alike (the ordinal tasks' prompts are short already)."""
    if task == "frog":
        if style == "compact":
            return COMPACT_FROG.format(sentence=strip_instruction(text).replace("[MASK]", "___"))
        return format_prompt(text)
    if task in _ORDINAL:
        template, classes = _ORDINAL[task]
        return template.format(text=text, options=", ".join(classes))
    raise ValueError(f"unknown task {task!r}")
