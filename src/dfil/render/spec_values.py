"""The values a tables file declares beside its coordinates, checked where it is loaded
(pure Python): each table's number in the paper, unique, so no two tables publish under
one file name; and each number the paper printed (a row's ``paper:``), a number or
``mean±std`` as printed, so the paper diff and the claims read it as a number, never a
traceback."""

from __future__ import annotations

import re
from collections.abc import Mapping

from dfil.util.errors import ConfigError

#: A printed paper value given as text: ``16.4±7.2`` (a trailing ``%`` allowed).
PRINTED = re.compile(r"^-?\d+(\.\d+)?(±\d+(\.\d+)?)?%?$")


def check_values(tables: Mapping) -> None:
    """:class:`ConfigError` naming the table and dotted key for the first table number
    another table has too (0, an internal table's, excepted) or paper value that is not
    a number (``tables``: name -> :class:`dfil.render.table_spec.TableSpec`)."""
    numbered: dict[int, str] = {}
    for name, table in tables.items():
        if table.number and table.number in numbered:
            raise ConfigError(f"{name}.number: {table.number} is table "
                              f"{numbered[table.number]}'s number too; each table has its "
                              "own (its file is T<number>-<name>.tex)")
        numbered.setdefault(table.number, name)
        for i, row in enumerate(table.rows):
            for col, value in (row.paper or {}).items():
                if isinstance(value, str) and not PRINTED.match(value.strip()):
                    raise ConfigError(f"{name}.rows[{i}].paper.{col}: {value!r} is not a "
                                      "number (give a number, or mean±std as the paper "
                                      "prints it)")
