"""Numbers as the user typed them: a decimal string, a ``Fraction``, a ``Decimal`` or an int is the rational
it denotes (``"0.1"`` is 1/10, not float64(0.1)); a float is the binary number it is, and says so.

A proved answer is about these exact numbers: :meth:`Exact.ball` encloses the rational at any precision
(built from the exact fraction, never from a float or from Arb's own string parser), and
:meth:`Exact.text` echoes it in the answer's ``inputs``. Plain Python (``fractions``, ``decimal``); the
ball needs python-flint and imports it on use.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from numbers import Rational

from theorycheck.errors import SettingError

__all__ = ["Exact", "exact", "exact_vector", "decimal_text"]

#: a decimal as typed: sign, digits with an optional point, an optional exponent; or a fraction p/q
_DECIMAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_FRACTION = re.compile(r"^[+-]?\d+\s*/\s*\d+$")
#: the largest exponent a typed decimal may carry (10^±10000 is exact but absurd; beyond, refuse)
MAX_EXPONENT = 10_000


def decimal_text(q: Fraction) -> str:
    """The exact decimal expansion of ``q`` when it terminates (its denominator is 2^a 5^b: every float
    and every typed decimal), else ``p/q``."""
    if q.denominator == 1:
        return str(q.numerator)
    den, twos, fives = q.denominator, 0, 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return f"{q.numerator}/{q.denominator}"
    k = max(twos, fives)
    digits = abs(q.numerator) * 10**k // q.denominator
    sign = "-" if q < 0 else ""
    s = str(digits).rjust(k + 1, "0")
    whole, frac = s[:-k], s[-k:].rstrip("0")
    return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"


@dataclass(frozen=True)
class Exact:
    """A real number known exactly: ``value`` (a Fraction); ``binary`` when it came from a float (then it is
    that float's binary value, not the decimal the float was printed as)."""

    value: Fraction
    binary: bool = False

    def __float__(self) -> float:
        return float(self.value)

    @property
    def text(self) -> str:
        """The exact decimal (or p/q) this number is: what a proved answer echoes in ``inputs``."""
        return decimal_text(self.value)

    def ball(self):
        """An Arb ball containing exactly this number, at the current python-flint precision."""
        from flint import arb, fmpq

        return arb(fmpq(self.value.numerator, self.value.denominator))

    def as_dict(self) -> str:
        return self.text


def exact(v, what: str = "value") -> Exact:
    """``v`` as an :class:`Exact`: a decimal or fraction string ("0.52", "1e-3", "1/3"), an int, a
    Fraction or a Decimal exactly; a float (or numpy float) as its binary value (``binary=True``).
    Non-finite values and unparsable strings raise a one-line SettingError naming ``what``."""
    if isinstance(v, Exact):
        return v
    if isinstance(v, bool):
        raise SettingError(f"{what} = {v!r} is not a number")
    if isinstance(v, str):
        s = v.strip()
        if _FRACTION.match(s):
            p, q = (int(x) for x in s.split("/"))
            if q == 0:
                raise SettingError(f"{what} = {v!r}: division by zero")
            return Exact(Fraction(p, q))
        if not _DECIMAL.match(s):
            raise SettingError(f"{what} = {v!r} is not a number (give a decimal such as 0.52 or 1e-3, or p/q)")
        try:
            d = Decimal(s)
        except InvalidOperation:
            raise SettingError(f"{what} = {v!r} is not a number") from None
        if abs(d.as_tuple().exponent) > MAX_EXPONENT:
            raise SettingError(f"{what} = {v!r}: the exponent is beyond ±{MAX_EXPONENT}")
        return Exact(Fraction(d))
    if isinstance(v, Decimal):
        if not v.is_finite():
            raise SettingError(f"{what} = {v}: give a finite number")
        return Exact(Fraction(v))
    if isinstance(v, Rational):  # int, Fraction, numpy ints register as Integral
        return Exact(Fraction(int(v.numerator), int(v.denominator)))
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise SettingError(f"{what} = {v!r} is not a number") from None
    if not math.isfinite(f):
        raise SettingError(f"{what} = {f}: give a finite number")
    return Exact(Fraction(f), binary=True)


def exact_vector(v, what: str = "value") -> tuple[Exact, ...]:
    """A comma-separated string ("1,2,0.5"), or a sequence / 1-d array, as a tuple of :class:`Exact`."""
    if isinstance(v, str):
        parts = [p for p in v.replace(" ", "").split(",") if p != ""]
        if not parts:
            raise SettingError(f"{what} = {v!r}: give comma-separated numbers")
        return tuple(exact(p, what) for p in parts)
    try:
        items = list(v.reshape(-1)) if hasattr(v, "reshape") else list(v)
    except TypeError:
        return (exact(v, what),)
    return tuple(exact(x, what) for x in items)
