"""The certificate checker evaluates the symbolic fields by replaying a tape of the tree walk
(theorycheck.proved.tape.TreeEval). The replay must give the same balls as the recursive walk it flattens, bit for
bit, at balls and at power series, on the fields the checkers use."""

from __future__ import annotations

import random

import pytest
import sympy as sp

from theorycheck.proved.check import CertificateError, precision
from theorycheck.proved.tape import TreeEval, TreeEvals, _walk


def _fields():
    from theorycheck.symbolic import validated_fields as S

    _t, _x, _p, f2 = S.reduced_l2_system(3, frame=True)
    _t, y, p, f4 = S.ratio_blowup_system(4, 2)
    _t, y6, p6, f6 = S.ratio_blowup_system(6, 3)
    jac = [sp.diff(e, s) for e in f4 for s in y]
    return [*f2, *f4, *jac, *f6]


def _same(a, b) -> bool:
    from flint import arb_series

    if isinstance(a, arb_series) or isinstance(b, arb_series):
        ca, cb = a.coeffs(), b.coeffs()
        return len(ca) == len(cb) and all(_same(x, y) for x, y in zip(ca, cb))
    return a.mid().man_exp() == b.mid().man_exp() and a.rad().man_exp() == b.rad().man_exp()


@pytest.mark.parametrize("series", [False, True])
def test_the_tape_gives_the_walks_balls_bit_for_bit(series):
    from flint import arb, arb_series, ctx

    rnd = random.Random(0)
    old = ctx.cap
    try:
        ctx.cap = 6
        with precision(120):
            for e in _fields():
                names = sorted(str(s) for s in e.free_symbols)
                for _ in range(3):
                    env = {n: arb(rnd.uniform(0.2, 2.0), rnd.uniform(0, 1e-20)) for n in names}
                    if series and names:
                        n0 = names[0]
                        env[n0] = arb_series([env[n0], arb(rnd.uniform(-1, 1)), arb(rnd.uniform(-1, 1))])
                    assert _same(TreeEval(e)(env), _walk(e, env, {})), (e, env)
    finally:
        ctx.cap = old


def test_an_expression_the_checker_does_not_evaluate_is_a_certificate_error():
    x = sp.Symbol("x")
    with pytest.raises(CertificateError, match="does not evaluate sin"):
        TreeEval(sp.sin(x) + 1)({"x": None})


def test_evaluated_together_each_expression_has_its_own_value():
    from flint import arb

    from theorycheck.symbolic import validated_fields as S

    _t, y, _p, f = S.ratio_blowup_system(4, 3)
    exprs = [*f, *(sp.diff(e, s) for e in f for s in y)]
    env = {str(s): arb(0.1 * (k + 3)) for k, s in enumerate(sorted(set().union(*(e.free_symbols for e in exprs)),
                                                                    key=str))}
    with precision(100):
        together = TreeEvals(exprs)(env)
        assert len(together) == len(exprs)
        assert all(_same(v, TreeEval(e)(env)) for v, e in zip(together, exprs))
