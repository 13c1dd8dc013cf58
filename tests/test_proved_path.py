"""Proved paths of balanced ℓ2-SAM at depth L ≥ 3 (proved/path.py, trajectory --prove): every enclosure
contains what the floating-point solver finds, the sequence is the solver's, and the final index is proved only
from a lemma."""

import math
from fractions import Fraction

import pytest
from theorycheck.proofs.minor_first.proved.trajectory import prove_trajectory

from theorycheck.api import solve
from theorycheck.proved.path import decide_path, depth_forms
from theorycheck.setting import Setting


def _inside(enc, x):
    return float(enc[0]) <= x <= float(enc[1])


def test_depth3_growth_blowup_enclosed():
    F = depth_forms(3, (0.5, 1.0), 1.0)  # z = (1, 2) on z/2: times scale back by 1/2
    r = decide_path(F, Fraction(1.5), Fraction(1.5), tighten=1e-3, clock=2.0)
    tr = solve(Setting.from_z([1.0, 2.0], depth=3, optimizer="sam-l2", rho=1.0, alpha=1.5), t_max=5.0).as_dict()
    assert r["status"] == "proved" and r["fate"] == "growth" and r["sequence"] == [2] == [tr["initial_index"]]
    assert r["final_index"] == tr["final_index"] == 2 and r["sequence_complete"]
    assert _inside(r["blowup_time"], tr["blowup_time"]) and float(r["blowup_time"][1]) - float(r["blowup_time"][0]) < 1e-3


def test_depth4_collapse_fate_proved_sequence_not_complete():
    F = depth_forms(4, (0.5, 1.0), 1.0)
    r = decide_path(F, Fraction(0.2), Fraction(0.2), after_steps=20, clock=2.0)
    tr = solve(Setting.from_z([1.0, 2.0], depth=4, optimizer="sam-l2", rho=1.0, alpha=0.2), t_max=50.0).as_dict()
    assert tr["collapsed"] and r["status"] == "proved" and r["fate"] == "collapse" and r["final_index"] == 0
    assert r["sequence"][-1] == 0 and r["sequence"][0] == tr["initial_index"]
    # no lemma fixes the switches after the certificate: a lower bound of the collapse time only
    assert r["sequence_complete"] is False and r["collapse_time"][1] is None
    assert float(r["collapse_time"][0]) <= tr["collapse_time"]


def test_gd_depth3_blowup_closed_form():
    g = prove_trajectory(Setting.from_z([1, 3, 2], depth=3, optimizer="gd", rho=0.0, alpha=0.5)).as_dict()
    assert g["final_index"] == 2 and _inside(g["blowup_time"], 1 / (3 * 0.5))
    assert float(g["blowup_time"][1]) - float(g["blowup_time"][0]) < 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("z, rho, L, alpha, t_max", [
    ([0.3, 0.7, 1.1, 2.5], 0.05, 4, 0.019412, 1e4),  # j† 2 → 1 → 2 → 4 and a blow-up at τ ≈ 8278.46
    ([1.0, 2.0, 3.0], 1.0, 4, 0.5, 10.0),
    ([1.0, 2.0, 3.0], 1.0, 3, 0.3, 10.0),  # 3 → 1 → 3
    ([2.0, 2.0, 1.0], 0.5, 3, 0.4, 10.0),  # a tie of z: j† among the distinct values
])
def test_proved_depth_trajectory_encloses_the_float_run(z, rho, L, alpha, t_max):
    s = Setting.from_z(z, depth=L, optimizer="sam-l2", rho=rho, alpha=alpha)
    r = prove_trajectory(s, max_seconds=120).as_dict()
    tr = solve(s, t_max=t_max).as_dict()
    assert r["proved"] and r["final_index_status"] == "proved" and r["fate"] == "growth"
    assert r["final_index"] == tr["final_index"] and r["sequence_complete"]
    assert r["sequence"] == [tr["initial_index"]] + [w["to"] for w in tr["switches"]]
    for w, f in zip(r["switches"], tr["switches"]):
        assert _inside(w["time"], f["time"]) and float(w["time"][1]) - float(w["time"][0]) < 1e-6 * max(1, f["time"])
    assert _inside(r["blowup_time"], tr["blowup_time"])


@pytest.mark.slow
def test_a_budget_that_runs_out_is_not_final():
    s = Setting.from_z([0.3, 0.7, 1.1, 2.5], depth=4, optimizer="sam-l2", rho=0.05, alpha=0.019412)
    r = prove_trajectory(s, max_seconds=1.0).as_dict()
    assert not r["proved"] and r["final_index_status"] == "not decided" and r["final_index"] is None
    assert "max_seconds" in r["final_index_reason"] or "budget" in r["final_index_reason"]


def test_depth4_regime_map_pieces_hold_at_their_ends():
    from theorycheck.proofs.minor_first.proved.regime_map import proved_regime_map

    from theorycheck.status import Budget

    for rng, fate in (("0.1:0.12", "collapse"), ("2:2.02", "growth")):
        r = proved_regime_map([1.0, 2.0], 1.0, rng, depth=4, budget=Budget(max_steps=20_000, max_seconds=math.inf)).as_dict()
        (p,) = r["regime_map"]
        assert p["status"] == "proved" and p["fate"] == fate and r["stopped"] is None
        for a in (float(p["lower"]), float(p["upper"])):
            tr = solve(Setting.from_z([1.0, 2.0], depth=4, optimizer="sam-l2", rho=1.0, alpha=a), t_max=50.0).as_dict()
            assert p["sequence"][0] == tr["initial_index"]
            if fate == "growth":
                assert p["sequence"] == [2] and p["sequence_complete"] and _inside(p["blowup_time"], tr["blowup_time"])
            else:
                assert tr["collapsed"] and not p["sequence_complete"] and p["sequence"][-1] == 0
                assert float(p["collapse_time"][0]) <= tr["collapse_time"]


@pytest.mark.slow
def test_depth4_regime_map_keeps_undecided_pieces_and_says_which_budget_ran_out():
    from theorycheck.proofs.minor_first.proved.regime_map import proved_regime_map

    from theorycheck.status import Budget

    # the range straddles α_c(4) = 0.28637…: the piece holding it can never be proved, so the budget runs out; a step
    # budget (the pieces tried first are proved within its first 4100 steps), so that the load cannot change it
    r = proved_regime_map([1.0, 2.0, 3.0], 1.0, "0.18:0.30", depth=4, budget=Budget(max_steps=6000, max_seconds=math.inf)).as_dict()
    pieces = r["regime_map"]
    assert pieces[0]["lower"] == "0.18" and pieces[-1]["upper"] == "0.3"
    assert all(a["upper"] == b["lower"] for a, b in zip(pieces, pieces[1:]))  # a partition, no gap
    assert r["stopped"] == "max_steps = 6000" and r["undecided_width"] > 0
    assert any(p["status"] == "proved" and p["fate"] == "collapse" for p in pieces)
    for p in pieces:
        if p["status"] == "undecided":
            assert p["fate"] is None and p["width"] > 0 and p["reason"]
        elif float(p["upper"]) <= 0.28637:  # below α_c(4) = 0.286370952822…: collapse
            assert p["fate"] == "collapse" and p["sequence"][-1] == 0
        else:
            assert float(p["lower"]) >= 0.28638 and p["fate"] == "growth"
