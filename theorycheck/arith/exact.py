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
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from numbers import Rational

from theorycheck.errors import SettingError
from theorycheck.record import Keys

__all__ = ["Exact", "ExactInputs", "exact", "exact_range", "exact_vector", "decimal_text", "inputs_text",
           "representable"]

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
    """A real number known exactly: ``value`` (a Fraction); ``binary`` when it came from a float whose binary
    value is not the decimal it prints as (0.1 → 0.1000000000000000055…): the number used is that binary
    value, and an answer about it says so. A float such as 0.5 or 1.0 is the decimal it prints as."""

    value: Fraction
    binary: bool = False

    def __float__(self) -> float:
        return float(self.value)

    @property
    def text(self) -> str:
        """The exact decimal (or p/q) this number is: what a proved answer echoes in ``inputs``."""
        return decimal_text(self.value)

    @property
    def short(self) -> str:
        """The number for a message: :attr:`text` when short, else 6 significant digits ("1e-400")."""
        if len(self.text) <= 24:
            return self.text
        from decimal import localcontext

        with localcontext() as c:
            c.prec, c.Emax, c.Emin = 6, 10**9, -(10**9)
            return format((Decimal(self.value.numerator) / Decimal(self.value.denominator)).normalize(), "g")

    def ball(self):
        """An Arb ball containing exactly this number, at the current python-flint precision."""
        from flint import arb, fmpq

        return arb(fmpq(self.value.numerator, self.value.denominator))

    def as_dict(self) -> str:
        return self.text

    def as_float_used(self) -> Exact:
        """The number a float64 computation of this one is about: itself when float64 holds it exactly, else
        the float's binary value (``binary`` True)."""
        f = float(self.value)
        return self if Fraction(f) == self.value else Exact(Fraction(f), binary=True)


