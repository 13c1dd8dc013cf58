"""Failure rates on a claim's fixed grid of inputs, and the strength every verdict carries."""

import json

import pytest
from hypothesis import strategies as st

from theorycheck.claims.claim import ERROR, FAILS, HOLDS, INCONCLUSIVE, Claim, Outcome
from theorycheck.claims.runner import run_claim
from theorycheck.strength import Kind, Strength


def _small(x):
    return Outcome(x < 5, float(x))


def test_grid_failure_rate_beside_the_shrunk_counterexample():
    c = Claim("T.rate", "x < 5", st.integers(0, 1000), _small, "exact", grid=list(range(40)),
              describe=lambda x: {"x": x})
    v = run_claim(c, examples=30)
    assert v.status == FAILS and v.counterexample == {"x": 5}  # hypothesis shrank its own draw
    assert (v.grid.tried, v.grid.failed, v.grid.inconclusive) == (40, 35, 0)
    assert v.grid.text == "fails on 35 of 40 grid inputs"
    assert [f["input"] for f in v.grid.failures] == [{"x": 5}, {"x": 6}, {"x": 7}]
    assert "fails on 35 of 40 grid inputs" in v.message
    assert v.tried == v.pinned + v.grid.tried + v.drawn and v.drawn >= 1
    d = v.as_dict()
    assert d["grid"] == {"tried": 40, "failed": 35, "inconclusive": 0, "failures": v.grid.failures,
                         "text": "fails on 35 of 40 grid inputs"}
    assert d["strength"] == {"kind": "floating-point check", "text": "a floating-point check (float64)", "digits": None}


def test_a_grid_failure_alone_is_reported_unshrunk():
    c = Claim("T.gridonly", "x ≠ 13", st.integers(0, 5), lambda x: Outcome(x != 13), "exact",
              grid=lambda: [1, 13, 2, 13], describe=lambda x: {"x": x})
    v = run_claim(c, examples=5)
    assert v.status == FAILS and v.counterexample == {"x": 13}
    assert (v.grid.tried, v.grid.failed) == (4, 2) and "not shrunk" in v.message and "5 drawn inputs agree" in v.message
    assert v.strength.kind is Kind.FLOAT_CHECK


def test_a_grid_that_holds_counts_in_the_strength():
    c = Claim("T.gridok", "x ≥ 0", st.integers(0, 9), lambda x: Outcome(x >= 0), "exact", pinned=[0],
              grid=range(10), digits=30)
    v = run_claim(c, examples=5)
    assert v.status == HOLDS and (v.grid.failed, v.grid.tried) == (0, 10) and v.tried == 16
    assert v.strength == Strength(Kind.HOLDS_ON_INPUTS, inputs=16) and v.strength.text == "holds on 16 inputs"
    assert v.grid.text == "no failure on 10 grid inputs"
    skipped = run_claim(c, examples=5, grid=False)
    assert skipped.grid is None and skipped.tried == 6 and skipped.as_dict()["grid"] is None


def test_the_precision_of_a_check_is_the_strength_of_its_failure():
    c = Claim("T.mp", "x < 1", st.integers(0, 3), lambda x: Outcome(x < 1), "exact", digits=40, pinned=[2])
    v = run_claim(c, examples=3)
    assert v.status == FAILS and v.strength.text == "a floating-point check (40 digits)"


def test_inconclusive_and_error_verdicts_are_not_decided():
    c = Claim("T.budget", "b", st.integers(0, 3), lambda x: Outcome(None if x == 2 else True), "exact",
              grid=[2, 2, 1])
    v = run_claim(c, examples=5)
    assert v.status == INCONCLUSIVE and v.strength.kind is Kind.NOT_DECIDED
    assert v.grid.inconclusive == 2 and "checks gave no verdict" in v.strength.because
    assert "(2 not decided)" in v.grid.text
    why = Claim("T.data", "d", st.integers(0, 3), lambda x: Outcome(None, detail={"why": "MNIST not found"}), "exact",
                grid=[1])
    w = run_claim(why, examples=2)
    assert w.status == INCONCLUSIVE and w.message.endswith("gave no verdict (first: MNIST not found)")
    assert "budget" not in w.message

    def bad(x):
        raise ValueError("boom")

    v = run_claim(Claim("T.crash", "c", st.integers(0, 3), bad, "exact", grid=[1]), examples=2)
    assert v.status == ERROR and v.strength.kind is Kind.NOT_DECIDED and "ValueError" in v.strength.because


