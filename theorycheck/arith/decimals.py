"""Decimal output of exact numbers and balls: the one place where a proved quantity becomes a decimal string.

- :func:`rounded` / :func:`outward`: a number rounded *outwards* (down for a lower end, up for an upper end)
  to a number of significant digits, so that the printed interval contains the exact one;
- :func:`down`, :func:`up`, :func:`lo_hi`: the ends of a ball, rounded outwards;
- :func:`common_digits`: the most significant digits every point of [lo, hi] rounds to (what a bracket
  proves about its value);
- :func:`exact_decimal`: the exact decimal of a rational when it has one (split points, exact inputs);
- :func:`fraction_of`: the exact rational of a decimal string, an mpmath number, a float or an exact ball.

Everything is computed in exact rational arithmetic (``fractions``): no working precision can round an
end inwards. Used by the proved stage and by the floating-point brackets of ``predict``.
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["common_digits", "down", "exact_decimal", "fraction_of", "lo_hi", "outward", "rounded", "scaled", "up"]


def fraction_of(x) -> Fraction:
    """The exact rational value of ``x``: a Fraction, an int, a float (its binary value), a decimal string
    ("0.52", "1e-3", "1/3"), an mpmath ``mpf`` (a binary number) or an exact ``arb`` (its midpoint, which
    must be the whole ball; use :func:`down` / :func:`up` for the ends of a wide ball)."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (int, float, str)):
        return Fraction(x.strip() if isinstance(x, str) else x)
    import mpmath as mp

    if isinstance(x, mp.mpf):
        if not mp.isfinite(x):
            raise ValueError(f"{x} has no exact rational value")
        m, e = (int(v) for v in x.man_exp) if x != 0 else (0, 0)
    elif callable(getattr(x, "man_exp", None)):  # python-flint arf (a ball's midpoint)
        m, e = (int(v) for v in x.man_exp())
    elif hasattr(x, "mid") and hasattr(x, "rad"):  # an arb
        return fraction_of(x.mid())
    else:
        return Fraction(x)
    return Fraction(m * 2**e) if e >= 0 else Fraction(m, 2 ** (-e))


