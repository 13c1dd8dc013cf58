"""Decimal strings of exact and ball values, rounded outwards: what the proved maps and paths print as enclosures."""

from __future__ import annotations

from fractions import Fraction


def _dec(x: Fraction, digits: int = 17) -> str:
    """A short exact decimal when x has one (the split points do), else ``digits`` significant digits."""
    d = x.denominator
    k = 0
    while d % 2 == 0:
        d //= 2
        k += 1
    m = 0
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


def _exact_fraction(x) -> Fraction:
    """The exact value of an exact arb (a binary number) as a Fraction."""
    m, e = x.mid().man_exp()
    m, e = int(m), int(e)
    return Fraction(m * 2**e) if e >= 0 else Fraction(m, 2 ** (-e))


def _rounded(q: Fraction, up: bool, digits: int = 15) -> str:
    """q rounded outwards (down, or up) to ``digits`` significant decimal digits, as a decimal string."""
    import math

    if q == 0:
        return "0"
    e = math.floor(math.log10(abs(float(q)))) - digits + 1
    scale = Fraction(10) ** (-e)
    n = q * scale
    k = -((-n.numerator) // n.denominator) if up else n.numerator // n.denominator
    if k == 0:
        return "0"
    x10 = e + len(str(abs(k))) - 1  # the decimal exponent of the result
    if -7 <= x10 <= 20:
        return _dec(Fraction(k) / scale)
    d = str(abs(k)).rstrip("0") or "0"  # k·10^e exactly, in scientific notation
    mant = d[0] + ("." + d[1:] if len(d) > 1 else "")
    return f"{'-' if k < 0 else ''}{mant}e{x10}"


def _down(x) -> str:
    """A decimal string ≤ every point of the ball x (its lower end rounded down)."""
    return _rounded(_exact_fraction(x.lower()), False)


def _up(x) -> str:
    """A decimal string ≥ every point of the ball x (its upper end rounded up)."""
    return _rounded(_exact_fraction(x.upper()), True)


def _lo_hi(x) -> list[str]:
    return [_down(x), _up(x)]


def _scaled(text: str | None, s: float, up: bool) -> str | None:
    """A decimal time string divided by the power of two s, rounded outwards again."""
    if text is None or s == 1.0:
        return text
    return _rounded(Fraction(text) / Fraction(s), up)
