"""Numbers as the paper prints them, and arithmetic on the values they stand for (pure).

A printed number is a rounding: ``"50.4"`` stands for any value in [50.35, 50.45]. Every
number the audit reads is either such a printed string (its interval comes from its last
digit) or a bare YAML number, which is exact (a count such as ``2044``, a constant such
as ``0.96``). Arithmetic on intervals gives the range a recomputed quantity can take;
it is exact when each name appears once in an expression and conservative (wider) when
a name repeats.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass

from dfil.stats import rounding_interval

_PLUS_MINUS = re.compile(r"^\s*([^±]+?)\s*±\s*([^±]+?)\s*$")
_NUMBER = re.compile(r"[+\-\u2212]?(?:\d[\d,]*\.?\d*|\.\d+)")


@dataclass(frozen=True)
class Interval:
    """A closed interval [lo, hi] of real values."""

    lo: float
    hi: float

    def __post_init__(self):
        if not self.lo <= self.hi:
            raise ValueError(f"interval needs lo <= hi, got [{self.lo}, {self.hi}]")

    @classmethod
    def point(cls, x: float) -> Interval:
        return cls(float(x), float(x))

    @property
    def mid(self) -> float:
        return (self.lo + self.hi) / 2

    def overlaps(self, other: Interval) -> bool:
        """Whether the two share a value. Two rounding intervals that merely touch do not:
        one rounding convention never prints the boundary value both ways, so "9.2" and
        "9.3" cannot be one value; a point only has to lie in the other interval."""
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        tol = 1e-9 * max(1.0, abs(lo), abs(hi))
        if self.lo == self.hi or other.lo == other.hi:
            return lo <= hi + tol
        return hi - lo > tol

    def __add__(self, o: Interval) -> Interval:
        return Interval(self.lo + o.lo, self.hi + o.hi)

    def __sub__(self, o: Interval) -> Interval:
        return Interval(self.lo - o.hi, self.hi - o.lo)

    def __mul__(self, o: Interval) -> Interval:
        c = [self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi]
        return Interval(min(c), max(c))

    def __truediv__(self, o: Interval) -> Interval:
        if o.lo <= 0.0 <= o.hi:
            raise ValueError(f"division by an interval containing 0: [{o.lo}, {o.hi}]")
        return self * Interval(1.0 / o.hi, 1.0 / o.lo)

    def __neg__(self) -> Interval:
        return Interval(-self.hi, -self.lo)

    def __pow__(self, o: Interval) -> Interval:
        if o.lo != o.hi or o.lo != int(o.lo) or o.lo < 0:
            raise ValueError(f"only non-negative integer powers, got [{o.lo}, {o.hi}]")
        k = int(o.lo)
        c = [self.lo**k, self.hi**k]
        lo = 0.0 if k % 2 == 0 and self.lo < 0 < self.hi else min(c)
        return Interval(lo, max(c))


@dataclass(frozen=True)
class Printed:
    """A number as printed (``text``), the value it shows and the interval it stands for."""

    text: str
    value: float
    interval: Interval
    exact: bool


def printed(x) -> Printed:
    """Parse one printed number: a bare YAML int/float is exact; a string is a rounded
    value whose interval is half a unit of its last digit either way. Signs (``+``, ``-``,
    U+2212), thousands commas, a trailing ``%`` or ``pp`` and a leading ``≈``/``~`` are
    accepted: ``"+1.7"``, ``"1,959,395"``, ``"0.1%"``, ``"≈0.012"``, ``".352"``."""
    if isinstance(x, bool):
        raise ValueError(f"not a number: {x!r}")
    if isinstance(x, (int, float)):
        return Printed(str(x), float(x), Interval.point(x), True)
    text = str(x)
    core = text.strip().lstrip("≈~").strip()
    for suffix in ("%", "pp", "×"):
        core = core.removesuffix(suffix).strip()
    core = core.replace(",", "").replace("\u2212", "-").removeprefix("+")
    if not _NUMBER.fullmatch(core):
        raise ValueError(f"not a printed number: {text!r}")
    lo, hi = rounding_interval(core)
    return Printed(text, float(core), Interval(lo, hi), False)


def mean_sd(text: str) -> tuple[Printed, Printed]:
    """``"50.4 ± 1.8"`` -> (mean, sd), each a :class:`Printed`."""
    m = _PLUS_MINUS.match(str(text))
    if not m:
        raise ValueError(f"expected 'mean ± sd', got {text!r}")
    return printed(m.group(1)), printed(m.group(2))


def printed_range(text: str) -> tuple[Printed, Printed]:
    """The two ends of a printed range: ``"[0.43, 0.97]"``, ``"+11.7 to +16.5"``,
    ``"0.78–0.83"``."""
    parts = _NUMBER.findall(str(text).replace("–", " to ").replace("—", " to "))
    if len(parts) != 2:
        raise ValueError(f"expected a range of two numbers, got {text!r}")
    return printed(parts[0]), printed(parts[1])


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow}


def _i_floor(x: Interval) -> Interval:
    return Interval(math.floor(x.lo), math.floor(x.hi))


def _i_sqrt(x: Interval) -> Interval:
    if x.lo < 0:
        raise ValueError(f"sqrt of an interval reaching below 0: [{x.lo}, {x.hi}]")
    return Interval(math.sqrt(x.lo), math.sqrt(x.hi))


def _i_log2(x: Interval) -> Interval:
    if x.lo <= 0:
        raise ValueError(f"log2 of an interval reaching 0: [{x.lo}, {x.hi}]")
    return Interval(math.log2(x.lo), math.log2(x.hi))


def _i_min(*xs: Interval) -> Interval:
    return Interval(min(x.lo for x in xs), min(x.hi for x in xs))


def _i_max(*xs: Interval) -> Interval:
    return Interval(max(x.lo for x in xs), max(x.hi for x in xs))


def _i_abs(x: Interval) -> Interval:
    if x.lo >= 0:
        return x
    if x.hi <= 0:
        return -x
    return Interval(0.0, max(-x.lo, x.hi))


_FUNCS = {"floor": _i_floor, "sqrt": _i_sqrt, "log2": _i_log2, "min": _i_min, "max": _i_max,
          "abs": _i_abs}


def evaluate(expr: str, env: dict[str, Interval]) -> Interval:
    """The interval an arithmetic expression over named intervals can take.

    Only numbers, names in ``env``, ``+ - * / **`` (integer powers), unary minus and the
    functions floor, sqrt, log2, min, max, abs are allowed; anything else is a
    ``ValueError`` naming it (the expressions come from a data file, never from code).
    """
    try:
        tree = ast.parse(str(expr), mode="eval")
    except SyntaxError as err:
        raise ValueError(f"cannot parse expression {expr!r}: {err.msg}") from None
    return _eval(tree.body, env, expr)


def _eval(node, env, expr) -> Interval:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return Interval.point(node.value)
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ValueError(f"expression {expr!r} names {node.id!r}, which is not among "
                             f"its inputs {sorted(env)}")
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval(node.left, env, expr), _eval(node.right, env, expr))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        x = _eval(node.operand, env, expr)
        return -x if isinstance(node.op, ast.USub) else x
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in _FUNCS and not node.keywords:
        return _FUNCS[node.func.id](*(_eval(a, env, expr) for a in node.args))
    raise ValueError(f"expression {expr!r}: {ast.dump(node)[:60]} is not allowed")


def point_value(expr: str, env: dict[str, float]) -> float:
    """The expression at the printed values themselves (each input a point)."""
    return evaluate(expr, {k: Interval.point(v) for k, v in env.items()}).mid


def fmt(x: float, digits: int = 4) -> str:
    """A recomputed number for the report: ``digits`` significant digits, no exponent
    for ordinary magnitudes."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if x == 0:
        return "0"
    if abs(x) >= 1e4 and abs(x) < 1e15 and abs(x - round(x)) < 1e-9:
        return f"{int(round(x)):,}"  # a count: every digit matters
    if abs(x) >= 1e6 or abs(x) < 1e-4:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}" if abs(x) < 10 ** digits else f"{x:,.0f}"
