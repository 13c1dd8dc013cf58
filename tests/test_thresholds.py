"""Regime thresholds (C5): closed forms against their defining property, α_c against
independent integrations of the full system, and the CLI."""

import json

import numpy as np
import pytest
from theorycheck.proofs.minor_first.predict import alpha_c as AC
from theorycheck.proofs.minor_first.predict import thresholds as th

from theorycheck.cli.main import main
from theorycheck.setting import Setting
from theorycheck.solvers.integrate import solve
from theorycheck.symbolic.forms import balanced_field


def rates(z, alpha, rho):
    """Initial log-rates from the compiled balanced ℓ2 field (not from thresholds.py)."""
    f = balanced_field(2, "sam-l2", log=True)
    z = np.asarray(z, float)
    theta = np.full(z.shape, np.log(alpha))
    return f.field(z, theta, np.sqrt(f.summand(z, theta).sum()), rho)


@pytest.mark.parametrize("z, rho", [([1.0, 2.0, 3.0], 1.0), ([0.3, 0.7, 0.75, 4.0], 0.4), ([2.0, 5.0], 2.5)])
def test_closed_forms_have_their_defining_property(z, rho):
    a = th.alpha_all_shrink(z, rho).value
    assert np.all(rates(z, a * (1 - 1e-9), rho) < 0)
    assert np.any(rates(z, a * (1 + 1e-9), rho) > 0)
    g = th.alpha_gd_like(z, rho).value
    r = rates(z, g * (1 + 1e-9), rho)
    assert np.argmax(r) == np.argmax(z)
    r = rates(z, g * (1 - 1e-9), rho)
    assert np.argmax(r) != np.argmax(z)


def test_gd_like_at_a_top_tie_uses_the_next_distinct_value():
    t = th.alpha_gd_like([1.0, 2.0, 2.0], 1.0)
    assert t.value == pytest.approx(3 / (np.sqrt(2) * 3))
    assert "tie at the top" in t.note
    r = rates([1.0, 2.0, 2.0], t.value * (1 + 1e-9), 1.0)
    assert r[1] == r[2] and r[1] > r[0]
    # all equal: every coordinate grows iff N0 ≥ ρ z_(d), which is alpha_all_shrink (and α_c)
    t = th.alpha_gd_like([2.0, 2.0], 1.0)
    assert t.value == pytest.approx(th.alpha_all_shrink([2.0, 2.0], 1.0).value) == pytest.approx(0.5)
    assert np.all(rates([2.0, 2.0], t.value * (1 + 1e-9), 1.0) > 0)


def test_all_shrink_with_signs():
    assert th.alpha_all_shrink([1.0, 0.0, 2.0], 1.0).value is None
    t = th.alpha_all_shrink([-1.0, 2.0], 1.0)
    assert t.value == pytest.approx(2 / (np.sqrt(2) * np.sqrt(5))) and "negative" in t.note


def test_initial_index_tie_break_matches_integration():
    z = np.array([1.0, 2.0, 3.0])
    a = 3.0 / (np.sqrt(2) * np.linalg.norm(z))  # N0 = 3 = ρ(z_1 + z_2): rates of 1 and 2 tie
    assert th.initial_index(z, a, 1.0) == 2
    tr = solve(Setting.from_z(z, optimizer="sam-l2", rho=1.0, alpha=a), t_max=1e-3)
    assert int(np.argmax(tr.log_abs_beta[-1])) + 1 == 2


@pytest.fixture(scope="module")
def alpha_c():
    return AC.collapse_threshold([1.0, 2.0, 3.0], 1.0)


def test_collapse_threshold_certificate(alpha_c):
    z, rho = [1.0, 2.0, 3.0], 1.0
    assert th.alpha_all_shrink(z, rho).value < alpha_c.value < th.alpha_gd_like(z, rho).value
    cert = alpha_c.check
    assert cert["collapses"]["outcome"] == "collapse" and cert["grows"]["outcome"] == "growth"
    lo, hi = (float(x) for x in cert["bracket"])
    assert lo < alpha_c.value < hi and hi / lo - 1 < 1e-12
    assert cert["significant_digits"] >= 12 and len(alpha_c.value_text.replace("0.", "", 1)) >= 12
    # the previous implementation's value (bisection, 30-digit certificates): 0.436426305961
    assert alpha_c.value == pytest.approx(0.436426305961, rel=1e-11)
    assert alpha_c.value_text.startswith("0.43642630596106")


