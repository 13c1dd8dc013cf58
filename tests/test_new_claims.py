"""The claims added for α_c, the saddle and E1 on datasets: their counterexamples are real
(re-checked here with an integrator that is not the one the claim used)."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from theorycheck.proofs.minor_first.predict import alpha_c as AC
from theorycheck.proofs.minor_first.predict import thresholds as th

from theorycheck.claims.runner import run_claim
from theorycheck.packs import candidates

#: the claims of the pack minor-first by key (its manifest lists them)
REGISTRY = {c.key: c for _, c in candidates("minor-first")}


def gd_u_path(Z, alpha, t_max=60.0):
    """GD, L = 2, balanced, typed here in u with the logistic weights (scipy):
    du_j/dt = −∂Lo/∂u_j = u_j Σ_i w_i z_ij, w_i = −ℓ'(m_i)/n, both layers equal."""
    Z = np.asarray(Z, float)

    def f(t, u):
        w = 1.0 / (1.0 + np.exp(Z @ (u**2))) / Z.shape[0]
        return u * (w @ Z)

    return solve_ivp(f, (0, t_max), np.full(Z.shape[1], alpha), rtol=1e-10, atol=1e-14, dense_output=True)


def test_gd_on_two_examples_switches():
    """Z = ((4, 1), (−1, 1)), α = 0.1: u_1 leads at first, u_2 from t ≈ 4.11 on."""
    from scipy.optimize import brentq

    r = gd_u_path([[4.0, 1.0], [-1.0, 1.0]], 0.1)
    assert r.sol(0.5)[0] > r.sol(0.5)[1] and r.sol(60)[1] > r.sol(60)[0]
    cross = brentq(lambda t: r.sol(t)[1] - r.sol(t)[0], 0.5, 10.0, xtol=1e-12)
    assert cross == pytest.approx(4.1123173, abs=1e-5)  # the switch time verify reports


def test_e1_verdict_and_counterexample():
    v = run_claim(REGISTRY["E1.gd-static"], examples=4, seed_=1)
    assert v.status == "fails" and v.refined.status == "holds"
    # whichever input hypothesis shrank to, its switch is real in the independent u-space integration
    x = v.counterexample
    r = gd_u_path(x["Z"], x["alpha"], x["t_max"])
    t = np.linspace(1e-6, x["t_max"], 4001)
    lead = np.argmax(r.sol(t), axis=0)
    assert np.unique(lead).size > 1
    assert [int(lead[0]) + 1] == [v.counterexample_detail["initial_index"]]


def test_alpha_c_bounds_are_strict_and_sharper_than_gd_like():
    for z in ([1.0, 2.0, 3.0], [1.0, 1.0, 3.0], [0.5, 4.0], [1.0, 1.01]):
        z = np.array(z)
        t = AC.collapse_threshold(z, 1.0, digits=8)
        lo, hi = (float(v) for v in t.check["bracket"])
        nrm = np.sqrt(2) * np.linalg.norm(z)
        assert z.min() / nrm < lo and hi < z.max() / nrm <= th.alpha_gd_like(z, 1.0).value


@pytest.mark.slow
def test_dataset_threshold_reduces_to_one_example_and_brackets_the_fates(tmp_path, capsys):
    from theorycheck.proofs.minor_first.predict import dataset as ds

    from theorycheck.cli.main import main

    # one example as a data set (real time): the bracket from full integrations contains the certified α_c
    r = ds.dataset_collapse_threshold([[1.0, 2.0, 3.0]], [1.0], 1.0, rel_tol=1e-5)
    lo, hi = r["evidence"]["collapses"]["alpha"], r["evidence"]["trains"]["alpha"]
    assert lo <= AC.collapse_threshold([1.0, 2.0, 3.0], 1.0).value <= hi and r["strength"]["kind"] == "floating-point check"
    f = tmp_path / "d.csv"
    f.write_text("1,2,1\n2,0.5,1\n")
    assert main(["thresholds", "--data", str(f), "--rho", "1", "--json"]) == 0
    res = __import__("json").loads(capsys.readouterr().out)
    t = res["alpha_collapse"]
    assert res["n"] == 2 and t["value"] == pytest.approx(0.50144, rel=1e-4) and "no persisting condition is known" in t["note"]
    assert t["evidence"]["collapses"]["kind"] == "collapse" and t["evidence"]["trains"]["min_margin"] > 0


