"""ℓ2-SAM at depth L ≥ 3 (balanced, one example): the trajectory handles collapse (even L) and
blow-up, and the depth-L thresholds (minor_first/predict/depth.py) against independent integrations."""

import json

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from theorycheck.cli.main import main


def u_space_fate(z, L, alpha, rho=1.0, t_max=400.0):
    """The balanced ℓ2-SAM field typed from THEORY.md in u (not θ = ln u), scipy DOP853:
    (kind, time) with kind 'collapse' (N < 1e-14), 'blowup' (max u > 1e4) or 'none'."""
    z = np.asarray(z, float)

    def f(t, u):
        N = np.sqrt(L * np.sum(z**2 * u ** (2 * L - 2)))
        return z * (u - rho * z * u ** (L - 1) / N) ** (L - 1)

    def big(t, u):
        return np.max(np.abs(u)) - 1e4

    def small(t, u):
        return np.sqrt(L * np.sum(z**2 * u ** (2 * L - 2))) - 1e-14

    big.terminal = small.terminal = True
    r = solve_ivp(f, (0, t_max), np.full(z.size, alpha), method="DOP853", rtol=1e-11, atol=1e-16, events=[big, small])
    if r.t_events[1].size:
        return "collapse", float(r.t_events[1][0])
    if r.t_events[0].size:
        return "blowup", float(r.t_events[0][0])
    return "none", float(r.t[-1])


def test_depth4_collapse_trajectory_no_traceback(capsys):
    """Regression: `trajectory --z 1,2,3 --depth 4 --optimizer sam-l2 --rho 1 --alpha 0.2` ended in a
    scipy RuntimeError (the arc clock dτ/ds = N never reached the collapse level for L ≥ 3)."""
    rc = main(["trajectory", "--z", "1,2,3", "--depth", "4", "--optimizer", "sam-l2", "--rho", "1", "--alpha", "0.2",
               "--json"])
    res = json.loads(capsys.readouterr().out)
    kind, t = u_space_fate([1, 2, 3], 4, 0.2)
    assert rc == 0 and kind == "collapse"
    assert res["collapsed"] is True and res["stopped_because"] == "collapse" and res["final_index"] == 0
    assert res["collapse_time"] == pytest.approx(t, rel=1e-4)


@pytest.mark.parametrize("L, alpha", [(4, 0.5), (3, 0.05), (6, 0.1)])
def test_depth_l_trajectory_fates_match_u_space(capsys, L, alpha):
    rc = main(["trajectory", "--z", "1,2,3", "--depth", str(L), "--optimizer", "sam-l2", "--rho", "1", "--alpha",
               str(alpha), "--t-max", "400", "--json"])
    res = json.loads(capsys.readouterr().out)
    kind, t = u_space_fate([1, 2, 3], L, alpha)
    assert rc == 0
    if kind == "collapse":
        assert res["collapsed"] and res["collapse_time"] == pytest.approx(t, rel=1e-2)
    else:
        assert kind == "blowup" and res["stopped_because"] == "blowup"
        assert res["blowup_time"] == pytest.approx(t, rel=1e-3)


# ------------------------------------------------------------------ depth-L thresholds
from theorycheck.proofs.minor_first.predict import alpha_c as AC  # noqa: E402
from theorycheck.proofs.minor_first.predict import depth as dl  # noqa: E402
from theorycheck.proofs.minor_first.predict import thresholds as th  # noqa: E402

from theorycheck.symbolic.forms import balanced_field  # noqa: E402


def compiled_rates(z, alpha, rho, L):
    """Initial log-rates (du_j/dτ)/u_j from the compiled balanced u-field at u = α (not from
    depth.py's forms; the u-field keeps û^(L−1) factored, so no cancellation near a zero rate)."""
    f = balanced_field(L, "sam-l2")
    z = np.asarray(z, float)
    u = np.full(z.shape, float(alpha))
    return f.field(z, u, np.sqrt(f.summand(z, u).sum()), rho) / u


@pytest.mark.parametrize("L", [2, 3, 4, 5])
def test_initial_rates_match_the_field(L):
    z = np.array([0.5, 1.0, 2.5])
    for a in (0.05, 0.3, 2.0):
        r = dl.initial_rates(z, a, 0.7, L)
        ref = compiled_rates(z / z.max(), a, 0.7, L)
        np.testing.assert_allclose(r, ref, rtol=1e-12, atol=1e-300)


def test_depth_2_reduces_to_c5():
    z = [1.0, 2.0, 3.0]
    assert dl.depth_collapse_threshold(z, 1.0, 2)["value"] == pytest.approx(AC.collapse_threshold(z, 1.0).value, rel=1e-9)
    a, _ = dl.major_fastest_alpha(z, 1.0, 2)
    assert a == pytest.approx(th.alpha_gd_like(z, 1.0).value, rel=1e-12)
    t = dl.depth_thresholds(z, 1.0, 2)
    assert t["alpha_all_shrink"]["value"] == pytest.approx(th.alpha_all_shrink(z, 1.0).value, rel=1e-14)


@pytest.mark.parametrize("L", [3, 4, 6])
def test_major_fastest_alpha_defining_property(L):
    z = np.array([1.0, 2.0, 3.0])
    a, _ = dl.major_fastest_alpha(z, 1.0, L)
    assert int(np.argmax(compiled_rates(z, a * (1 + 1e-9), 1.0, L))) == 2
    assert int(np.argmax(compiled_rates(z, a * (1 - 1e-6), 1.0, L))) != 2
    for f in (1.5, 3.0, 10.0):
        assert int(np.argmax(compiled_rates(z, a * f, 1.0, L))) == 2


