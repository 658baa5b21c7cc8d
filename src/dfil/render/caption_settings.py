"""A caption states only settings the table's runs used (pure).

A paper caption may state how its runs were set up ("LoRA on $q,k,v,o$"). A table's
``settings`` in ``config/tables.yaml`` names each such piece of caption text and the cell
config it states (dotted key -> value). The caption keeps the text only when every run the
table reads was configured so (the grid's resolved cell config, whose hash each run
records); otherwise the text is left out, and a note says what the runs used instead. A
setting may speak of some rows only (``rows``: the 72B row's "QLoRA 4-bit"): then only
their runs judge it, and its text may sit in their labels too. A table that reads no run
keeps the paper's caption (it prints no reproduced number).
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
    """A config value as text, a whole number alike as int or float (64 == 64.0)."""
    if isinstance(value, list):
        return ",".join(map(_shown, value))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


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


def apply_settings(caption: str, labels: Mapping[str, str], settings: Iterable[Mapping],
                   configs: Iterable[Mapping], row_configs: Mapping[str, Iterable[Mapping]]
                   ) -> tuple[str, dict[str, str], list[str]]:
    """``caption`` and the row ``labels`` (row id -> LaTeX) with each setting's ``text``
    left out unless every run it describes used its ``config``, and a plain note per text
    left out naming the paper's setting (``says``) and what the runs used. A setting
    describes the runs of ``configs`` (the resolved cell configs of every run the table
    reads), or with ``rows`` only the runs of those rows (``row_configs``: row id -> its
    runs' configs), and its text may then also sit in those rows' labels (a footnote mark
    left out with it drops its footnote). With no run to judge, the text stays as the paper
    prints it. ``ConfigError`` when a setting's text is in neither the caption nor a label
    it may be in, or names a row the table lacks."""
    configs, labels, notes = list(configs), dict(labels), []
    for s in settings:
        text, scope = s["text"], list(s.get("rows") or ())
        if missing := [r for r in scope if r not in labels]:
            raise ConfigError(f"settings: rows {missing} are not rows of this table "
                              f"(rows: {sorted(labels)})")
        places = [r for r in scope if text in labels[r]]
        if text not in caption and not places:
            raise ConfigError(f"settings: {text!r} is not in the caption {caption!r}"
                              + (f" nor in the labels of rows {scope}" if scope else ""))
        runs = [c for r in scope for c in row_configs.get(r, ())] if scope else configs
        other = differing(s["config"], runs) if runs else ""
        if not other:
            continue
        where = " and ".join((["caption"] if text in caption else []) + (
            [f"row{'s' if len(places) > 1 else ''} {', '.join(places)}"] if places else []))
        caption = caption.replace(text, "", 1)
        labels.update({r: labels[r].replace(text, "", 1) for r in places})
        verb = "say" if " and " in where else "says"
        notes.append(f"The paper's {where} also {verb} {s['says']}; left out here: these "
                     f"runs used {other}.")
    return caption, labels, list(dict.fromkeys(notes))
