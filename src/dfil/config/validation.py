"""Strict, frozen config models on pydantic v2, and their errors as one line naming the
dotted key (pure Python).

Every config file the project reads (a cell, a grid, the declared tables) is validated
by models derived from :class:`StrictModel`: strict types (``"16"`` is not 16, ``42.0`` is
not 42, ``true`` is not 1; an int is taken where a float is asked), frozen instances, no
unknown key (with the closest known one suggested). :func:`validate` turns pydantic's
``ValidationError`` into a :class:`dfil.util.errors.ConfigError` whose message reads
``train.epochs: must be >= 1, got 0``; the caller prefixes the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from dfil.util.errors import ConfigError, did_you_mean

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class StrictModel(BaseModel):
    """A config section: strict, frozen, every key optional unless declared required, none
    unknown. An attribute's docstring is its description in the JSON Schema."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid",
                              use_attribute_docstrings=True, protected_namespaces=())

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        """An unknown key is named with the closest known one (``extra="forbid"`` alone
        would say neither)."""
        if isinstance(data, Mapping):
            allowed = sorted(f.alias or name for name, f in cls.model_fields.items())
            unknown = sorted((k for k in data if k not in allowed), key=str)
            if unknown:
                hint = did_you_mean(unknown[0], allowed)
                raise PydanticCustomError(
                    "unknown_key", "unknown key; {hint}allowed keys are {allowed}",
                    {"key": unknown[0], "hint": hint, "allowed": allowed})
        return data


def as_tuple(value: Any) -> Any:
    """A list as a tuple (a ``BeforeValidator``: YAML and JSON give lists)."""
    return tuple(value) if isinstance(value, list) else value


#: A sequence as a tuple: YAML and JSON give lists, the frozen config holds tuples (and
#: dumps them as lists again).
TupleOf = Annotated[tuple[T, ...], BeforeValidator(as_tuple)]
#: A non-empty sequence, as a tuple.
NonEmpty = Annotated[tuple[T, ...], Field(min_length=1), BeforeValidator(as_tuple)]
#: Two of a kind (a pair of column names), as a tuple.
PairOf = Annotated[tuple[T, T], BeforeValidator(as_tuple)]
#: A count of at least one (epochs, batch sizes, layers, ...).
Count = Annotated[int, Field(ge=1)]
#: A count that may be zero (0 often meaning "none" or "all", as documented per field).
NonNegative = Annotated[int, Field(ge=0)]
#: A finite real number that may be zero (weight decays, loss weights, lambdas).
NonNegativeReal = Annotated[float, Field(ge=0, allow_inf_nan=False)]
#: A finite real number above zero (learning rates, widths).
PositiveReal = Annotated[float, Field(gt=0, allow_inf_nan=False)]
#: A share in [0, 1].
Share = Annotated[float, Field(ge=0, le=1)]

#: One-line messages by pydantic error type (``got`` is the offending value).
_MESSAGES = {
    "greater_than_equal": "must be >= {ge:g}, got {got}",
    "greater_than": "must be > {gt:g}, got {got}",
    "less_than_equal": "must be <= {le:g}, got {got}",
    "less_than": "must be < {lt:g}, got {got}",
    "literal_error": "must be {expected}, got {got}",
    "int_type": "expected an integer, got {got}",
    "float_type": "expected a number, got {got}",
    "finite_number": "must be a finite number, got {got}",
    "bool_type": "expected true or false, got {got}",
    "string_type": "expected a string, got {got}",
    "tuple_type": "expected a list, got {got}",
    "list_type": "expected a list, got {got}",
    "dict_type": "expected a mapping, got {got}",
    "model_type": "expected a mapping, got {got}",
    "missing": "required but missing",
    "too_short": "must list at least {min_length} item(s)",
    "too_long": "must list at most {max_length} item(s), got {got}",
    "string_pattern_mismatch": "must match {pattern}, got {got}",
}


def validate(model: type[M], data: Any, where: str = "") -> M:
    """``model`` built from plain ``data`` (None: every default); :class:`ConfigError`
    naming the dotted key (below the prefix ``where``, e.g. ``"model"``) otherwise."""
    data = {} if data is None else data
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise config_error(err, data, where) from None


def config_error(err: ValidationError, data: Any, where: str = "") -> ConfigError:
    """The first error of ``err`` (from validating ``data``) as one line."""
    first = err.errors(include_url=False)[0]
    path = ".".join(p for p in (where, key_path(first, data)) if p) or "<root>"
    return ConfigError(f"{path.replace('.[', '[')}: {message(first)}")


def message(error: ErrorDetails) -> str:
    """What is wrong, in the project's words (``must be >= 1, got 0``)."""
    template = _MESSAGES.get(error["type"])
    if template is None:  # a custom error (its message is complete) or a rare type
        return error["msg"]
    got = repr(error.get("input"))
    got = got if len(got) <= 80 else got[:77] + "..."
    return template.format(got=got, **error.get("ctx", {}))


def key_path(error: ErrorDetails, data: Any) -> str:
    """The dotted key of ``error`` in ``data`` (``groups.G1.cell.train.epochs``,
    ``eval.grid_sizes[1]``).

    pydantic's location also holds the tags of union members and ``[key]`` for a bad
    mapping key; walking the data keeps only the keys and indices the user wrote.
    """
    loc = list(error["loc"])
    if error["type"] == "unknown_key":
        loc.append(error["ctx"]["key"])
    parts: list[str] = []
    node = data
    for i, step in enumerate(loc):
        if step == "[key]":  # the mapping key itself is wrong: name the mapping
            parts.pop()
        elif isinstance(node, Mapping) and step in node:
            parts.append(str(step))
            node = node[step]
        elif isinstance(node, Sequence) and not isinstance(node, str) and isinstance(step, int):
            parts.append(f"[{step}]")
            node = node[step] if step < len(node) else None
        elif error["type"] == "missing" and i == len(loc) - 1:
            parts.append(str(step))
    return ".".join(parts)
