"""The ℓ∞-SAM limit directions (C1–C3) from their closed forms: against an exact oracle
(fractions), scale invariance in z and in (α, ρ) over 1e±300, and the derivation of the
weights from the solved flows."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from theorycheck.proofs.minor_first.predict import thresholds as th

from theorycheck.errors import TheorycheckError
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic.model import rho, tau


def _oracle(z, alpha, r, L):
    """The rule of the docstring with exact arithmetic (inputs are dyadic, so exact as floats)."""
    zq, aq, rq = [Fraction(x) for x in z], [Fraction(x) for x in alpha], Fraction(r)
    d = len(z)
    above = [a > rq for a in aq]
    if L == 1:
        w = [mpmath.mpf(x) for x in z]
    elif not any(above):
        w = [mpmath.mpf(1)] * d if L % 2 == 1 else [mpmath.mpf(1 if a == rq else 0) for a in aq]
    else:
        score = [zq[j] if L == 2 else zq[j] * (aq[j] - rq) ** (L - 2) for j in range(d)]
        top = max(score[j] for j in range(d) if above[j])
        sel = [above[j] and score[j] == top for j in range(d)]
        with mpmath.workdps(40):
            w = [(mpmath.mpf(float(aq[j] - rq)) ** 2 if L == 2 else mpmath.mpf(float(zq[j])) ** (mpmath.mpf(-L) / (L - 2)))
                 if sel[j] else mpmath.mpf(0) for j in range(d)]
    with mpmath.workdps(40):
        n = mpmath.sqrt(mpmath.fsum(x * x for x in w))
        return np.array([float(x / n) if n > 0 else 0.0 for x in w])


# dyadic values k/8: ties are exact, distinct values are well separated
dyadic = st.integers(1, 40).map(lambda k: k / 8)
cases = st.tuples(st.integers(1, 6), st.integers(1, 5)).flatmap(
    lambda dl: st.tuples(st.lists(dyadic, min_size=dl[0], max_size=dl[0]),
                         st.lists(dyadic, min_size=dl[0], max_size=dl[0]), dyadic, st.just(dl[1])))
# powers of two: the scaled inputs are the same numbers times c exactly, so an exact tie stays one (10**e is
# not: 4.125·1e21 rounds, and the rounded input has no tie, so its limit is rightly another direction)
scales = st.integers(-996, 996).map(lambda k: 2.0**k)


@settings(max_examples=300, deadline=None)
@given(cases)
def test_direction_equals_the_exact_rule(case):
    z, alpha, r, L = case
    got = th.linf_limit_direction(z, alpha, r, L)
    np.testing.assert_allclose(got, _oracle(z, alpha, r, L), rtol=0, atol=4e-16)
    n = np.linalg.norm(got)
    assert n == 0.0 or abs(n - 1) <= 4e-16


@settings(max_examples=300, deadline=None)
@given(cases, scales, scales)
def test_direction_is_scale_invariant(case, cz, ca):
    """z → c z and (α, ρ) → c' (α, ρ) leave the limit direction unchanged (C2: β_j ∝ (α_j − ρ)²;
    C3: time rescales), for c, c' powers of two in 2^±996 (about 1e±300)."""
    z, alpha, r, L = case
    base = th.linf_limit_direction(z, alpha, r, L)
    got = th.linf_limit_direction(cz * np.array(z), ca * np.array(alpha), ca * r, L)
    np.testing.assert_allclose(got, base, rtol=0, atol=1e-14)
    assert th.linf_prediction(cz * np.array(z), ca * np.array(alpha), ca * r, L) == th.linf_prediction(z, alpha, r, L)


def test_scale_regressions():
    """Cases the former linear-space code got wrong: an underflowed weight (3.7e-302 instead of
    1), and large z: the one coordinate with α_j > ρ carries the limit."""
    np.testing.assert_array_equal(
        th.linf_limit_direction(1e100 * np.array([4.0, 2.0, 4.0, 3.0]), [1, 1.5, 0.5, 4.84], 1.889, 3), [0, 0, 0, 1])
    for c in (1e-300, 1e-150, 1.0, 1e150, 1e300):
        d = th.linf_limit_direction(c * np.array([1.0, 2.0, 3.0]), [2.0, 3.0, 1.5], 1.0, 4)
        assert abs(np.linalg.norm(d) - 1) < 1e-15 and th.linf_prediction(c * np.array([1.0, 2.0, 3.0]),
                                                                             [2.0, 3.0, 1.5], 1.0, 4) == 2
        d = th.linf_limit_direction([1.0, 2.0, 3.0], c * np.array([2.0, 3.0, 1.5]), c, 2)
        np.testing.assert_allclose(d, [0, 0, 1], atol=1e-15)


def test_input_checks():
    with pytest.raises(TheorycheckError, match="z > 0"):
        th.linf_limit_direction([1.0, -1.0], [2.0, 2.0], 1.0, 2)
    with pytest.raises(TheorycheckError, match="α_j > 0"):
        th.linf_limit_direction([1.0, 1.0], [2.0, np.nan], 1.0, 2)


def test_weights_follow_from_the_solved_flows():
    """C2: β_j e^{−2 z_j τ} = u_j² e^{−2 z_j τ} → (α_j − ρ)² as τ → ∞ (α_j > ρ). C3: at the
    blow-up time, (τ* − τ)^{L/(L−2)} β_j → ((L−2) z_j)^{−L/(L−2)}: ∝ z_j^{−L/(L−2)}."""
    a = sp.Symbol("a", positive=True)  # α_j − ρ > 0
    u2 = TE.linf_l2_solution().subs(cf.alpha_j, rho + a)
    lim = sp.limit((u2**2 * sp.exp(-2 * cf.z_j * tau)).subs(cf.z_j, sp.Symbol("zp", positive=True)), tau, sp.oo)
    assert sp.simplify(lim - TE.linf_limit_weight(2).subs(cf.alpha_j, rho + a)) == 0
    eps = sp.Symbol("epsilon", positive=True)
    zp = sp.Symbol("zp", positive=True)
    for L in (3, 4, 5):
        u = TE.linf_blowup_solution(L).subs({cf.alpha_j: rho + a, cf.z_j: zp})
        ts = TE.linf_blowup_time(L).subs({cf.alpha_j: rho + a, cf.z_j: zp})
        expr = (u.subs(tau, ts - eps)) ** L * eps ** sp.Rational(L, L - 2)
        lim = sp.limit(expr, eps, 0, "+")
        ratio = sp.simplify(lim / TE.linf_limit_weight(L).subs(cf.z_j, zp))
        assert ratio.free_symbols == set(), (L, ratio)  # the same constant for every coordinate
