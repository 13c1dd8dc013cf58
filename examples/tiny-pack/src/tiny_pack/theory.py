"""The tiny pack's theorem (for ``theorycheck prove``) and claim (for ``theorycheck verify``)."""

import numpy as np
import sympy as sp
from hypothesis import assume
from hypothesis import strategies as st

from theorycheck.packs import Claim, Identity, Outcome, Theorem
from theorycheck.symbolic import regression as R


# ---- the theorem: a sequence of sympy steps, each verified symbolically (or refuted)
def _t1():
    beta = R.pm_beta(2)  # w_p**2 - w_m**2, from the symbolic layer
    fp, fm = R.pm_field(2)  # dw±/dt = −∂β/∂w± · g
    dbeta_dt = sp.diff(beta, R.wp) * fp + sp.diff(beta, R.wm) * fm
    yield Identity("dβ/dt = −4(w₊² + w₋²)·g (chain rule)", dbeta_dt, -4 * (R.wp**2 + R.wm**2) * R.g)


def theorems():
    return [Theorem("T1", "the flow is preconditioned gradient flow in β",
                    "dβ_j/dt = −4(w₊² + w₋²)_j ∂Lo/∂β_j", _t1)]


# ---- the claim: inputs drawn by hypothesis, a check giving an Outcome per input
@st.composite
def _inputs(draw):
    n = draw(st.integers(1, 2))
    d = draw(st.integers(n + 1, 4))
    num = st.floats(-2, 2, allow_nan=False).map(lambda v: round(v, 2))
    X = np.array(draw(st.lists(st.lists(num, min_size=d, max_size=d), min_size=n, max_size=n)))
    assume(np.linalg.svd(X, compute_uv=False).min() > 0.1)  # full row rank: the claim's hypothesis
    y = draw(st.lists(num, min_size=n, max_size=n))
    return {"X": X.tolist(), "y": y, "alpha": draw(st.sampled_from([0.1, 0.3, 1.0, 3.0]))}


def _check(x):
    from theorycheck.optimizers import GD
    from theorycheck.solvers.pm_flow import DEFAULT_BUDGET, flow_pm

    X, y = np.array(x["X"]), np.array(x["y"])
    res = flow_pm(X, y, optimizer=GD, depth=2, alpha=x["alpha"], budget=DEFAULT_BUDGET.but(max_seconds=20))
    if not res.converged:  # a budget ran out: inconclusive, never "holds"
        return Outcome(None, detail={"status": res.status})
    tol = 1e-9 * max(1.0, float(np.linalg.norm(y)))
    return Outcome(res.residual <= tol, res.residual, {"beta": res.beta, "t": res.t})


def claims():
    return [Claim(key="tiny.interpolates",
                  statement="gradient flow on β = w₊² − w₋² (X of full row rank) converges to an interpolator",
                  inputs=_inputs(), check=_check, tolerance="‖Xβ − y‖ ≤ 1e-9·max(1, ‖y‖)",
                  pinned=({"X": [[1.0, 1.0]], "y": [1.0], "alpha": 0.1},), max_examples=10)]