def exact_decimal(x: Fraction, digits: int = 17) -> str:
    """A short exact decimal when ``x`` has one (a denominator 2^a 5^b: the split points do), else ``digits``
    significant digits (rounded to nearest: for display, not for an enclosure)."""
    d, k, m = x.denominator, 0, 0
    while d % 2 == 0:
        d //= 2
        k += 1
    while d % 5 == 0:
        d //= 5
        m += 1
    if d == 1:  # a finite decimal: exact
        n = max(k, m)
        s = str(x.numerator * 10**n // x.denominator)
        if n == 0:
            return s
        neg = s.startswith("-")
        s = s.lstrip("-").rjust(n + 1, "0")
        out = (s[:-n] + "." + s[-n:]).rstrip("0").rstrip(".")
        return ("-" if neg else "") + out
    import mpmath as mp

    with mp.workdps(digits + 5):
        return mp.nstr(mp.mpf(x.numerator) / x.denominator, digits)


def _exponent(q: Fraction) -> int:
    """The decimal exponent e with 10^e ≤ |q| < 10^(e+1) (q ≠ 0), exactly."""
    q = abs(q)
    e = math.floor(math.log10(q.numerator) - math.log10(q.denominator)) if q else 0
    while Fraction(10) ** e > q:
        e -= 1
    while Fraction(10) ** (e + 1) <= q:
        e += 1
    return e


def _scaled_integer(q: Fraction, digits: int, mode: str) -> tuple[int, int]:
    """(k, e) with k·10^e the ``digits``-significant-digit rounding of q: ``mode`` "down" (toward −∞), "up"
    (toward +∞) or "nearest" (ties away from zero)."""
    e = _exponent(q) - digits + 1
    n = q / Fraction(10) ** e
    if mode == "down":
        k = n.numerator // n.denominator
    elif mode == "up":
        k = -((-n.numerator) // n.denominator)
    else:
        k = int((abs(n) + Fraction(1, 2)).__floor__()) * (1 if n >= 0 else -1)
    return k, e


def rounded(q, up: bool, digits: int = 15) -> str:
    """``q`` rounded outwards (down, or ``up``) to ``digits`` significant decimal digits, as a decimal
    string (plain between 1e-7 and 1e20, else in scientific notation)."""
    q = fraction_of(q)
    if q == 0:
        return "0"
    k, e = _scaled_integer(q, int(digits), "up" if up else "down")
    if k == 0:
        return "0"
    x10 = e + len(str(abs(k))) - 1  # the decimal exponent of the result
    if -7 <= x10 <= 20:
        return exact_decimal(Fraction(k) * Fraction(10) ** e)
    d = str(abs(k)).rstrip("0") or "0"  # k·10^e exactly, in scientific notation
    mant = d[0] + ("." + d[1:] if len(d) > 1 else "")
    return f"{'-' if k < 0 else ''}{mant}e{x10}"


def outward(x, digits: int, direction: str) -> str:
    """``x`` (any number :func:`fraction_of` reads) rounded ``direction`` "down" or "up" to ``digits``
    significant digits: the end of a bracket that must contain what it brackets."""
    if direction not in ("down", "up"):
        raise ValueError(f"direction {direction!r}: 'down' or 'up'")
    return rounded(fraction_of(x), direction == "up", digits)


def down(x, digits: int = 15) -> str:
    """A decimal string ≤ every point of the ball ``x`` (its lower end rounded down)."""
    return rounded(fraction_of(x.lower()), False, digits)


def up(x, digits: int = 15) -> str:
    """A decimal string ≥ every point of the ball ``x`` (its upper end rounded up)."""
    return rounded(fraction_of(x.upper()), True, digits)


def lo_hi(x, digits: int = 15) -> list[str]:
    """[down, up] of the ball ``x``: an outward decimal enclosure."""
    return [down(x, digits), up(x, digits)]


def scaled(text: str | None, s: float, up: bool) -> str | None:
    """A decimal string divided by the power of two ``s``, rounded outwards again (``up``: upwards)."""
    if text is None or s == 1.0:
        return text
    return rounded(Fraction(text) / Fraction(s), up)


#: beyond this many zeros (before the digits, or after them in an integer) a decimal is written in scientific form
ZEROS = 6


def _fixed(k: int, e: int) -> str:
    """k·10^e keeping every digit of k (trailing zeros included): in fixed notation, or as d.ddd…e±X where fixed
    notation would need more than :data:`ZEROS` zeros (α at ρ = 1e300 is not 300 digits of zeros)."""
    s = str(abs(k))
    sign = "-" if k < 0 else ""
    if e > ZEROS or -e - len(s) > ZEROS:
        x = e + len(s) - 1
        return f"{sign}{s[0]}{'.' + s[1:] if len(s) > 1 else ''}e{'+' if x >= 0 else '-'}{abs(x):02d}"
    if e >= 0:
        return sign + s + "0" * e
    if len(s) > -e:
        return sign + s[:e] + "." + s[e:]
    return sign + "0." + "0" * (-e - len(s)) + s


def common_digits(lo, hi, most: int) -> tuple[int, str | None]:
    """The most significant digits D ≤ ``most`` such that ``lo`` and ``hi`` round (to nearest) to the same
    D-digit decimal — then every number between them does too, rounding being monotone — and that decimal
    with its trailing zeros (fixed notation, scientific at extreme scales: :func:`_fixed`); (0, None) when not
    even the first digit is common."""
    a, b = fraction_of(lo), fraction_of(hi)
    best: tuple[int, str | None] = (0, None)
    if a == 0 or b == 0 or (a < 0) != (b < 0):
        return best
    for D in range(1, int(most) + 1):
        ka, ea = _scaled_integer(a, D, "nearest")
        kb, eb = _scaled_integer(b, D, "nearest")
        if Fraction(ka) * Fraction(10) ** ea != Fraction(kb) * Fraction(10) ** eb:
            break
        if len(str(abs(ka))) > D:  # rounded up to the next power of ten: 9.99… → 10.0…
            ka, ea = ka // 10, ea + 1
        best = (D, _fixed(ka, ea))
    return best