def test_collapse_threshold_against_the_full_system(alpha_c):
    """Independent of the C4 reduction: the full d-dimensional flow (float64) on both sides."""
    for f, collapses in ((1 - 1e-6, True), (1 + 1e-6, False)):
        tr = solve(Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=alpha_c.value * f),
                   t_max=60.0, method="scipy")
        assert tr.collapsed is collapses


def _full_fate_mp(z, alpha, dps, t_max):
    """The full d-dimensional ℓ2-SAM flow (u, not the reduced ODE) by mpmath's own Taylor
    integrator (mpmath.odefun), classified by the same persisting certificates."""
    import mpmath as mp

    with mp.workdps(dps):
        zz = [mp.mpf(v) for v in z]
        a = mp.mpf(alpha)

        def F(t, u):
            N = mp.sqrt(2 * mp.fsum(zj**2 * uj**2 for zj, uj in zip(zz, u)))
            return [zj * uj * (1 - zj / N) for zj, uj in zip(zz, u)]

        sol = mp.odefun(F, 0, [a] * len(zz))
        t = mp.mpf(0)
        while t < t_max:
            t += mp.mpf(1) / 2
            u = sol(t)
            N = mp.sqrt(2 * mp.fsum(zj**2 * uj**2 for zj, uj in zip(zz, u)))
            if N < min(zz):
                return "collapse"
            if N >= max(zz):
                return "grow"
        return "undecided"


@pytest.mark.slow
def test_collapse_threshold_full_system_high_precision_both_sides(alpha_c):
    """An independent high-precision integration (mpmath.odefun on the u-system) on both sides,
    1e-13 from the 12-digit value: below collapses, above grows."""
    import mpmath as mp

    with mp.workdps(30):
        lo, hi = (mp.mpf(alpha_c.value_text) * (1 + s * mp.mpf("3e-13")) for s in (-1, 1))
    assert _full_fate_mp([1, 2, 3], lo, 25, 60) == "collapse"
    assert _full_fate_mp([1, 2, 3], hi, 25, 60) == "grow"


@pytest.mark.slow
def test_collapse_threshold_30_digits_full_system_both_sides():
    import mpmath as mp

    t = AC.collapse_threshold([1.0, 2.0, 3.0, 4.0, 5.0], 1.0, digits=30)
    assert t.check["significant_digits"] >= 30
    with mp.workdps(50):
        lo, hi = (mp.mpf(t.value_text) * (1 + s * mp.mpf("1e-28")) for s in (-1, 1))
    assert _full_fate_mp([1, 2, 3, 4, 5], lo, 45, 120) == "collapse"
    assert _full_fate_mp([1, 2, 3, 4, 5], hi, 45, 120) == "grow"


