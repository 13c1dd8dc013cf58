"""Proved regime maps (minor_first/proved/regime_map.py): every α of a proved piece has its fate and j† sequence;
pieces that contain α_c or a critical α are never proved; the answers agree with float trajectories. Budgets are
validated steps, never seconds: the outcomes do not depend on the load of the machine."""

import copy
import functools
import math
from fractions import Fraction

import numpy as np
import pytest
from theorycheck.proofs.minor_first.proved import regime_map as rm

from theorycheck import observe as ob
from theorycheck.api import solve
from theorycheck.setting import Setting
from theorycheck.status import Budget

Z = np.array([1.0, 2.0, 3.0])
ALPHA_C = 0.4364263059610606  # the certified float α_c of z = (1, 2, 3), ρ = 1 (thresholds: 14 certified digits)


def _observed_sequence(z, alpha, rho=1.0):
    tr = solve(Setting.from_z(z, depth=2, optimizer="sam-l2", rho=rho, alpha=alpha), t_max=60.0)
    return ob.index_chain(tr).path()


def _decide(lo, hi, z=Z, steps=20_000):
    return rm.decide_piece(rm.l2_forms(tuple(float(v) for v in z), 1), Fraction(lo), Fraction(hi), max_steps=steps,
                           order=10, prec=96)


@pytest.mark.parametrize("lo,hi,fate", [("0.3", "0.31", "collapse"), ("0.505", "0.51", "growth"),
                                        ("0.96", "2", "growth"), ("0.1", "0.18", "collapse")])
def test_pieces_agree_with_float_trajectories(lo, hi, fate):
    p = _decide(lo, hi)
    assert p.status == "proved" and p.fate == fate
    assert (p.sequence[-1] == 0) == (fate == "collapse")
    assert len(p.switch_times) == len(p.sequence) - 1
    for a in np.linspace(float(lo), float(hi), 3):
        assert _observed_sequence(Z, float(a)) == p.sequence, a
    for t in p.switch_times:  # enclosures: lo ≤ hi where both are known
        assert t[1] is None or float(t[0]) <= float(t[1])


def test_a_box_containing_alpha_c_is_not_proved():
    p = _decide("0.4363", "0.4366", steps=3000)
    assert p.status == "undecided" and p.fate is None and p.sequence == []


def test_a_box_containing_a_critical_initial_norm_is_not_proved():
    # α_gd_like = 5/(√2 √14) ≈ 0.94491: N0 = ρ(z_(d) + z_next), the tie of the two top initial rates
    p = _decide("0.944", "0.946")
    assert p.status == "undecided" and "switch level" in p.reason


def test_ties_in_z_take_the_smallest_index():
    z = [1.0, 2.0, 2.0]  # one switch level, 3: the tied major coordinates are index 2
    p = _decide("0.6", "0.62", z=z)
    assert p.status == "proved" and p.fate == "growth" and 3 not in p.sequence
    assert p.sequence == _observed_sequence(z, 0.61)


def test_the_map_lists_undecided_pieces_and_never_merges_them():
    r = rm.proved_regime_map(Z, 1.0, "0.90:1.0", budget=Budget(max_steps=40_000, max_seconds=math.inf)).as_dict()
    pieces = r["regime_map"]
    assert pieces[0]["lower"] == "0.9" and pieces[-1]["upper"] == "1"
    assert all(float(a["upper"]) == float(b["lower"]) for a, b in zip(pieces, pieces[1:]))
    und = [p for p in pieces if p["status"] == "undecided"]
    assert und and all(p["width"] > 0 for p in und)
    crit = 5 / (np.sqrt(2) * np.sqrt(14))
    holder = next(p for p in pieces if float(p["lower"]) <= crit <= float(p["upper"]))
    assert holder["status"] == "undecided"
    assert r["proved_width"] + r["undecided_width"] == pytest.approx(0.1)
    top = pieces[-1]
    assert top["status"] == "proved" and top["sequence"] == [3] and top["fate"] == "growth"