def sam_u_path(Z, alpha, rho, t_max):
    """ℓ2-SAM, L = 2, balanced, typed here in u (scipy, independent of the batched engine): both
    layers u, g = −(Σ_i c_i z_i) ⊙ u per layer (c_i = σ(−m_i)/n), û = u + ρ g/‖g‖ with the norm over
    both layers (√2 |g|), du/dt = (Σ_i ĉ_i z_i) ⊙ û at the perturbed point."""
    Z = np.asarray(Z, float)
    n = Z.shape[0]

    def f(t, u):
        g = -((1.0 / (1.0 + np.exp(Z @ (u**2))) / n) @ Z) * u
        uh = u + rho * g / (np.sqrt(2.0) * np.linalg.norm(g))
        return ((1.0 / (1.0 + np.exp(Z @ (uh**2))) / n) @ Z) * uh

    return solve_ivp(f, (0, t_max), np.full(Z.shape[1], alpha), method="DOP853", rtol=1e-11, atol=1e-14,
                     dense_output=True)


def test_e1_sam_order_fails_on_the_pinned_data_in_both_orders():
    """Z = ((1.2, 1.5), (2.7, 2.0)), ρ = 0.5: j† goes 2 → 1 → 2 at α = 0.404 and is 1 at α = 0.789
    but 2 at α = 1.101 (t = 0.01); feature 1 has the larger column sum, feature 2 the larger
    column minimum, so each order sees one of the two violations the wrong way round."""
    from theorycheck.proofs.minor_first import e1

    v = run_claim(REGISTRY["E1.sam-order"], examples=0)
    assert v.status == "fails" and v.counterexample == {"Z": [[1.2, 1.5], [2.7, 2.0]], "rho": 0.5}
    d = v.counterexample_detail
    row = next(r for r in d["time"] if r["path"] == [2, 1, 2])
    assert row["alpha"] == pytest.approx(0.404282, rel=1e-5)
    assert row["first_seen"][1] == pytest.approx(0.48255, rel=1e-4) and row["first_seen"][2] == pytest.approx(35.019, rel=1e-4)
    assert d["alpha"][0] == {"t": 0.01, "alpha": [pytest.approx(0.788552, rel=1e-5), pytest.approx(1.101293, rel=1e-5)],
                             "jdag": [1, 2]}
    assert not d["unfinished"]
    m = e1.sam_order(v.counterexample["Z"], 0.5, order="min")
    assert m["time"] and m["alpha"] and not m["unimodal"]  # in the min order: down then up, but α is not monotone
    # the path and the α reversal in an independent integration
    Z = v.counterexample["Z"]
    r = sam_u_path(Z, row["alpha"], 0.5, 100.0)
    assert [int(np.argmax(r.sol(t))) + 1 for t in (0.05, 3.0, 100.0)] == [2, 1, 2]
    lo, hi = (sam_u_path(Z, a, 0.5, 0.01).sol(0.01) for a in d["alpha"][0]["alpha"])
    assert np.argmax(lo) == 0 and np.argmax(hi) == 1


def test_e1_sam_order_refined_holds_and_its_pin_goes_down_then_up():
    from theorycheck.proofs.minor_first import e1

    v = run_claim(REGISTRY["E1.sam-order"], examples=4, seed_=1)
    assert v.refined.status == "holds" and v.refined.tried >= 5 and v.refined.inconclusive == 0
    o = e1.sam_order([[0.4, 1.2, 1.8], [0.2, 0.5, 1.1]], 0.8)
    assert [r["path"] for r in o["time"]] == [[2, 1, 2]] and not o["unimodal"] and not o["alpha"]


def test_e1_sam_limit_orthant_not_unrestricted():
    """z = (−1, ½): the unrestricted ℓ1 max margin is (−1, 0) (norm 1); ℓ2-SAM from α·1 reaches only
    β ≥ 0 and goes to (0, 2)/‖·‖ (norm 2) exactly; ((4, 1), (−1, 1)): the gap falls like a power of
    1/log t (0.030 at ln t = 14, 0.0017 at ln t = 320; the fit a + c (log t)^(−p) has p ≈ 0.93)
    and Aitken extrapolates it to −5e-5 ± 4e-5."""
    c = REGISTRY["E1.sam-limit"]
    o = c.check({"Z": [[-1.0, 0.5]], "rho": 0.3, "alpha": 1.0})
    assert o.ok is True and o.detail["l1_orthant"] == pytest.approx(2.0) and o.detail["l1_unrestricted"] == pytest.approx(1.0)
    assert np.allclose(o.detail["direction"], [0.0, 1.0], atol=1e-12)
    o = c.check({"Z": [[4.0, 1.0], [-1.0, 1.0]], "rho": 0.3, "alpha": 0.5})
    assert o.ok is True and o.detail["stopped_because"] == "t_max"
    assert o.detail["values"][0] > 2e-2 and o.detail["values"][-1] < 2e-3
    assert abs(o.detail["intercept"]) < 1e-4 and o.detail["intercept_se"] < 1e-4
    assert o.detail["rate_fits"]["log_t"]["p"] == pytest.approx(0.93, abs=0.05)
    assert o.detail["direction"][1] > 0.999
    v = run_claim(c, examples=4, seed_=1)
    assert v.status in ("holds", "inconclusive") and v.counterexample is None and v.tried >= 4
