"""ℓ2-SAM at depth L ≥ 3 (balanced, one example): the trajectory handles collapse (even L) and
blow-up, and the depth-L thresholds (claims/depth.py) against independent integrations."""

import json

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from theorycheck.cli.main import main


def u_space_fate(z, L, alpha, rho=1.0, t_max=400.0):
    """The balanced ℓ2-SAM field typed from THEORY.md in u (not θ = ln u), scipy DOP853:
    (kind, time) with kind 'collapse' (N < 1e-14), 'blowup' (max u > 1e6) or 'none'."""
    z = np.asarray(z, float)

    def f(t, u):
        N = np.sqrt(L * np.sum(z**2 * u ** (2 * L - 2)))
        return z * (u - rho * z * u ** (L - 1) / N) ** (L - 1)

    def big(t, u):
        return np.max(np.abs(u)) - 1e6

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
