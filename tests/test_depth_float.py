"""α_c(L) for even L ≥ 4 in floating point (minor_first/predict/blowup.py through minor_first/predict/depth.py): the bisection in c on the
ratio reduction blown up at r = 1, against the flow in θ = ln u (a different system, compiled separately), the
exact symmetries of the flow, and (slow) the proved bracket of minor_first/proved/alpha_c.py at even L ≥ 4."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import sympy as sp
from theorycheck.proofs.minor_first.predict import blowup as B
from theorycheck.proofs.minor_first.predict import depth as dl

from theorycheck.status import Fate
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import theory_forms as MF
from theorycheck.symbolic.depth import alpha_of_c, c_sym, initial_forms, zero_rate_alpha

ZS = [(1.0, 2.0, 3.0), (1.0, 2.0, 3.0, 4.0, 5.0), (0.5, 1.0, 2.0, 4.0)]


def _bracket(t: dict) -> tuple[float, float]:
    return t["check"]["collapses"]["alpha"], t["check"]["grows"]["alpha"]


@pytest.mark.parametrize("L", [4, 6, 8])
def test_alpha_of_c_is_the_ray_of_the_start(L):
    """α(c) puts the start on the ray r(0) = c z, and c = 1/z_j is the zero-rate α of coordinate j."""
    a = alpha_of_c(L)
    r0 = initial_forms(L)["r0"].subs(cf.alpha, a)
    assert sp.simplify(r0 - c_sym * cf.z_j) == 0
    assert sp.simplify(a.subs(c_sym, 1 / cf.z_j) - zero_rate_alpha(L)) == 0
    assert MF.depth_alpha_of_c(L)(2.0, 3.0, 5.0) == pytest.approx(5.0 / (2.0 * math.sqrt(L) * 3.0), rel=1e-15)


def test_fate_of_c_budgets_are_steps_and_say_so():
    z = np.array([0.25, 0.5, 0.75])
    s = B.c_bracket(z, 4, rel=1e-6)
    c = math.sqrt(s.grows.c * s.collapses.c)
    few = B.fate_of_c(c, z, 4, max_steps=3)
    assert few.fate is Fate.UNDECIDED and few.steps == 3 and "step budget of 3 steps" in few.why
    short = B.fate_of_c(c, z, 4, s_max=1e-3)
    assert short.fate is Fate.UNDECIDED and "horizon" in short.why
    t = dl.depth_collapse_threshold([1.0, 2.0, 3.0], 1.0, 4, max_evaluations=5)
    assert t["check"]["evaluations"] == 5 and "evaluation budget of 5" in t["check"]["stopped"]
    assert t["check"]["collapses"]["outcome"] == "collapse" and t["check"]["grows"]["outcome"] == "growth"


@pytest.mark.parametrize("z", ZS)
@pytest.mark.parametrize("L", [4, 6])
def test_threshold_width_and_theta_flow_agrees(z, L):
    """Relative width ≤ 1e-13 with no budget spent; the flow in θ = ln u (another system: the balanced field,
    not the blow-up) collapses at α_c(1 − δ) and grows at α_c(1 + δ): δ = 1e-6 at L = 4, 1e-2 at L = 6 (where
    the field vanishes to order 5 at u* and θ = ln u needs ~1e4 steps already at δ = 1e-3)."""
    t = dl.depth_collapse_threshold(z, 1.0, L)
    lo, hi = _bracket(t)
    assert t["check"]["stopped"] is None and hi / lo - 1 <= 1e-13 and t["check"]["significant_digits"] >= 12
    assert t["strength"]["kind"] == "floating-point check"
    delta = {4: 1e-6, 6: 1e-2}[L]
    below = dl.classify(z, t["value"] * (1 - delta), 1.0, L, t_max=1e30)
    above = dl.classify(z, t["value"] * (1 + delta), 1.0, L, t_max=1e30)
    assert (below.kind, above.kind) == (Fate.COLLAPSE, Fate.GROWTH)


def test_scaling_laws():
    """α_c(z, ρ) = ρ α_c(z, 1) and α_c(k z, ρ) = α_c(z, ρ) (exact symmetries), to the bracket's width."""
    z = np.array([1.0, 2.0, 3.0])
    base = dl.depth_collapse_threshold(z, 1.0, 4)["value"]
    for rho in (0.05, 3.0):
        assert dl.depth_collapse_threshold(z, rho, 4)["value"] == pytest.approx(rho * base, rel=2e-13)
    for k in (0.1, 3.0, 1e6):  # not powers of two: a different float64 z, a different search
        assert dl.depth_collapse_threshold(k * z, 1.0, 4)["value"] == pytest.approx(base, rel=2e-13)
    assert dl.depth_collapse_threshold(3.0 * z, 0.5, 6)["value"] == pytest.approx(
        0.5 * dl.depth_collapse_threshold(z, 1.0, 6)["value"], rel=2e-13)


def test_cli_json_depth4_has_13_digits(capsys):
    from theorycheck.cli.main import main

    assert main(["thresholds", "--z", "1,2,3", "--rho", "1", "--depth", "4", "--json"]) == 0
    ac = json.loads(capsys.readouterr().out)["alpha_collapse"]
    assert ac["check"]["significant_digits"] >= 12 and ac["value_text"].startswith("0.28637095282")
    assert ac["strength"] == {"kind": "floating-point check", "text": "a floating-point check (float64)",
                              "digits": None}
    assert ac["check"]["bracket"] == [repr(ac["check"]["collapses"]["alpha"]), repr(ac["check"]["grows"]["alpha"])]


@pytest.mark.slow
@pytest.mark.parametrize("z, L, digits", [((1.0, 2.0, 3.0), 4, 12), ((1.0, 2.0, 3.0, 4.0, 5.0), 4, 12),
                                          ((0.5, 1.0, 2.0, 4.0), 4, 12), ((1.0, 2.0, 3.0), 6, 12)])
def test_float_bracket_inside_the_proved_one(z, L, digits):
    """The proved bracket (validated integration from the ends of the same float search) contains the float bracket,
    and the float bracket has the proved digits (12 asked, for depth 4 and 6)."""
    from theorycheck.proofs.minor_first.proved.alpha_c import prove_alpha_c

    from theorycheck.arith.decimals import common_digits

    t = dl.depth_collapse_threshold(z, 1.0, L)
    lo, hi = _bracket(t)
    p = prove_alpha_c(z, 1.0, depth=L, digits=digits)
    assert p.status == "proved", p.note
    assert float(p.lower) <= lo and hi <= float(p.upper)
    D, text = common_digits(p.lower, p.upper, 17)
    assert D >= digits and common_digits(lo, hi, D) == (D, text)
    assert t["check"]["significant_digits"] >= 12
