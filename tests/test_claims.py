"""The claims of THEORY.md: each verdict is what the math says, and every counterexample the
tool reports is a real one (checked here again, independently where possible)."""

import json
import os

import numpy as np
import pytest

from theorycheck.claims.claim import FAILS, HOLDS
from theorycheck.claims.registry import select
from theorycheck.claims.runner import run_claim
from theorycheck.cli.main import main
from theorycheck.packs import candidates

#: the claims of the pack minor-first by key (its manifest lists them)
REGISTRY = {c.key: c for _, c in candidates("minor-first")}

#: what `theorycheck verify` must find, and, for claims false as stated, what the refinement finds
EXPECTED = {
    "C1.one-example": (HOLDS, None),
    "C1.several-examples": ("holds-or-inconclusive", None),  # ℓ∞ sliding in real time can exhaust the budget
    "C2.solution": (HOLDS, None),
    "C2.limit": (FAILS, HOLDS),
    "C3.blowup-time": (HOLDS, None),
    "C3.winner": (FAILS, HOLDS),
    "C3.below-rho": (HOLDS, None),
    "C4.reduction": (HOLDS, None),
    "C4.switch-level": (HOLDS, None),
    "C4.sequential": (FAILS, HOLDS),
    "C4.limit": (FAILS, HOLDS),
    "C5.initial-index": (HOLDS, None),
    "C5.gd-like": (FAILS, HOLDS),
    "C5.regimes": (HOLDS, None),
    "C6.gd": (FAILS, HOLDS),
    "C5.saddle": (HOLDS, None),
    "C5.alpha-c-bounds": (HOLDS, None),
    "C4.neighbour-switches": (HOLDS, None),
    "E1.gd-static": (FAILS, HOLDS),
    "E1.sam-order": (FAILS, HOLDS),
    "E1.sam-limit": ("holds-or-inconclusive", None),  # directions converge like (log t)^(−p): some stay undecided
}


def test_every_claim_has_an_expectation():
    assert set(REGISTRY) == set(EXPECTED)


#: drawn inputs per claim: THEORYCHECK_PROFILE=thorough runs the property tests at verify's thorough size
EXAMPLES = {"fast": 4, "thorough": 100}[os.environ.get("THEORYCHECK_PROFILE", "fast")]


#: claims whose check takes more than a few seconds (slow tier; the other claims of the same theorem stay fast)
SLOW_CLAIMS = {"C5.regimes"}


@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.slow) if k in SLOW_CLAIMS else k
                                 for k in sorted(EXPECTED)])
def test_verdicts(key):
    v = run_claim(REGISTRY[key], examples=EXAMPLES, seed_=1)
    want, want_refined = EXPECTED[key]
    if want == "holds-or-inconclusive":
        assert v.status in (HOLDS, "inconclusive") and v.tried >= 4, (v.message, v.counterexample)
        return
    assert v.status == want, (v.message, v.counterexample, v.counterexample_detail)
    if want == FAILS:
        assert v.counterexample is not None and v.refined is not None
        assert v.refined.status == want_refined, (v.refined.message, v.refined.counterexample)
    else:
        assert v.inconclusive == 0 and v.tried >= 4


def test_sequential_counterexample_goes_down_then_up():
    """'Minor first, major last' fails: z = (1, 1.1, 10), N0 = 7.5: j† 2 → 1 → 2 → 3."""
    v = run_claim(REGISTRY["C4.sequential"], examples=0)
    sw = v.counterexample_detail["switches"]
    assert [(a, b) for _, a, b in sw] == [(2, 1), (1, 2), (2, 3)]
    assert not v.counterexample_detail["collapsed"]


def test_select_and_refined_lookup():
    assert {c.key for c in select(["C4"], list(REGISTRY.values()))} == {"C4.reduction", "C4.switch-level", "C4.sequential", "C4.limit",
                                             "C4.neighbour-switches"}
    assert [c.key for c in select(["C2.limit-refined"], list(REGISTRY.values()))] == ["C2.limit-refined"]
    with pytest.raises(KeyError):
        select(["C9"], list(REGISTRY.values()))


def test_verify_cli_json(capsys, tmp_path):
    out = tmp_path / "v.json"
    rc = main(["verify", "--claims", "C2,C6", "--examples", "2", "--json", str(out)])
    text = capsys.readouterr().out
    res = json.loads(out.read_text())
    assert rc == 1  # C2.limit and C6.gd fail as stated
    assert res["failed"] == ["C2.limit", "C6.gd"]
    keys = {c["key"]: c for c in res["claims"]}
    assert keys["C2.solution"]["status"] == "holds" and keys["C2.limit"]["refined"]["status"] == "holds"
    for c in res["claims"]:
        assert set(c) >= {"key", "statement", "status", "tried", "inconclusive", "worst_deviation", "tolerance",
                          "seconds", "counterexample", "counterexample_detail", "message", "refined"}
    assert "✗ fails" in text and "↳ C2.limit-refined" in text and "counterexample" in text


def test_verify_cli_holds_exit_0_and_errors(capsys):
    assert main(["verify", "--claims", "C2.solution", "--examples", "2"]) == 0
    assert main(["verify", "--claims", "C9"]) == 2
    assert "no claim matches" in capsys.readouterr().err
    assert main(["verify", "--list"]) == 0


def test_c2_counterexample_detail_is_the_tie():
    v = run_claim(REGISTRY["C2.limit"], examples=0)
    assert v.counterexample == {"z": [1.0, 1.0], "alpha": [2.0, 3.0], "rho": 1.0}
    # at the claim's horizon T = 20 the direction is within e^(−20)-ish of its limit (claim tolerance 1e-6)
    np.testing.assert_allclose(v.counterexample_detail["observed_direction"], np.array([1.0, 4.0]) / np.sqrt(17),
                               rtol=1e-6)
