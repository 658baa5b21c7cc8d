"""Reading YAML strictly: a key given twice in one mapping is an error, not "last one wins".

PyYAML's safe loader keeps the last of duplicate keys without a word, so a grid, cell or
table file edited in two places would silently use one of them. Every YAML file the
project reads goes through :func:`load_yaml`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dfil.util.errors import ConfigError

_MERGE = "tag:yaml.org,2002:merge"


class _Strict:
    """A safe loader's constructor that refuses a mapping key given twice (``<<`` merges
    may override)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE:
                    continue
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                try:
                    if key in seen:  # the file's name is added by loads_yaml
                        raise ConfigError(f"{line}: duplicate key {key!r} (first given at "
                                          f"line {seen[key]}); a YAML mapping takes each key "
                                          "once")
                    seen[key] = line
                except TypeError:  # an unhashable key: the base class reports it
                    pass
        return super().construct_mapping(node, deep)


class _StrictLoader(_Strict, yaml.SafeLoader):
    """Strict, over PyYAML's pure-Python parser: its syntax errors quote the line."""


#: Strict over libyaml's parser where PyYAML was built with it (its wheels are): the same
#: documents, parsed about eight times as fast, which every job of the workflow pays on
#: the grid and tables files. A syntax error is told by :class:`_StrictLoader`.
_FastStrictLoader = (type("_FastStrictLoader", (_Strict, yaml.CSafeLoader), {})
                     if getattr(yaml, "__with_libyaml__", False) else _StrictLoader)


def loads_yaml(text: str, name: str) -> Any:
    """Parse YAML ``text`` (from ``name``, used in messages) strictly.

    :class:`ConfigError` ``"<name>:<line>: duplicate key 'k' (first given at line n)"`` for
    a repeated key, ``"<name>: invalid YAML (...)"`` for a syntax error.
    """
    try:
        try:
            return yaml.load(text, Loader=_FastStrictLoader)  # noqa: S506 - safe, strict
        except yaml.YAMLError:  # PyYAML's own parser names the fault better
            return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - safe, strict
    except ConfigError as err:
        raise ConfigError(f"{name}:{err}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{name}: invalid YAML ({err})") from None


def load_yaml(path: str | Path) -> Any:
    """The YAML file ``path``, strictly (see :func:`loads_yaml`); unreadable -> ConfigError."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{path}: cannot read ({err})") from None
    return loads_yaml(text, str(path))
