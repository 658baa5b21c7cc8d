"""Reading YAML strictly: a key given twice in one mapping is an error, not "last one wins".

PyYAML's safe loader keeps the last of duplicate keys without a word, so a grid, cell or
table file edited in two places would silently use one of them. Every YAML file the
project reads goes through :func:`load_yaml`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dfil.errors import ConfigError

_MERGE = "tag:yaml.org,2002:merge"


class _DuplicateKey(Exception):
    def __init__(self, key, line: int, first: int):
        super().__init__(key, line, first)
        self.key, self.line, self.first = key, line, first


class _StrictLoader(yaml.SafeLoader):
    """Safe loader that refuses a mapping key given twice (``<<`` merges may override)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE:
                    continue
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                try:
                    if key in seen:
                        raise _DuplicateKey(key, line, seen[key])
                    seen[key] = line
                except TypeError:  # an unhashable key: the base class reports it
                    pass
        return super().construct_mapping(node, deep)


def loads_yaml(text: str, name: str) -> Any:
    """Parse YAML ``text`` (from ``name``, used in messages) strictly.

    :class:`ConfigError` ``"<name>:<line>: duplicate key 'k' (first given at line n)"`` for
    a repeated key, ``"<name>: invalid YAML (...)"`` for a syntax error.
    """
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except _DuplicateKey as dup:
        raise ConfigError(f"{name}:{dup.line}: duplicate key {dup.key!r} (first given at "
                          f"line {dup.first}); a YAML mapping takes each key once") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{name}: invalid YAML ({err})") from None


def load_yaml(path: str | Path) -> Any:
    """The YAML file ``path``, strictly (see :func:`loads_yaml`); unreadable -> ConfigError."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{path}: cannot read ({err})") from None
    return loads_yaml(text, str(path))