def test_gd_map_is_the_static_index():
    r = rm.proved_regime_map([1.0, 3.0, 2.0], 1.0, "0.1:2", optimizer="gd").as_dict()
    assert [(p["status"], p["sequence"]) for p in r["regime_map"]] == [("proved", [2])]


def test_bad_ranges_are_one_line_errors():
    from theorycheck.errors import TheorycheckError

    for bad in ("0.5:0.4", "x:1", "0:1"):
        with pytest.raises(TheorycheckError):
            rm.proved_regime_map(Z, 1.0, bad)
    with pytest.raises(TheorycheckError):
        rm.proved_regime_map([1.0, -2.0], 1.0, "0.1:1")


@pytest.mark.slow
def test_the_map_around_alpha_c_has_both_fates():
    r = rm.proved_regime_map(Z, 1.0, "0.40:0.44", budget=Budget(max_steps=150_000, max_seconds=math.inf)).as_dict()
    proved = [p for p in r["regime_map"] if p["status"] == "proved"]
    fates = {p["fate"] for p in proved}
    assert fates == {"collapse", "growth"}
    for p in proved:  # α_c lies in no proved piece, collapse below it, growth above it
        assert not float(p["lower"]) < ALPHA_C < float(p["upper"])
        assert (p["fate"] == "collapse") == (float(p["upper"]) <= ALPHA_C)


@pytest.mark.parametrize("alpha", [pytest.param(0.3, marks=pytest.mark.slow), 0.5])
def test_proved_trajectory_encloses_the_float_times(alpha):
    from theorycheck.proofs.minor_first.proved.trajectory import prove_trajectory

    s = Setting.from_z(Z, depth=2, optimizer="sam-l2", rho=1.0, alpha=alpha)
    r = prove_trajectory(s, max_seconds=3600).as_dict()  # the step budgets decide: the clock never runs out here
    tr = solve(s, t_max=60.0).as_dict()
    assert r["proved"] and r["final_index_status"] == "proved" and r["final_index"] == tr["final_index"]
    assert [w["to"] for w in r["switches"]] == [w["to"] for w in tr["switches"]]
    for w, f in zip(r["switches"], tr["switches"]):
        lo, hi = float(w["time"][0]), float(w["time"][1])
        assert lo <= f["time"] <= hi and hi - lo < 5e-3
    if tr["collapsed"]:
        lo, hi = (float(x) for x in r["collapse_time"])
        # the run goes on to N < 1e-6·ρ z_min, so the lemma's enclosure of the collapse is ~1e-6 wide (it was
        # 2.4e-4 while the integrator widened every end set by 0.5 % of its radius for the certificate checker)
        assert lo <= tr["collapse_time"] <= hi and hi - lo < 2e-6


def test_proved_trajectory_gd_and_unsupported_settings():
    from theorycheck.proofs.minor_first.proved.trajectory import prove_trajectory

    from theorycheck.errors import TheorycheckError

    g = prove_trajectory(Setting.from_z([1, 3, 2], depth=3, optimizer="gd", rho=0.0, alpha=0.5)).as_dict()
    assert g["final_index"] == 2 and g["final_index_status"] == "proved" and g["switches"] == []
    with pytest.raises(TheorycheckError):  # L = 1: no proof is implemented (depth ≥ 2 are)
        prove_trajectory(Setting.from_z(Z, depth=1, optimizer="sam-l2", rho=1.0, alpha=0.5))
    with pytest.raises(TheorycheckError):
        prove_trajectory(Setting.from_z(Z, depth=2, optimizer="sam-l2", rho=1.0, alpha=[0.5, 0.6, 0.7]))


@functools.cache
def _unit_scale_map():
    """The map at scale 1 that both extreme scales are compared with (computed once)."""
    return rm.proved_regime_map(Z, 1.0, "0.3:0.31", budget=Budget(max_steps=40_000, max_seconds=math.inf)).as_dict()["regime_map"]