def test_the_refined_claim_runs_its_own_grid():
    refined = Claim("T.ref", "x ≤ 1000", st.integers(0, 1000), lambda x: Outcome(x <= 1000), "exact", grid=[1, 2])
    c = Claim("T.orig", "x < 5", st.integers(0, 1000), _small, "exact", refined=refined, grid=[1, 9])
    v = run_claim(c, examples=10)
    assert v.status == FAILS and v.grid.failed == 1
    assert v.refined.status == HOLDS and v.refined.grid.tried == 2 and v.refined.strength.inputs == v.refined.tried


def test_verify_prints_grid_rates_and_strength(capsys):
    from theorycheck import register_claim, unregister_claim
    from theorycheck.cli.main import main

    register_claim(Claim("user.rate", "x < 36", st.integers(0, 3), lambda x: Outcome(x < 36, float(x)), "exact",
                         grid=list(range(72)), describe=lambda x: {"x": x}))
    try:
        rc = main(["verify", "--claims", "user.rate", "--examples", "3"])
        out = capsys.readouterr().out
        rc_json = main(["verify", "--claims", "user.rate", "--examples", "3", "--json", "-"])
        res = json.loads(capsys.readouterr().out)
        rc_skip = main(["verify", "--claims", "user.rate", "--examples", "3", "--no-grid", "--json", "-"])
        skipped = json.loads(capsys.readouterr().out)
    finally:
        unregister_claim("user.rate")
    assert rc == 1 and "36/72" in out and "fails on 36 of 72 grid inputs" in out
    assert "a floating-point check (float64)" in out and "grid fails" in out
    (v,) = res["claims"]
    assert rc_json == 1 and v["grid"]["failed"] == 36 and v["grid"]["tried"] == 72
    assert v["strength"]["kind"] == "floating-point check"
    assert rc_skip == 0 and skipped["claims"][0]["grid"] is None
    assert skipped["claims"][0]["strength"] == {"kind": "holds on inputs", "text": "holds on 3 inputs", "inputs": 3}


@pytest.mark.parametrize("examples", [0])
def test_holds_on_nothing_is_not_decided(examples):
    v = run_claim(Claim("T.none", "n", st.integers(0, 1), lambda x: Outcome(True), "exact"), examples=examples)
    assert v.strength.kind is Kind.NOT_DECIDED and v.strength.because == "no input was tried"


def test_a_shrink_budget_bounds_the_checks_after_a_disagreement():
    calls = []

    def costly(x):
        calls.append(x)
        return Outcome(x < 500, float(x))

    c = Claim("T.shrink", "x < 500", st.integers(0, 10**6), costly, "exact", describe=lambda x: {"x": x},
              shrink_budget=5)
    v = run_claim(c, examples=50)
    assert v.status == FAILS and v.counterexample["x"] >= 500 and "budget of 5 checks" in v.message
    first_failure = next(i for i, x in enumerate(calls) if x >= 500)
    assert len(calls) - first_failure - 1 <= 5  # at most 5 checks after the first disagreement
    unbounded = run_claim(Claim("T.shrink2", "x < 500", st.integers(0, 10**6), lambda x: Outcome(x < 500), "exact",
                                describe=lambda x: {"x": x}), examples=50)
    assert unbounded.counterexample == {"x": 500} and "budget" not in unbounded.message


def test_a_shrink_budget_bounds_a_crash_too():
    calls = []

    def crash(x):
        calls.append(x)
        if x > 100:
            raise ValueError("boom")
        return Outcome(True)

    v = run_claim(Claim("T.crash2", "c", st.integers(0, 10**6), crash, "exact", shrink_budget=3,
                        describe=lambda x: {"x": x}), examples=30)
    assert v.status == ERROR and v.counterexample["x"] > 100
    first = next(i for i, x in enumerate(calls) if x > 100)
    assert len(calls) - first - 1 <= 3


def test_non_finite_numbers_in_a_detail_do_not_break_the_json(capsys):
    from theorycheck import register_claim, unregister_claim
    from theorycheck.cli.main import main

    register_claim(Claim("user.inf", "x < 1", st.integers(0, 3),
                         lambda x: Outcome(None if x == 2 else x < 1, detail={"bar": float("inf")}), "exact",
                         pinned=[2, 3], grid=[5], describe=lambda x: {"x": x}))
    try:
        rc = main(["verify", "--claims", "user.inf", "--examples", "2", "--json", "-"])
    finally:
        unregister_claim("user.inf")
    (v,) = json.loads(capsys.readouterr().out)["claims"]
    assert rc == 1 and v["counterexample_detail"] == {"bar": "inf"}
    assert v["inconclusive_examples"][0]["detail"] == {"bar": "inf"}
