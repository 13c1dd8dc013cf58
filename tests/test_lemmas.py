"""The depth-L lemmas (P3, P4, P5, P6, LOCK) are proved by sympy for a symbolic depth and dimension
(theorycheck.proofs.minor_first.lemma_proofs), and strength() reads those proofs."""

import pytest
import sympy as sp
from theorycheck.proofs.minor_first import lemma_proofs as lp
from theorycheck.proofs.minor_first.lemmas import strength

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import validated_fields as S
from theorycheck.symbolic.theorem import REFUTED, VERIFIED


@pytest.mark.parametrize("depth", [4, 6, 8])
@pytest.mark.parametrize("dim", [1, 2, 3, 4, 5])
def test_each_depth_lemma_is_proved(depth, dim):
    for name in ("P3", "P4", "P5", "P6", "LOCK"):
        s = strength(name, depth=depth, dim=dim)
        assert s.proved, (name, s.because)
        assert "symbolic L and d" in s.because


@pytest.mark.parametrize("depth", [3, 5, 7])
def test_even_lemmas_are_not_proved_for_odd_depth(depth):
    for name in ("P3", "P4", "P6"):
        s = strength(name, depth=depth, dim=3)
        assert not s.proved and "odd L" in s.because
    assert strength("P5", depth=depth, dim=3).proved  # the ratio reduction holds for every L ≥ 3


def test_outside_depth_two():
    assert strength("P3", depth=2, dim=3).proved and strength("LOCK", depth=2, dim=3).proved
    for name in ("P4", "P5", "P6"):
        assert not strength(name, depth=2, dim=3).proved


def _statuses(steps):
    return [st.fn().status for st in steps]


def test_every_step_verifies_symbolically_and_at_an_exact_case():
    for name in ("P3", "P4", "P5", "P6", "LOCK"):
        assert set(_statuses(lp.steps(name))) == {VERIFIED}, name
        assert set(_statuses(lp.steps(name, 4, 3))) == {VERIFIED}, name
        assert lp.exact_proof(name, 6, 2).ok


def test_wrong_ratio_field_is_refuted():
    # a changed exponent in the ratio field: (1 − r_j)^{L−2} instead of (1 − r_j)^{L−1}
    def bad(L, r_j, mean):
        return r_j * ((L - 2) * r_j * (1 - r_j) ** (L - 2) - (L - 1) * mean)

    assert REFUTED in _statuses(lp.p5_steps(component=bad))
    assert REFUTED in _statuses(lp.p5_steps(6, 3, component=bad))


def test_wrong_weights_are_refuted():
    def bad(L, r_k, z_k):
        return z_k ** (sp.S(-1) / (L - 2)) * r_k ** (sp.S(2 * L - 2) / (L - 2))

    assert REFUTED in _statuses(lp.p5_steps(weight=bad))


def test_wrong_blowup_is_refuted():
    def bad(L, r_j, omega_j, mean):
        return r_j * (-(L - 2) * r_j * omega_j ** L + (L - 1) * mean)

    assert REFUTED in _statuses(lp.p6_steps(blown=bad))


def test_wrong_field_is_not_cooperative_by_the_same_proof():
    # the perturbation with the wrong sign (descent instead of ascent): û = u + ρ z u^{L−1}/N
    def bad(L, optimizer):
        return cf.z_j * (cf.u_j + sy_rho() * cf.z_j * cf.u_j ** (L - 1) / cf.N) ** (L - 1)

    assert REFUTED in _statuses(lp.p3_steps(field=bad))
    assert REFUTED in _statuses(lp.p5_steps(field=bad))


def sy_rho():
    from theorycheck.symbolic.model import rho

    return rho


def test_wrong_invariant_set_sign_is_refuted():
    # an odd power in the mean term (as for odd L) breaks the sign argument
    def bad(L, r_k):
        return r_k * (1 - r_k) ** L

    assert REFUTED in _statuses(lp.p4_steps(mean_term=bad))


def test_the_forms_used_are_the_systems_fields():
    # the coordinate forms the proofs use build the systems the validated integrator compiles
    _s, r, z, f = S.ratio_system(4, 2)
    w = [S.ratio_weight(4, r[k], z[k]) for k in range(2)]
    mean = sum(w[k] / sum(w) * S.ratio_mean_term(4, r[k]) for k in range(2))
    assert sp.simplify(f[0] - S.ratio_component(4, r[0], mean)) == 0


def test_strength_calls_are_cached():
    strength("P5", depth=4, dim=2)  # the symbolic proofs run once per process, whatever (L, d) asks
    exact = lp.exact_proof.cache_info().misses
    for depth in (4, 6, 8, 10, 12):
        for dim in range(1, 6):
            for name in ("P3", "P4", "P5", "P6", "LOCK"):
                strength(name, depth=depth, dim=dim)
    assert lp.symbolic_proof.cache_info().misses <= 5
    assert lp.exact_proof.cache_info().misses == exact  # no exact (on-demand) proof was needed


def test_the_engine_reads_lemmas_only_from_the_book_it_is_given():
    from theorycheck.proofs.minor_first.lemmas import BOOK

    from theorycheck.proved.lemmas import LemmaBook, lemma_strengths, resting_strength
    from theorycheck.strength import Kind, float_check

    assert [s.kind for _, s in lemma_strengths(["C4", "P1"], depth=2, dim=3, book=BOOK)] == [Kind.PROVED] * 2
    assert all(s.kind is Kind.NOT_DECIDED for _, s in lemma_strengths(["C4"], depth=2, dim=3, book=None))
    other = LemmaBook({"Q": "a lemma of another pack"}, lambda n, L, d: float_check(20), "another pack")
    (name, s), = lemma_strengths(["Q"], depth=2, dim=3, book=other)
    assert (name, s.kind, s.digits) == ("Q", Kind.FLOAT_CHECK, 20)
    (_, missing), = lemma_strengths(["C4"], depth=2, dim=3, book=other)
    assert missing.kind is Kind.NOT_DECIDED and "another pack" in missing.because
    assert resting_strength(lemma_strengths(["Q"], depth=2, dim=3, book=other)).kind is Kind.FLOAT_CHECK
    assert other.statement("Q") == "a lemma of another pack" and other.statement("C4") == ""
