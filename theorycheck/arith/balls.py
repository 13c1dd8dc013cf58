"""Ball-arithmetic helpers: python-flint's global precision and series cap set for a block and restored,
hulls, and balls written to / read from decimal strings without losing a bit.

python-flint truncates every power series at the global length ``flint.ctx.cap`` (10 by default): a
Taylor method of order K must set it to at least K + 2, or it silently drops coefficients
(tests/test_validated.py shows an order-20 method going wrong with the default cap).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from flint import arb, ctx


@contextmanager
def arb_context(prec: int | None = None, cap: int | None = None) -> Iterator[None]:
    """Set ``flint.ctx.prec`` (bits) and/or ``flint.ctx.cap`` (series length) for a block; restore them after."""
    old_prec, old_cap = ctx.prec, ctx.cap
    try:
        if prec is not None:
            ctx.prec = int(prec)
        if cap is not None:
            ctx.cap = int(cap)
        yield
    finally:
        ctx.prec, ctx.cap = old_prec, old_cap


def to_ball(x) -> arb:
    """An arb from an arb, an int, a float (its exact binary value), a decimal string, or [mid, rad] strings."""
    if isinstance(x, arb):
        return x
    if isinstance(x, (list, tuple)) and len(x) == 2:
        return arb(str(x[0])) + arb(0, arb(str(x[1])).upper())
    if isinstance(x, float):
        m, e = x.as_integer_ratio()
        return arb(m) / e  # e is a power of two: exact
    return arb(x) if not isinstance(x, str) else arb(x)


def hull(a: arb, b: arb) -> arb:
    """A ball containing both balls (python-flint 0.9's ``arb.union`` is far from tight)."""
    m = (a + b) / 2
    D = (b - a) / 2
    lo_hi_rad = abs(D).upper() + m.rad()
    return arb(m.mid(), lo_hi_rad)


def interval(lo, hi) -> arb:
    """A ball containing [lo, hi] (lo ≤ hi numbers or balls)."""
    return hull(to_ball(lo), to_ball(hi))


def widen(a: arb, factor: float, absolute: arb) -> arb:
    """The ball with a's midpoint and radius factor·rad(a) + absolute (an inflation)."""
    return arb(a.mid(), a.rad() * arb(factor) + absolute)


def exact_decimal(x: arb) -> str:
    """The exact decimal expansion of the midpoint of x (a binary number: finitely many digits)."""
    m = x.mid()
    if m.is_zero():
        return "0"
    man, exp = m.man_exp()
    man, exp = int(man), int(exp)
    sign = "-" if man < 0 else ""
    man = abs(man)
    if exp >= 0:
        return sign + str(man << exp)
    digits = str(man * 5 ** (-exp))
    n = -exp
    if len(digits) <= n:
        digits = "0" * (n - len(digits) + 1) + digits
    out = digits[:-n] + "." + digits[-n:]
    out = out.rstrip("0").rstrip(".")
    return sign + out


def radius_text(x: arb) -> str:
    """A decimal string, at most 6 significant digits, that is certainly ≥ rad(x)."""
    r = x.rad()
    if r.is_zero():
        return "0"
    s = (r * arb("1.0001")).upper().str(6, radius=False)
    while not arb(s) > r:
        r = r * 2
        s = (r * arb("1.0001")).upper().str(6, radius=False)
    return s


def ball_text(x: arb) -> list[str]:
    """[exact decimal midpoint, decimal radius rounded up]: :func:`to_ball` reads back a ball ⊇ x."""
    return [exact_decimal(x), radius_text(x)]


def read_ball(t) -> arb:
    """The ball of :func:`ball_text` (at the caller's precision, which must hold the midpoint's bits)."""
    return arb(str(t[0])) + arb(0, arb(str(t[1])).upper()) if str(t[1]) != "0" else arb(str(t[0]))


def rounded(x: arb) -> arb:
    """x with its radius rounded up as :func:`ball_text` writes it (so that what is written is what is used)."""
    return read_ball(ball_text(x))


def decimal(x: arb, digits: int = 20) -> str:
    """``digits`` significant digits of x's midpoint (for display only)."""
    return x.mid().str(int(digits), radius=False)
