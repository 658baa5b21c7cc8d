"""A caption states only settings the table's runs used (pure).

A paper caption may state how its runs were set up ("LoRA on $q,k,v,o$"). A table's
``settings`` in ``config/tables.yaml`` names each such piece of caption text and the cell
config it states (dotted key -> value). The caption keeps the text only when every run the
table reads was configured so (the grid's resolved cell config, whose hash each run
records); otherwise the text is left out, and a note says what the runs used instead. A
table that reads no run keeps the paper's caption (it prints no reproduced number).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from dfil.util.errors import ConfigError


def config_value(config: Mapping, dotted: str):
    """The value at ``dotted`` (``model.lora.targets``) of a cell config; a sequence as a
    list; None where a key is absent."""
    value = config
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return list(value) if isinstance(value, (list, tuple)) else value


def _shown(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def differing(states: Mapping, configs: Iterable[Mapping]) -> str:
    """What the runs of ``configs`` used where they differ from ``states`` (dotted key ->
    the value the caption states), as plain text: ``model.adapter none (4 runs)``; ""
    when every run used every stated value."""
    configs = list(configs)
    for key, want in states.items():
        want = list(want) if isinstance(want, (list, tuple)) else want
        used = Counter(_shown(config_value(c, key)) for c in configs)
        if set(used) != {_shown(want)}:
            return "; ".join(f"{key} {value} ({n} run{'s' if n != 1 else ''})"
                             for value, n in sorted(used.items()))
    return ""


def apply_settings(caption: str, settings: Iterable[Mapping],
                   configs: Iterable[Mapping]) -> tuple[str, list[str]]:
    """``caption`` with each setting's ``text`` left out unless every run of ``configs``
    (the resolved cell configs of the runs the table reads) used its ``config``, and a
    plain note per text left out naming the paper's setting (``says``) and what the runs
    used; with no run, the caption as the paper prints it. ``ConfigError`` when a
    setting's text is not in the caption."""
    configs = list(configs)
    notes = []
    for s in settings:
        if s["text"] not in caption:
            raise ConfigError(f"settings: {s['text']!r} is not in the caption {caption!r}")
        other = differing(s["config"], configs) if configs else ""
        if other:
            caption = caption.replace(s["text"], "", 1)
            notes.append(f"The paper's caption also says {s['says']}; left out here: these "
                         f"runs used {other}.")
    return caption, notes
