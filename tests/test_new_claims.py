"""The claims added for α_c, the saddle and E1 on datasets: their counterexamples are real
(re-checked here with an integrator that is not the one the claim used)."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from theorycheck import proofs  # noqa: F401  (registers the claims)
from theorycheck.claims import thresholds as th
from theorycheck.claims.claim import REGISTRY, run_claim


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
        t = th.collapse_threshold(z, 1.0, digits=8)
        lo, hi = (float(v) for v in t.certificate["bracket"])
        nrm = np.sqrt(2) * np.linalg.norm(z)
        assert z.min() / nrm < lo and hi < z.max() / nrm <= th.alpha_gd_like(z, 1.0).value


@pytest.mark.slow
def test_dataset_threshold_reduces_to_one_example_and_brackets_the_fates(tmp_path, capsys):
    from theorycheck.claims import dataset as ds
    from theorycheck.cli.main import main

    # one example as a data set (real time): the bracket from full integrations contains the certified α_c
    r = ds.collapse_threshold([[1.0, 2.0, 3.0]], [1.0], 1.0, rel_tol=1e-5)
    lo, hi = r["evidence"]["collapses"]["alpha"], r["evidence"]["trains"]["alpha"]
    assert lo <= th.collapse_threshold([1.0, 2.0, 3.0], 1.0).value <= hi and r["certified"] is False
    f = tmp_path / "d.csv"
    f.write_text("1,2,1\n2,0.5,1\n")
    assert main(["thresholds", "--data", str(f), "--rho", "1", "--json"]) == 0
    res = __import__("json").loads(capsys.readouterr().out)
    t = res["alpha_collapse"]
    assert res["n"] == 2 and t["value"] == pytest.approx(0.50144, rel=1e-4) and "not certified" in t["note"]
    assert t["evidence"]["collapses"]["kind"] == "collapses" and t["evidence"]["trains"]["min_margin"] > 0
