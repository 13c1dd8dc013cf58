"""The lock-in lemma (proofs/minor_first/lockin.py) and the final-index status of trajectories and thresholds."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from theorycheck import observe as ob
from theorycheck.api import solve
from theorycheck.setting import Setting

DEPTH4 = {"z": [0.3, 0.7, 1.1, 2.5], "depth": 4, "optimizer": "sam-l2", "rho": 0.05, "alpha": 0.019412}


def _setting(x):
    return Setting.from_z(x["z"], depth=x["depth"], optimizer=x["optimizer"], rho=x["rho"], alpha=x["alpha"])


def test_the_lemma_is_proved_step_by_step():
    from theorycheck.api import prove

    r = prove(["LOCK"])["LOCK"]
    assert r.status == "verified"
    assert len(r.steps) >= 14
    assert all(res.status == "verified" for _, res in r.steps)


def test_depth4_example_is_not_final_at_the_default_horizon_and_certified_later():
    s = _setting(DEPTH4)
    short = solve(s, t_max=40.0 / 0.3).as_dict()
    assert short["final_index"] == 2
    assert short["final_index_status"] == "not decided"
    assert "t_max" in short["final_index_reason"] and "ρ√L" in short["final_index_reason"]
    long = solve(s, t_max=1e6).as_dict()
    assert [w["to"] for w in long["switches"]] == [1, 2, 4]
    assert long["final_index"] == 4 and long["final_index_status"] == "floating-point check"
    assert long["blowup_time"] == pytest.approx(8278.46, abs=0.05)


@pytest.mark.slow
def test_thresholds_alpha_marks_the_depth4_index_not_final():
    from theorycheck.proofs.minor_first.predict.regimes import float_thresholds

    r = float_thresholds(Setting.from_z(DEPTH4["z"], rho=DEPTH4["rho"], depth=4, alpha=DEPTH4["alpha"]), place=True).as_dict()
    assert r["final_index"] == 2 and r["final_index_status"] == "not decided"
    assert r["final_index_reason"]


def test_l2_growth_collapse_and_a_short_horizon():
    base = {"z": [1.0, 2.0, 3.0], "depth": 2, "optimizer": "sam-l2", "rho": 1.0}
    grow = solve(_setting({**base, "alpha": 0.6})).as_dict()
    assert grow["final_index"] == 3 and grow["final_index_status"] == "floating-point check"
    assert "ρ(z_(d) + z_next) = 5" in grow["final_index_reason"]
    col = solve(_setting({**base, "alpha": 0.1})).as_dict()
    assert col["final_index"] == 0 and col["final_index_status"] == "floating-point check"
    # just above α_c ≈ 0.4364 the path lingers near the saddle: at τ = 3 j† is not yet locked in
    short = solve(_setting({**base, "alpha": 0.44}), t_max=3.0).as_dict()
    assert short["final_index_status"] == "not decided"


def test_lockin_level_is_exact_at_the_boundary():
    """j† = 3 and N just above ρ(z_(d) + z_next) is locked; just below it is not; at every scale of z."""
    s = Setting.from_z([1.0, 2.0, 3.0], depth=2, optimizer="sam-l2", rho=1.0, alpha=0.6)
    z = np.array([1.0, 2.0, 3.0])
    # u = c·(0, 0, 1) + tiny: N = √2·3·u_3 → u_3 = 5/(3√2) gives N = 5
    theta = np.array([-30.0, -30.0, math.log(5 / (3 * math.sqrt(2)))])
    for sc in (1e-300, 1.0, 1e300):
        t = Setting.from_z(z * sc, depth=2, optimizer="sam-l2", rho=1.0, alpha=0.6)
        ok, why = ob.lockin_condition(t, 2 * (theta + np.array([0, 0, 1e-9])), np.ones(3), 3)
        assert ok, (sc, why)
        ok, _ = ob.lockin_condition(t, 2 * (theta - np.array([0, 0, 1e-9])), np.ones(3), 3)
        assert not ok, sc
    ok, why = ob.lockin_condition(s, 2 * theta, np.ones(3), 2)
    assert not ok and "argmax z" in why
    # a tie at the top: z_next is the largest value strictly below z_(d) (here 1, level 3)
    t = Setting.from_z([1.0, 3.0, 3.0], depth=2, optimizer="sam-l2", rho=1.0, alpha=0.6)
    ok, why = ob.lockin_condition(t, 2 * np.array([-30.0, math.log(4 / (3 * 2)) + 1e-9, math.log(4 / (3 * 2)) + 1e-9]),
                                  np.ones(3), 2)
    assert ok and "= 4" in why


def test_gd_linf_and_depth_one():
    gd = solve(Setting.from_z([1, 2, 3], depth=2, optimizer="gd", rho=1.0, alpha=0.6)).as_dict()
    assert gd["final_index_status"] == "floating-point check"
    # ℓ∞, L = 2, α = (1.5, 0.5, 1.2), ρ = 1: coordinate 2 slides to 0, 3 (the largest z above ρ) wins
    s = Setting.from_z([1, 2, 3], depth=2, optimizer="sam-linf", rho=1.0, alpha=[1.5, 0.5, 1.2])
    early = solve(s, t_max=0.1).as_dict()
    assert early["final_index"] == 1 and early["final_index_status"] == "not decided"
    late = solve(s, t_max=5.0).as_dict()
    assert late["final_index"] == 3 and late["final_index_status"] == "floating-point check"
    one = solve(Setting.from_z([1, -3, 2], depth=1, optimizer="sam-l2", rho=1.0, alpha=0.5), t_max=20).as_dict()
    assert one["final_index"] == 2 and one["final_index_status"] == "floating-point check"


def test_several_examples_are_never_certified():
    s = Setting(np.array([[1.0, 2.0], [2.0, 1.0]]), np.array([1.0, 1.0]), depth=2, optimizer="sam-l2", rho=0.1,
                alpha=0.5)
    r = solve(s, t_max=50.0).as_dict()
    assert r["final_index_status"] == "not decided" and "several examples" in r["final_index_reason"]


@st.composite
def _runs(draw):
    d = draw(st.integers(2, 4))
    z = sorted(draw(st.lists(st.floats(0.2, 3.0), min_size=d, max_size=d)))
    opt = draw(st.sampled_from(["sam-l2", "gd", "sam-linf"]))
    L = draw(st.integers(2, 4))
    rho = draw(st.floats(0.05, 1.0))
    if opt == "sam-linf":
        alpha = draw(st.lists(st.floats(0.1, 2.0), min_size=d, max_size=d))
    else:
        alpha = draw(st.floats(0.05, 1.5))
    return {"z": z, "depth": L, "optimizer": opt, "rho": rho, "alpha": alpha}


PINNED = [DEPTH4, {"z": [0.5, 1.0, 1.6, 2.3], "depth": 2, "optimizer": "sam-l2", "rho": 1.0, "alpha": 0.4},
          {"z": [1.0, 2.0, 2.0], "depth": 2, "optimizer": "sam-l2", "rho": 1.0, "alpha": 0.6}]


def _locked_from_first_lockin(x):
    """The lemma's promise on float trajectories: from the first stored state where the lock-in
    condition holds, j† is constant to the end of the run (a blow-up or the horizon)."""
    s = _setting(x)
    tr = solve(s, t_max=1e4 if x["depth"] >= 3 else 60.0, max_seconds=20.0)
    if not tr.successful:
        return
    path = ob.index_path(tr)
    for i in range(len(tr.t)):
        if path[i] > 0 and ob.lockin_condition(s, tr.log_abs_beta[i], tr.sign_beta[i], int(path[i]))[0]:
            assert np.all(path[i:] == path[i]), (x, i, path[i:])
            return i
    return None


@pytest.mark.parametrize("x", PINNED)
def test_once_locked_in_the_index_never_changes_pinned(x):
    i = _locked_from_first_lockin(x)
    assert i is not None and i > 0  # locked in after a few steps, not at the start


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_runs())
def test_once_locked_in_the_index_never_changes(x):
    _locked_from_first_lockin(x)
