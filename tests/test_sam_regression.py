"""The pack sam-regression: its theorems, each claim's check on inputs whose answer is known, its predictions,
and (slow) the verdicts with their failure rates."""

import json

import numpy as np
import pytest
from theorycheck.proofs.sam_regression import claims as C
from theorycheck.proofs.sam_regression import problems as P
from theorycheck.proofs.sam_regression import runs

from theorycheck.cli.main import main
from theorycheck.optimizers import GD, N_SAM, ONE_SAM


def test_the_theorems_are_verified_on_the_engines_flows():
    from theorycheck.api import prove

    res = prove(pack="sam-regression")
    assert [r.theorem.key for r in res.results] == ["SR1", "SR2", "SR3"]
    assert all(r.status == "verified" for r in res.results), [(r.theorem.key, r.status) for r in res.results]


def test_scale_rate_is_the_chart_rate_and_zero_for_gd():
    from theorycheck.proofs.sam_regression.theorems import chart_rates, scale_rate

    for param in ("uv", "pm"):
        assert scale_rate(param, GD) == 0
        for opt in (N_SAM, ONE_SAM):
            assert (chart_rates(param, opt)[0] - scale_rate(param, opt)).simplify() == 0


def test_the_identity_holds_along_flows_to_rounding():
    for x in (P.ONE_EXAMPLE, {**P.PAPER, "param": "pm", "rho": 1.0}):
        out = C.check_identity(x)
        assert out.ok is True and out.deviation < 1e-12, out.detail


def test_gd_and_sam_reach_the_predicted_limits():
    out = C.check_gd({**P.TIE, "alpha": [0.05, 0.2, 0.1]})
    assert out.ok is True and out.deviation <= out.detail["error_bar"]
    beta = out.detail["predicted_beta"]
    assert beta[1] > beta[0] > 0  # unequal α breaks the tie between the equal columns: the larger scale wins
    tie = C.check_gd(P.TIE)
    assert tie.ok is True and abs(tie.detail["flow_beta"][0] - tie.detail["flow_beta"][1]) < 1e-9
    out = C.check_sam_limit(P.PAPER)
    assert out.ok is True, out.detail
    for name in ("n-sam", "1-sam"):
        scale = np.asarray(out.detail[name]["potential_scale"])
        assert np.all(scale < 0.05)  # below GD's α/2: SAM shrank every coordinate's scale


def test_shrinking_and_one_sam_against_n_sam_on_the_paper_problem():
    s = C.check_shrink(P.PAPER)
    assert s.ok is True and s.deviation < 0
    o = C.check_one_vs_n(P.PAPER)
    assert o.ok is True and o.deviation < 0


def test_n_sam_is_neither_sparser_nor_closer_to_beta_star_on_a_paper_problem():
    """The tool's finding on the grid's first problem: n-SAM's limit has the larger ℓ1 norm and lies farther
    from β* than GD's, by far more than the error bars; 1-SAM's lies closer."""
    x = C.generalisation_grid()[0]
    sp = C.check_sparser(x)
    assert sp.ok is False and sp.deviation > 100 * sp.detail["error_bar"]
    g = C.check_generalises(x)
    assert g.ok is False and g.detail["n-sam"]["error_sam"] > g.detail["n-sam"]["error_gd"]
    assert g.detail["1-sam"]["error_sam"] < g.detail["1-sam"]["error_gd"]


def test_above_every_threshold_the_flows_stop_at_zero_and_below_they_interpolate():
    X, y, _ = P.data(P.PAPER)
    th = P.origin_thresholds(X, y)
    assert np.all(th["one_sam"] <= th["n_sam"])  # SR3: 1-SAM's threshold is the lower
    high = {**P.PAPER, "rho": float(2 * th["n_sam"].max()), "log10_alpha": -2.0}
    out = C.check_interpolation_threshold(high)
    assert out.ok is True and out.detail["escaping"] == {"n_sam": 0, "one_sam": 0}
    assert C.check_interpolates(high).ok is False
    r = runs.flow(high, ONE_SAM)
    assert runs.stopped_short(r, y) and np.abs(r.beta).max() < 1e-6
    low = {**P.PAPER, "rho": float(0.5 * th["one_sam"].min()), "log10_alpha": -2.0}
    assert C.check_interpolation_threshold(low).ok is True and C.check_interpolates(low).ok is True


def test_a_collapsed_flow_stops_short_with_its_scale_at_zero():
    X, y, _ = P.data(P.PAPER)
    high = {**P.PAPER, "rho": float(2 * P.origin_thresholds(X, y)["n_sam"].max())}
    r = runs.flow(high, N_SAM)
    assert not r.converged and runs.stopped_short(r, y) and np.all(r.effective_scale < 1e-100)
    assert C.check_shrink(high).ok is True  # a scale that collapsed to 0 did shrink
    assert C.check_sam_limit(high).ok is None  # no limit to compare: undecided, never a verdict


def test_inputs_are_described_with_their_data():
    d = P.describe(P.PAPER)
    X, y, b = P.data(P.PAPER)
    assert np.allclose(d["X"], X) and np.allclose(d["y"], y) and np.allclose(d["beta_star"], b)
    assert np.allclose(np.asarray(d["X"]) @ np.asarray(d["beta_star"]), y)
    again = P.data({k: v for k, v in d.items() if k not in ("seed", "n", "d", "k", "signs")})
    assert np.array_equal(again[0], X) and np.array_equal(again[1], y)
    assert len(C.generalisation_grid()) == 40 and len({json.dumps(x) for x in C.generalisation_grid()}) == 40


def test_predict_prints_the_limit_at_the_effective_scale(capsys, tmp_path):
    f = tmp_path / "reg.csv"
    f.write_text("x1,x2,x3,x4,y\n1,0.5,-0.2,0.3,1.0\n0.3,-1,0.8,0.1,-0.5\n")
    rc = main(["predict", "--pack", "sam-regression", "--data", str(f), "--alpha", "0.1", "--rho", "0.3",
               "--optimizer", "1-sam", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0 and res["optimizer"] == "1-sam" and res["flow_status"] == "converged"
    assert np.linalg.norm(np.array(res["beta"]) - np.array(res["flow_beta"])) <= res["flow_error_bar"] + \
        res["limit_error_bar"] + 1e-9
    assert all(c < 0.1 for c in res["effective_scale"]) and res["alpha"] == [0.1] * 4
    rc = main(["predict", "--pack", "sam-regression", "--data", str(f), "--alpha", "0.1,0.2,0.1,0.1", "--param", "pm"])
    out = capsys.readouterr().out
    assert rc == 0 and "effective_scale" in out and "[0.1, 0.2, 0.1, 0.1]" in out


@pytest.mark.slow
def test_verify_pack_gives_verdicts_with_counts(capsys):
    rc = main(["verify", "--pack", "sam-regression", "--claims", "SR.generalises,SR.sparser", "--json", "-"])
    res = json.loads(capsys.readouterr().out)
    by = {c["key"]: c for c in res["claims"]}
    assert rc == 1 and res["packs"] == ["sam-regression"]
    gen = by["SR.generalises"]
    assert gen["status"] == "fails" and gen["grid"]["tried"] == 40 and gen["grid"]["failed"] == 36
    assert gen["strength"]["kind"] == "floating-point check"
    assert gen["refined"]["key"] == "SR.generalises.one-sam" and gen["refined"]["grid"]["failed"] == 11
    assert by["SR.sparser"]["grid"]["failed"] == 40