@pytest.mark.parametrize("sc", [2.0**-900, 1e300])
def test_extreme_scales_give_the_same_map_with_scaled_times(sc):
    base = copy.deepcopy(_unit_scale_map())
    far = rm.proved_regime_map(Z * sc, 1.0, "0.3:0.31", budget=Budget(max_steps=40_000, max_seconds=math.inf)).as_dict()["regime_map"]
    assert [(p["status"], p["sequence"]) for p in far] == [(p["status"], p["sequence"]) for p in base]
    for a, b in zip(base[0]["switch_times"], far[0]["switch_times"]):
        assert float(b[0]) <= float(a[0]) / sc * (1 + 1e-12) and float(b[1]) >= float(a[1]) / sc * (1 - 1e-12)


# ---------------------------------------------------------------- strength, budgets, exact inputs
def test_every_piece_says_its_strength():
    r = rm.proved_regime_map(Z, 1.0, "0.90:1.0", budget=Budget(max_steps=40_000, max_seconds=math.inf)).as_dict()
    for p in r["regime_map"]:
        s = p["strength"]
        if p["status"] == "proved":
            assert s["kind"] == "proved" and set(s["rests_on"]) == {"C4", "P1", "LOCK"}
        else:
            assert s["kind"] == "not decided" and s["because"]
    assert r["strength"]["kind"] == "not decided"  # the map as a whole: its undecided sliver at α_gd_like
    assert r["steps"] == sum(p["steps"] for p in r["regime_map"]) > 0


def test_budgets_are_steps_and_say_which_ran_out():
    p = _decide("0.4363", "0.4366", steps=40)
    assert p.status == "undecided" and "max_steps" in p.reason and p.steps == 40
    r = rm.proved_regime_map(Z, 1.0, "0.3:0.5", budget=Budget(max_steps=300, max_seconds=math.inf)).as_dict()
    assert r["stopped"] == "max_steps = 300"
    untried = [p for p in r["regime_map"] if "not tried" in p["reason"]]
    assert untried and all(p["strength"]["because"] == "max_steps = 300" for p in untried)
    again = rm.proved_regime_map(Z, 1.0, "0.3:0.5", budget=Budget(max_steps=300, max_seconds=math.inf)).as_dict()
    assert [(p["lower"], p["upper"], p["status"]) for p in again["regime_map"]] == \
        [(p["lower"], p["upper"], p["status"]) for p in r["regime_map"]]  # steps, not seconds: the same map


def test_a_rising_norm_takes_nbar_across_a_level_near_its_start():
    # N0 just below the switch level ρ(z_1 + z_2) = 3: N rises from N = N̄ at τ = 0, so N − N̄ > 0 and N̄ crosses the
    # level upwards, however close N0 is to it (a box test of N − λ alone cannot tell: N starts below the level)
    p = _decide("0.56", "0.5669")
    assert p.status == "proved" and p.fate == "growth" and p.sequence == [1, 2, 3]
    assert _observed_sequence(Z, 0.5668) == p.sequence


def test_exact_decimal_inputs_give_the_map_of_their_rescaling():
    # α_c and the j† sequence are invariant under z → c z (exactly): z = (0.1, 0.2, 0.3) typed as decimals is mapped
    # as the rationals 1/10, 2/10, 3/10 (not their float64 roundings), and matches the map of (1, 2, 3)
    tenth = rm.proved_regime_map("0.1,0.2,0.3", "1", "0.3:0.31", budget=Budget(max_steps=40_000, max_seconds=math.inf)).as_dict()
    unit = _unit_scale_map()
    assert tenth["inputs"]["z"] == ["0.1", "0.2", "0.3"] and not tenth["inputs"]["from_float"]
    assert [(p["status"], p["sequence"]) for p in tenth["regime_map"]] == [(p["status"], p["sequence"]) for p in unit]
