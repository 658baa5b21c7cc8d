"""The model input of each task: FRoG's App. C.2 prompt, and the cross-task prompts."""

from __future__ import annotations

from dfil.data.frog import format_prompt
from dfil.data.ordinal import SST5_CLASSES, STS22_CLASSES

_ORDINAL = {
    "sst5": ("Review: {text}\nSentiment ({options}):", SST5_CLASSES),
    "ordinal_standin": ("Review: {text}\nSentiment ({options}):", SST5_CLASSES),
    "sts22": ("{text}\nSimilarity ({options}):", STS22_CLASSES),
}


COMPACT_FROG = "{sentence}\nAnswer:"


def prompt_for(task: str, text: str, style: str = "paper") -> str:
    """The prompt a model of ``task`` reads for ``text`` (the probes use FRoG's).

    ``style="compact"`` drops FRoG's instruction and option list (the ordinal tasks'
    prompts are short already)."""
    if task == "frog":
        if style == "compact":
            return COMPACT_FROG.format(sentence=text.replace("[MASK]", "___"))
        return format_prompt(text)
    if task in _ORDINAL:
        template, classes = _ORDINAL[task]
        return template.format(text=text, options=", ".join(classes))
    raise ValueError(f"unknown task {task!r}")