def test_depth4_collapse_threshold_checked_both_sides():
    t = dl.depth_collapse_threshold([1.0, 2.0, 3.0], 1.0, 4)
    check = t["check"]
    lo, hi = check["collapses"]["alpha"], check["grows"]["alpha"]
    assert check["collapses"]["outcome"] == "collapse" and check["grows"]["outcome"] == "growth"
    assert lo < t["value"] < hi and hi / lo - 1 <= 1e-13 and check["stopped"] is None
    assert dl.depth_thresholds([1.0, 2.0, 3.0], 1.0, 4)["alpha_all_shrink"]["value"] < lo
    # independent: the u-space flow collapses just below the bracket and blows up just above it
    assert u_space_fate([1, 2, 3], 4, lo * (1 - 1e-2), t_max=5000)[0] == "collapse"
    assert u_space_fate([1, 2, 3], 4, hi * (1 + 1e-2), t_max=5000)[0] == "blowup"


def test_odd_depth_has_no_collapse_threshold():
    t = dl.depth_thresholds([1.0, 2.0, 3.0], 1.0, 3)
    assert t["alpha_collapse"]["value"] is None and t["alpha_all_shrink"]["value"] is None
    assert all(e["stopped_because"] == "blowup" and not e["collapsed"] for e in t["small_alpha_evidence"])
    # u nondecreasing: the odd-L field is z_j times an even power
    for a in (1e-3, 0.1, 1.0):
        u = np.array([a, 2 * a, 0.5 * a])
        N = np.sqrt(3 * np.sum(np.array([1.0, 2.0, 3.0]) ** 2 * u**4))
        assert np.all(balanced_field(3, "sam-l2").field(np.array([1.0, 2.0, 3.0]), u, N, 1.0) >= 0)


def test_equilibrium_is_one():
    z = np.array([1.0, 2.0, 3.0])
    for L in (3, 4, 6):
        u = dl.equilibrium(z, 1.0, L)
        N = np.sqrt(np.sum(balanced_field(L, "sam-l2").summand(z, u)))
        np.testing.assert_allclose(balanced_field(L, "sam-l2").field(z, u, N, 1.0), 0.0, atol=1e-14)


def test_cli_thresholds_depth(capsys):
    rc = main(["thresholds", "--z", "1,2,3", "--rho", "1", "--depth", "4", "--alpha", "0.2", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0 and res["depth"] == 4
    assert res["alpha_all_shrink"]["closed_form"] and "rho*z_min" in res["alpha_all_shrink"]["expression"]
    assert res["alpha_collapse"]["check"]["collapses"]["alpha"] > 0.2
    assert res["collapsed"] is True and res["regime_name"].startswith("collapse")
    assert "even L" in res["small_alpha"] and res["equilibrium"]["u_star_over_max_z_units"]


@pytest.mark.slow
def test_precision_texts_agree_across_precisions(capsys):
    """--digits D: the collapse time and the final log|β| as D-digit strings; 30 and 40 digits
    agree to ≥ 25 digits (the library keeps the mpmath values, Trajectory.t_exact & co.)."""
    import mpmath as mp

    res = {}
    for D in (30, 40):
        rc = main(["trajectory", "--z", "1,2,3", "--depth", "4", "--optimizer", "sam-l2", "--rho", "1", "--alpha",
                   "0.2", "--digits", str(D), "--json"])
        res[D] = json.loads(capsys.readouterr().out)
        assert rc == 0 and res[D]["collapsed"]
        assert len(res[D]["collapse_time_text"].replace(".", "")) == D
        assert float(res[D]["collapse_time_text"]) == res[D]["collapse_time"]
    with mp.workdps(50):
        a, b = mp.mpf(res[30]["collapse_time_text"]), mp.mpf(res[40]["collapse_time_text"])
        assert abs(a / b - 1) < mp.mpf(10) ** -25
    # a run that ends at t_max: log|β_j(T)| is a well-defined number (at a collapse it is the event level)
    for D in (30, 40):
        rc = main(["trajectory", "--z", "1,2,3", "--optimizer", "sam-l2", "--rho", "1", "--alpha", "0.6",
                   "--t-max", "10", "--digits", str(D), "--json"])
        res[D] = json.loads(capsys.readouterr().out)
        assert rc == 0 and res[D]["time_text"].startswith("10.000000000000000000000000")
    with mp.workdps(50):
        for x, y in zip(res[30]["log_abs_beta_text"], res[40]["log_abs_beta_text"]):
            assert abs(mp.mpf(x) - mp.mpf(y)) < mp.mpf(10) ** -25 * abs(mp.mpf(y))


def test_precision_keeps_mpmath_values_in_the_trajectory():
    import mpmath as mp

    from theorycheck.setting import Setting
    from theorycheck.solvers.integrate import solve

    tr = solve(Setting.from_z([1, 2, 3], optimizer="sam-l2", rho=1.0, alpha=0.6), t_max=2.0, digits=30)
    assert isinstance(tr.t_exact[-1], mp.mpf) and isinstance(tr.log_abs_beta_exact[-1][0], mp.mpf)
    assert tr.t_exact[-1].context.prec if hasattr(tr.t_exact[-1], "context") else True
    assert len(tr.t_exact) == len(tr.t) and [float(v) for v in tr.log_abs_beta_exact[-1]] == pytest.approx(
        tr.log_abs_beta[-1].tolist(), rel=1e-15)
    assert mp.nstr(tr.t_exact[-1], 30) == "2.0"
    assert solve(Setting.from_z([1, 2, 3], optimizer="sam-l2", rho=1.0, alpha=0.6), t_max=2.0).t_exact is None