@pytest.mark.slow
def test_collapse_threshold_digits_agree_across_precisions():
    lo = AC.collapse_threshold([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 1.0, digits=10)
    hi = AC.collapse_threshold([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 1.0, digits=20)
    assert hi.check["significant_digits"] >= 20
    # every certified digit of the short answer is a digit (or the rounding) of the long one
    assert float(hi.value_text) == pytest.approx(float(lo.value_text), rel=10 ** -(len(lo.value_text) - 3))
    assert hi.value_text.startswith("0.31948487657496")


@pytest.mark.slow
def test_collapse_threshold_scalings(alpha_c):
    # α_c(c z, ρ) = α_c(z, ρ) (time rescaling) and α_c(z, k ρ) = k α_c(z, ρ) (N ∝ α)
    assert AC.collapse_threshold([2.0, 4.0, 6.0], 1.0).value == pytest.approx(alpha_c.value, rel=1e-12)
    assert AC.collapse_threshold([1.0, 2.0, 3.0], 2.5).value == pytest.approx(2.5 * alpha_c.value, rel=1e-12)


def test_extreme_scales_are_scale_invariant():
    """Regression: at z ~ 1e100 the old bisection returned 0.29204 for z = 1e100·(1..6) while
    claiming 12 digits; the closed forms gave inf/nan; z ~ 1e-222 raised an IndexError."""
    z6 = np.arange(1.0, 7.0)
    ref = AC.collapse_threshold(z6, 1.0).value
    assert AC.collapse_threshold(1e100 * z6, 1.0).value == pytest.approx(ref, rel=1e-12)
    assert ref == pytest.approx(0.31948487657496, rel=1e-13)
    for c in (1e-250, 1e-100, 1e100, 1e250):
        assert th.alpha_all_shrink(c * z6, 1.0).value == pytest.approx(th.alpha_all_shrink(z6, 1.0).value, rel=1e-14)
        assert th.alpha_gd_like(c * z6, 1.0).value == pytest.approx(th.alpha_gd_like(z6, 1.0).value, rel=1e-14)
        assert th.initial_index(c * z6, 0.3, 1.0) == th.initial_index(z6, 0.3, 1.0)
        r = th.initial_rates(c * z6, 0.3, 1.0)
        assert np.all(np.isfinite(r)) and r / c == pytest.approx(th.initial_rates(z6, 0.3, 1.0), rel=1e-13)
    assert th.alpha_all_shrink([2e-222, 2e-222], 1.0).value == pytest.approx(0.5)
    assert th.alpha_gd_like([2e-222, 2e-222], 1.0).value == pytest.approx(0.5)
    assert th.alpha_gd_like([1e-279], 1.0).value == pytest.approx(1 / np.sqrt(2))
    assert th.initial_index([1e-279], 1.0, 1.0) == 1


@pytest.mark.parametrize("z", [[3.0, -5.0], [1.0, -1.0], [2.0, -1.0, 0.5], [1.0, 0.0, 2.0], [4.0]])
def test_gd_like_never_negative_nor_below_all_shrink(z):
    g = th.alpha_gd_like(z, 1.0).value
    s = th.alpha_all_shrink(z, 1.0).value
    assert g > 0 and (s is None or s <= g * (1 + 1e-15))
    # defining property: just above it the major coordinate grows, and grows fastest
    r = th.initial_rates(z, g * (1 + 1e-9), 1.0)
    assert r[int(np.argmax(z))] > 0 and int(np.argmax(r)) == int(np.argmax(z))


def test_inconclusive_certificate_gives_no_value():
    t = AC.collapse_threshold([1.0, 2.0, 3.0], 1.0, digits=30, max_seconds=0.05)
    assert t.value is None and t.as_dict()["value_text"] is None and "inconclusive" in t.note


def test_initial_index_at_ties_of_equal_z():
    """Equal z_j give equal β_j for all τ: j† is the smallest index among them (argmax)."""
    assert th.initial_index([1.0, 2.0, 2.0], 1.0, 1.0) == 2
    assert th.initial_index([2.0, 2.0, 1.0], 1.0, 1.0) == 1
    assert th.initial_index([2.0, 1.0, 2.0], 1.0, 1.0) == 1


def test_collapse_threshold_edge_cases():
    t = AC.collapse_threshold([2.0, 2.0, 2.0], 1.0)
    assert t.closed_form and t.value == pytest.approx(th.alpha_all_shrink([2.0, 2.0, 2.0], 1.0).value)
    assert AC.collapse_threshold([1.0, 2.0], 0.0).value == 0.0


@pytest.mark.slow
def test_cli_thresholds_json(capsys):
    rc = main(["thresholds", "--z", "1,2,3", "--rho", "1", "--alpha", "0.6", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert res["alpha_all_shrink"]["closed_form"] is True and res["alpha_collapse"]["closed_form"] is False
    assert res["alpha_collapse"]["value"] == pytest.approx(0.436426305961, rel=1e-11)
    assert res["alpha_collapse"]["value_text"].startswith("0.436426305961")
    assert res["regime"] == 2 and res["final_index"] == 3 and res["switches"]
    assert res["initial_index"] == th.initial_index([1, 2, 3], 0.6, 1.0)


def test_cli_thresholds_keeps_its_initial_index_at_a_tie(capsys):
    rc = main(["thresholds", "--z", "1,2,2", "--rho", "1", "--alpha", "1", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0 and res["initial_index"] == 2 and "trajectory_initial_index" in res
    rc = main(["thresholds", "--z", "1,2,3", "--rho", "1", "--digits", "20", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert res["alpha_collapse"]["check"]["significant_digits"] >= 20
    assert res["alpha_collapse"]["value_text"].startswith("0.4364263059610605297")


def test_cli_thresholds_linf_and_errors(capsys):
    rc = main(["thresholds", "--z", "1,2,3", "--rho", "1", "--optimizer", "sam-linf", "--alpha", "2,0.5,3", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0 and res["predicted_index"] == 3 and res["final_index"] == 3
    rc = main(["thresholds", "--z", "1,2,3", "--rho", "1", "--depth", "1"])
    assert rc == 2 and "L = 1" in capsys.readouterr().err
    rc = main(["thresholds", "--z", "1,-2", "--rho", "1"])
    assert rc == 2 and "z > 0" in capsys.readouterr().err
    rc = main(["thresholds", "--z", "1,2", "--rho", "1", "--digits", "0"])
    assert rc == 2 and "digits" in capsys.readouterr().err


def test_closed_forms_to_any_number_of_digits():
    import mpmath as mp

    with mp.workdps(40):
        want = mp.nstr(1 / mp.sqrt(28), 30)  # ρ z_min/(√2‖z‖) for z = (1, 2, 3): 1/√28
        want_gd = mp.nstr(5 / mp.sqrt(28), 30)  # ρ (3 + 2)/(√2‖z‖)
    assert th.closed_form_text("alpha_all_shrink", [1.0, 2.0, 3.0], 1.0, 30) == want
    assert th.closed_form_text("alpha_gd_like", [1.0, 2.0, 3.0], 1.0, 30) == want_gd
    assert th.closed_form_text("alpha_all_shrink", [1.0, 0.0, 2.0], 1.0, 30) is None


@pytest.mark.parametrize("tiny", ["1e-310", "1e-320"])
def test_subnormal_entry_is_not_decided_not_a_traceback(tiny, capsys):
    """A subnormal z_min puts N ~ α² and the horizons 1/z_min outside float64: the reduced ODE's float run
    says so (not decided, the reason named) instead of overflowing in exp(−½ lse) inside the series."""
    from theorycheck.proofs.minor_first.predict.reduced_taylor import ReducedFlow

    from theorycheck.status import Fate, Status

    z = np.ldexp(np.array([float(tiny), 0.8, 2.14, 3.556]), -2)
    run = ReducedFlow(z, None).run(float(tiny), 10.0)
    assert run.fate == Fate.UNDECIDED and run.status == Status.RANGE_LIMIT and "float64" in run.why
    rc = main(["thresholds", "--z", f"{tiny},0.8,2.14,3.556", "--rho", "1", "--alpha", "2", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0
    ac = res["alpha_collapse"]
    assert ac["value"] is None and ac["strength"]["kind"] == "not decided"
    assert "float64" in ac["strength"]["because"] and "time budget" not in ac["strength"]["because"]
    assert res["alpha_all_shrink"]["value"] == pytest.approx(float(tiny) / np.linalg.norm([0.8, 2.14, 3.556]) / np.sqrt(2),
                                                             rel=1e-12)


def test_a_reduced_run_that_leaves_float64_stops_there_undecided():
    """z_min = 1e-300 beside z of order 1: N falls towards ρ z_min, the Taylor steps shrink with it and the series
    overflows near N ≈ 1e-14; the run ends there, not decided, instead of stepping NaN to its step budget."""
    from theorycheck.proofs.minor_first.predict.reduced_taylor import ReducedFlow

    from theorycheck.status import Fate, Status

    run = ReducedFlow(np.array([1e-300, 1.0, 2.0]), None).run(0.3, None)
    assert run.fate is Fate.UNDECIDED and run.status is Status.RANGE_LIMIT
    assert run.steps < 1000 and "number range" in run.why
