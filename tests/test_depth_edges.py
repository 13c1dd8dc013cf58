"""Depth-L thresholds at the edges of float64 and of the inputs: z spanning hundreds of orders of magnitude, ρ = 0
and ρ at 1e±300. Each answer is finite and right, or says it is not decided and why; none hangs or prints NaN.
The references are computed independently here (mpmath, exact fractions), not by the code under test."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from theorycheck.proofs.minor_first.predict import blowup as B
from theorycheck.proofs.minor_first.predict import depth as dl

from theorycheck.arith.decimals import _fixed
from theorycheck.cli.main import main


def _major_fastest_reference(z, rho, L):
    """α* from the root of z_max (1 − c z_max)^(L−1) = z_j (1 − c z_j)^(L−1) below 1/z_max: 1 − c z_max =
    w (1 − c z_j), w = (z_j/z_max)^(1/(L−1)), at 50 digits."""
    with mp.workdps(50):
        zs = [mp.mpf(v) for v in z]
        top = max(zs)
        cs = []
        for v in zs:
            if v < top:
                w = (v / top) ** (mp.mpf(1) / (L - 1))
                cs.append((1 - w) / (top - w * v))
        nrm = mp.sqrt(mp.fsum(v * v for v in zs))
        return float(mp.mpf(rho) / (min(cs) * mp.sqrt(L) * nrm))


@pytest.mark.parametrize("L", [2, 3, 4, 6])
@pytest.mark.parametrize("z", [(1.0, 2.0, 3.0), (0.5, 1.0, 2.0, 4.0), (1e-300, 1.0), (1.0, 1e300), (1e-200, 1e-100, 1.0),
                               (1.0, 1.0 - 2.0 ** -52)])
def test_major_fastest_alpha_is_the_root_below_one_over_z_max_at_every_scale(z, L):
    a, _ = dl.major_fastest_alpha(list(z), 1.0, L)
    assert a == pytest.approx(_major_fastest_reference(np.asarray(z) / max(z), 1.0, L), rel=1e-13)


@pytest.mark.parametrize("z, L, rho", [((1.0, 1e-200), 3, 1.0), ((1.0, 2.0), 4, 1e300), ((1.0, 1e-300), 4, 1e300),
                                       ((1.0, 2.0, 3.0), 6, 1e-300)])
def test_the_equilibrium_is_finite_and_right_where_its_intermediates_overflow(z, L, rho):
    u = dl.equilibrium(np.asarray(z), rho, L)
    with mp.workdps(40):
        zs = [mp.mpf(v) for v in z]
        K = mp.sqrt(L * mp.fsum(v ** (mp.mpf(-2) / (L - 2)) for v in zs))
        ref = [mp.mpf(rho) / K * v ** (mp.mpf(-1) / (L - 2)) for v in zs]
    assert np.all(np.isfinite(u))
    assert [float(x) for x in u] == pytest.approx([float(x) for x in ref], rel=1e-12)


def test_rho_zero_is_gd_at_every_depth():
    assert dl.equilibrium(np.array([1.0, 2.0]), 0.0, 4) is None
    t = dl.depth_collapse_threshold([1.0, 2.0, 3.0], 0.0, 4)
    assert t["value"] == 0.0 and t["strength"]["kind"] == "proved"
    odd = dl.depth_thresholds([1.0, 2.0, 3.0], 0.0, 3)
    assert odd["small_alpha_evidence"] == [] and odd["alpha_collapse"]["value"] is None


def test_a_proof_at_rho_zero_is_a_one_line_error(capsys):
    assert main(["thresholds", "--z", "1,2,3", "--rho", "0", "--depth", "4", "--prove"]) == 2
    err = capsys.readouterr().err
    assert "ρ > 0" in err and "Traceback" not in err


def test_the_blown_up_start_does_not_overflow():
    y = B.start(2e300, np.array([1e-300, 0.75]))
    assert np.all(np.isfinite(y)) and y[2] == pytest.approx(1.0) and y[0] == pytest.approx(math.log(1.5e300))


@pytest.mark.parametrize("z", [(1.0, 1e-100), (1.0, 1e-150)])
def test_z_spanning_too_many_orders_for_float64_is_not_decided_and_says_why(z):
    t = dl.depth_collapse_threshold(list(z), 1.0, 4)
    assert t["value"] is None and t["strength"]["kind"] == "not decided"
    assert "not finite in float64" in t["strength"]["because"]


@pytest.mark.slow
def test_z_at_one_and_1e300_ends_not_decided(capsys):
    assert main(["thresholds", "--z", "1,1e300", "--rho", "1", "--depth", "4", "--json"]) == 0
    ac = json.loads(capsys.readouterr().out)["alpha_collapse"]
    assert ac["value"] is None and ac["strength"]["kind"] == "not decided"


@pytest.mark.parametrize("rho, L", [("1e300", 2), ("1e-300", 2), ("1e-300", 4), ("1e300", 4)])
def test_extreme_alpha_c_is_written_in_scientific_form_and_lies_in_its_bracket(capsys, rho, L):
    assert main(["thresholds", "--z", "1,2", "--rho", rho, "--depth", str(L), "--json"]) == 0
    ac = json.loads(capsys.readouterr().out)["alpha_collapse"]
    text = ac["value_text"]
    assert "e" in text and len(text) < 30
    lo, hi = (Fraction(x) for x in ac["check"]["bracket"])
    D = ac["check"]["significant_digits"]
    v = Fraction(text)
    assert abs(v - (lo + hi) / 2) <= (hi - lo) / 2 + abs(v) * Fraction(10) ** (1 - D)


@given(st.integers(-10**15, 10**15).filter(lambda k: k != 0), st.integers(-330, 330))
def test_a_decimal_is_written_exactly_in_either_form(k, e):
    t = _fixed(k, e)
    assert Fraction(t) == k * Fraction(10) ** e
    assert len(t) <= len(str(abs(k))) + 12  # never hundreds of zeros