def exact(v, what: str = "value") -> Exact:
    """``v`` as an :class:`Exact`: a decimal or fraction string ("0.52", "1e-3", "1/3"), an int, a
    Fraction or a Decimal exactly; a float (or numpy float) as its binary value (``binary=True`` when that
    is not the decimal the float prints as).
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
        if s.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise SettingError(f"{what} = {v!r} is non-finite: give a finite number")
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
    q = Fraction(f)
    return Exact(q, binary=Fraction(repr(f)) != q)


def exact_vector(v, what: str = "value") -> tuple[Exact, ...]:
    """A comma-separated string ("1,2,0.5"), or a sequence / 1-d array, as a tuple of :class:`Exact`."""
    if isinstance(v, str):
        parts = [p for p in v.replace(" ", "").split(",") if p != ""]
        if not parts or "" in [p.strip() for p in v.split(",")]:
            raise SettingError(f"{what} = {v!r} is not a comma-separated list of numbers (e.g. 1,2,3)")
        out = []
        for p in parts:
            try:
                out.append(exact(p, what))
            except SettingError as e:
                if "non-finite" in str(e) or "beyond" in str(e) or "division" in str(e):
                    raise
                raise SettingError(f"{what} = {v!r} is not a comma-separated list of numbers (e.g. 1,2,3 or "
                                   f"0.52,1/3): {p!r} is not a number") from None
        return tuple(out)
    try:
        items = list(v.reshape(-1)) if hasattr(v, "reshape") else list(v)
    except TypeError:
        return (exact(v, what),)
    return tuple(exact(x, what) for x in items)


def exact_range(text, what: str = "alpha") -> tuple[Exact, Exact]:
    """``"A:B"`` (two numbers as :func:`exact` reads them, 0 < A < B compared exactly) as a pair of
    :class:`Exact`; a pair (A, B) of numbers is taken as it is. A malformed range is a one-line SettingError."""
    if isinstance(text, str):
        parts = text.split(":")
        if len(parts) != 2:
            raise SettingError(f"{what} = {text!r}: give a range A:B with 0 < A < B (e.g. 0.4:0.44)")
        a, b = exact(parts[0], what), exact(parts[1], what)
    else:
        try:
            a, b = (exact(v, what) for v in text)
        except (TypeError, ValueError):
            raise SettingError(f"{what} = {text!r}: give a range A:B or a pair (A, B) with 0 < A < B") from None
    if not 0 < a.value < b.value:
        raise SettingError(f"{what} = {a.text}:{b.text}: a range needs 0 < A < B")
    return a, b


def representable(x: Exact, what: str) -> float:
    """``float(x)``, refusing a nonzero number that float64 turns into 0 or ∞ (beyond about 1e±308): the
    floating-point work would then be about another problem than the proved one."""
    try:
        f = float(x.value)
    except OverflowError:
        f = math.inf
    if x.value != 0 and (f == 0 or not math.isfinite(f)):
        raise SettingError(f"{what} = {x.short} is beyond float64's range "
                           "(about 1e-308 to 1e308): rescale the problem")
    return f


def _texts(v) -> object:
    return v.text if isinstance(v, Exact) else [_texts(x) for x in v]


def _any_binary(v) -> bool:
    return v.binary if isinstance(v, Exact) else any(_any_binary(x) for x in v)


#: the keys of an ``inputs`` object (:meth:`ExactInputs.as_dict`)
INPUTS_KEYS = Keys("inputs", "z", "rho", "alpha", "depth", "from_float", "float_inputs")


@dataclass(frozen=True)
class ExactInputs:
    """The exact numbers a proved answer is about: the example ``z`` (None for several examples), ``rho``,
    the initialisation ``alpha`` (one :class:`Exact`, one per coordinate, or None when the answer is about
    no particular α) and the depth. Built from a Setting by :func:`theorycheck.setting.exact_inputs`.

    ``as_dict()`` is the ``inputs`` key of every proved answer (exact decimal strings, or p/q); ``text`` the
    same in words. ``from_float`` is True when some number came from a float (then it is that float's
    binary value, written out in full, and not the decimal it prints as), and ``float_inputs`` names which."""

    z: tuple[Exact, ...] | None
    rho: Exact
    alpha: Exact | tuple[Exact, ...] | None = None
    depth: int | None = None

    @property
    def zq(self) -> tuple[Fraction, ...]:
        """z as Fractions (exact)."""
        if self.z is None:
            raise SettingError("these inputs have several examples; the one-example z is not defined")
        return tuple(v.value for v in self.z)

    @property
    def float_inputs(self) -> list[str]:
        """The names of the inputs that came from floats (their binary values are used)."""
        named = (("z", self.z), ("rho", self.rho), ("alpha", self.alpha))
        return [n for n, v in named if v is not None and _any_binary(v)]

    @property
    def from_float(self) -> bool:
        return bool(self.float_inputs)

    def with_alpha(self, alpha) -> ExactInputs:
        """The same inputs about the initialisation ``alpha`` (anything :func:`exact` reads, or None)."""
        return replace(self, alpha=None if alpha is None else exact(alpha, "alpha"))

    def as_dict(self) -> dict:
        """Keys: z (decimal strings), rho, alpha (only when given), depth, from_float (bool), float_inputs."""
        out: dict = {}
        if self.z is not None:
            out["z"] = _texts(self.z)
        out["rho"] = self.rho.text
        if self.alpha is not None:
            out["alpha"] = _texts(self.alpha)
        if self.depth is not None:
            out["depth"] = int(self.depth)
        out["from_float"] = self.from_float
        out["float_inputs"] = self.float_inputs
        return out

    @property
    def text(self) -> str:
        """One line: "inputs (exact): z = (0.52, 0.91, 1.77), ρ = 0.29, L = 2" and which came from floats."""
        return inputs_text(self.as_dict())


def inputs_text(d: dict) -> str:
    """The words of an ``inputs`` object (:meth:`ExactInputs.as_dict`): "inputs (exact): z = (…), ρ = …, L = …"
    and, when some came from floats, which (their binary values are used)."""
    parts = []
    if "z" in d:
        parts.append(f"z = ({', '.join(d['z'])})")
    parts.append(f"ρ = {d['rho']}")
    if "alpha" in d:
        a = d["alpha"]
        parts.append(f"α = {a}" if isinstance(a, str) else f"α = ({', '.join(map(str, a))})")
    if "depth" in d:
        parts.append(f"L = {d['depth']}")
    floats = d.get("float_inputs") or []
    tail = ("; from a float, taken as its binary value: " + ", ".join(floats)) if d.get("from_float") else ""
    return "inputs (exact): " + ", ".join(parts) + tail
