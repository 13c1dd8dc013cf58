"""The certificate checker's own evaluation of the symbolic fields: a sympy expression evaluated at balls or power
series by walking its tree (it shares nothing with the compiled forms the integrator uses). The walk is flattened
once into a tape (each distinct subexpression one slot) and replayed per call; :func:`_walk`, the recursive walk,
is kept as the tape's reference (tests/test_checker_tape.py checks that both give the same balls).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from theorycheck.proved.check import CertificateError, exact_ball

__all__ = ["TreeEval", "TreeEvals"]

class TreeEval:
    """Evaluates a sympy expression at balls or power series by walking its tree (the checker's own
    evaluation: it shares nothing with the compiled forms the integrator uses). The walk is flattened once
    into a tape (each distinct subexpression one slot, in the order the recursive walk first reaches it) and
    replayed per call: the same operations on the same operands as :func:`_walk`, without re-walking the tree."""

    def __init__(self, expr):
        self.expr = expr
        self._tape: list | None = None

    def __call__(self, env: dict):
        if self._tape is None:
            self._tape, _ = _tape_of([self.expr])
        return _replay(self._tape, env)[-1]


class TreeEvals:
    """Several expressions evaluated together (a field and its Jacobian): one tape, so that a subexpression they
    share is computed once per call; each value is the one :class:`TreeEval` gives for its expression."""

    def __init__(self, exprs):
        self.exprs = list(exprs)
        self._tape: list | None = None
        self._outs: list = []

    def __call__(self, env: dict) -> list:
        if self._tape is None:
            self._tape, self._outs = _tape_of(self.exprs)
        v = _replay(self._tape, env)
        return [v[k] for k in self._outs]


# the tape's instructions: (op, a, b); slots are indices into the values of one replay
_SYM, _CONST, _ADD, _MUL, _IPOW, _SQRT, _RSQRT, _RPOW, _EXP = range(9)


def _tape_of(exprs: list) -> tuple[list, list]:
    """The post-order tape of ``exprs`` and the slot of each: equal subexpressions share one slot, as in
    :func:`_walk`'s memo."""
    import sympy as sp

    tape: list = []
    slot: dict = {}

    def visit(e) -> int:
        if e in slot:
            return slot[e]
        if isinstance(e, sp.Symbol):
            ins = (_SYM, e.name, None)
        elif isinstance(e, sp.Rational):  # integers too
            ins = (_CONST, Fraction(int(e.p), int(e.q)), None)
        elif isinstance(e, (sp.Add, sp.Mul)):
            ins = (_ADD if isinstance(e, sp.Add) else _MUL, tuple(visit(a) for a in e.args), None)
        elif isinstance(e, sp.Pow):
            b, n = visit(e.args[0]), e.args[1]
            if n.is_Integer and n != 0:
                ins = (_IPOW, b, int(n))
            elif n == sp.Rational(1, 2):
                ins = (_SQRT, b, None)
            elif n == sp.Rational(-1, 2):
                ins = (_RSQRT, b, None)
            else:
                ins = (_RPOW, b, visit(n))
        elif isinstance(e, sp.exp):
            ins = (_EXP, visit(e.args[0]), None)
        else:
            raise CertificateError(f"the checker does not evaluate {type(e).__name__}")
        tape.append(ins)
        slot[e] = len(tape) - 1
        return slot[e]

    outs = [visit(e) for e in exprs]
    return tape, outs


def _replay(tape: list, env: dict) -> list:
    """The values of the tape's slots at ``env`` (balls or series by name)."""
    add, mul, inv = _series_ops()
    v: list = []
    for op, a, b in tape:
        if op == _SYM:
            out = env[a]
        elif op == _CONST:
            out = exact_ball(a)
        elif op == _ADD or op == _MUL:
            f = add if op == _ADD else mul
            out = v[a[0]]
            for k in a[1:]:
                out = f(out, v[k])
        elif op == _IPOW:
            x = out = v[a]
            for _ in range(abs(b) - 1):
                out = mul(out, x)
            if b < 0:
                out = inv(out)
        elif op == _SQRT:
            out = v[a].sqrt()
        elif op == _RSQRT:
            out = v[a].rsqrt()
        elif op == _RPOW:
            out = (v[a].log() * v[b]).exp()
        else:  # _EXP
            out = v[a].exp()
        v.append(out)
    return v


def _walk(e, env, memo):
    """The recursive tree walk the tape replays (kept as the tape's reference: tests/test_checker_tape.py
    checks that both give the same balls)."""
    import sympy as sp

    if e in memo:
        return memo[e]
    if isinstance(e, sp.Symbol):
        out = env[e.name]
    elif isinstance(e, sp.Rational):  # integers too
        out = exact_ball(Fraction(int(e.p), int(e.q)))
    elif isinstance(e, (sp.Add, sp.Mul)):
        add, mul, _inv = _series_ops()
        op = add if isinstance(e, sp.Add) else mul
        out = None
        for a in e.args:
            v = _walk(a, env, memo)
            out = v if out is None else op(out, v)
    elif isinstance(e, sp.Pow):
        out = _power(_walk(e.args[0], env, memo), e.args[1], env, memo)
    elif isinstance(e, sp.exp):
        out = _walk(e.args[0], env, memo).exp()
    else:
        raise CertificateError(f"the checker does not evaluate {type(e).__name__}")
    memo[e] = out
    return out


def _power(b, n, env, memo):
    import sympy as sp

    _add, mul, inv = _series_ops()
    if n.is_Integer and n != 0:
        out = b
        for _ in range(abs(int(n)) - 1):
            out = mul(out, b)
        return out if n > 0 else inv(out)
    if n == sp.Rational(1, 2):
        return b.sqrt()
    if n == sp.Rational(-1, 2):
        return b.rsqrt()
    return (b.log() * _walk(n, env, memo)).exp()


@lru_cache(maxsize=1)
def _series_ops():
    """(add, mul, inv) on balls and power series alike: a series is put first (a ball does not take a series on
    its right), 1/x as a ball quotient. Shared by the tape and the walk, so that both do the same operations."""
    from flint import arb, arb_series

    def add(a, b):
        if isinstance(b, arb_series) and not isinstance(a, arb_series):
            a, b = b, a
        return a + b

    def mul(a, b):
        if isinstance(b, arb_series) and not isinstance(a, arb_series):
            a, b = b, a
        return a * b

    def inv(a):
        return arb(1) / a

    return add, mul, inv
