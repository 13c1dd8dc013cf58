"""Claims of the pack ``kernel-rich`` (``theorycheck verify``), each with its check and its input strategy."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from theorycheck.claims.claim import Claim, Outcome

DEPTHS = (2, 3, 4)


def _data(seed: int, n: int, d: int, sparse: bool):
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, d)), 2)
    b = np.zeros(d)
    k = max(1, n - 1) if sparse else d
    idx = rng.choice(d, size=k, replace=False)
    b[idx] = np.round(rng.uniform(0.5, 2.0, size=k) * rng.choice([-1, 1], size=k), 2)
    return X, np.round(X @ b, 6)


@st.composite
def _inputs(draw, alphas: bool = True, sparse: bool = True):
    n = draw(st.integers(1, 3))
    d = draw(st.integers(n + 1, 6))
    x = {"seed": draw(st.integers(0, 10_000)), "n": n, "d": d, "depth": draw(st.sampled_from((2, 3)))}
    if alphas:
        x["log10_alpha"] = draw(st.sampled_from((-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0)))
    x["sparse"] = sparse
    return x


def _describe(x) -> dict:
    if "X" in x:
        return {k: (np.asarray(v).tolist() if k in ("X", "y") else v) for k, v in x.items()}
    X, y = _data(x["seed"], x["n"], x["d"], x.get("sparse", True))
    return {**x, "X": X.tolist(), "y": y.tolist()}


def _xy(x):
    if "X" in x:
        return np.asarray(x["X"], float), np.asarray(x["y"], float)
    return _data(x["seed"], x["n"], x["d"], x.get("sparse", True))


def _check_limit(x) -> Outcome:
    from theorycheck.optimizers import GD
    from theorycheck.solvers.interpolate import argmin_Q
    from theorycheck.solvers.pm_flow import DEFAULT_BUDGET as PM_BUDGET
    from theorycheck.solvers.pm_flow import flow_pm, remaining_step

    X, y = _xy(x)
    D, alpha = x["depth"], 10.0 ** x["log10_alpha"]
    # the budget in evaluations, not seconds: a verdict must not depend on the machine's load
    fl = flow_pm(X, y, optimizer=GD, depth=D, alpha=alpha,
                 budget=PM_BUDGET.but(max_seconds=float("inf"), max_evaluations=200_000))
    if not fl.converged:
        return Outcome(None, detail={"flow_status": fl.status, "residual": fl.residual})
    pr = argmin_Q(X, y, depth=D, alpha=alpha)
    from theorycheck.symbolic.regression_forms import pm_forms

    th = np.asarray(pr.dual) @ X
    metric = alpha**D * pm_forms(D)["dh"](th) * np.ones(X.shape[1])
    pred_err = 2.0 * float(np.linalg.norm(remaining_step(X, y, pr.beta, metric)))
    scale = max(1.0, float(np.linalg.norm(pr.beta)))
    bar = fl.error_bar + pred_err + 1e-9 * scale
    dev = float(np.linalg.norm(fl.beta - pr.beta))
    return Outcome(dev <= bar, dev, {"flow_beta": fl.beta, "predicted_beta": pr.beta, "error_bar": bar,
                                     "flow_residual": fl.residual, "flow_t": fl.t, "predict_status": pr.status})


#: α sequences for the limits (small: per depth; large)
SMALL = {2: (1e-4, 1e-8, 1e-16), 3: (1e-2, 1e-3, 1e-4)}
LARGE = {2: (10.0, 100.0, 1000.0), 3: (3.0, 10.0, 30.0)}


def _gaps(x, alphas, target):
    from theorycheck.solvers.interpolate import argmin_Q

    X, y = _xy(x)
    out = []
    for a in alphas:
        q = argmin_Q(X, y, depth=x["depth"], alpha=a)
        out.append((a, q, float(np.linalg.norm(q.beta - target))))
    return out


def _limit_outcome(gaps, scale, extra):
    """ok when the last gap is below 1e-6·scale plus the solver's own residual (``tol``); fails when
    larger and the gap has stopped decreasing (its last step shrank it by ≤ tol); inconclusive when
    it is still decreasing: β_α can approach its limit as slowly as 1/log(1/α) (the α steps double
    log(1/α), so such a gap only halves per step), and a falling sequence is no evidence of a
    nonzero limit."""
    es = [g for _, _, g in gaps]
    tol = 1e-6 * scale + 10 * max(q.constraint_residual for _, q, _ in gaps)
    detail = {"alphas": [a for a, _, _ in gaps], "gaps": es, "tolerance": tol, **extra}
    if es[-1] <= tol:
        return Outcome(True, es[-1], detail)
    if len(es) >= 2 and es[-1] < es[-2] - tol:
        detail["undecided_because"] = "the gap is still decreasing"
        return Outcome(None, es[-1], detail)
    return Outcome(False, es[-1], detail)


def _check_l1(x) -> Outcome:
    from theorycheck.solvers.interpolate import min_l1

    X, y = _xy(x)
    l1 = min_l1(X, y)
    gaps = _gaps(x, SMALL[x["depth"]], l1.beta)
    return _limit_outcome(gaps, max(1.0, l1.objective), {"beta_l1": l1.beta, "l1_unique": l1.unique,
                                                         "beta_alpha": gaps[-1][1].beta})


def _check_l1_norm(x) -> Outcome:
    """‖β_α‖₁ → min ‖β‖₁ always; and β_α → β_ℓ1 when the ℓ1 minimiser is unique."""
    from theorycheck.solvers.interpolate import min_l1

    X, y = _xy(x)
    l1 = min_l1(X, y)
    gaps = _gaps(x, SMALL[x["depth"]], l1.beta)
    norm_gaps = [(a, q, abs(float(np.abs(q.beta).sum()) - l1.objective)) for a, q, _ in gaps]
    out = _limit_outcome(norm_gaps, max(1.0, l1.objective), {"l1_unique": l1.unique, "beta_l1": l1.beta,
                                                              "beta_alpha": gaps[-1][1].beta})
    if out.ok and l1.unique:
        out2 = _limit_outcome(gaps, max(1.0, l1.objective), {})
        out.ok = out2.ok
        out.deviation = max(out.deviation, out2.deviation)
        out.detail["gaps_beta"] = out2.detail["gaps"]
    return out


def _check_l2(x) -> Outcome:
    from theorycheck.solvers.interpolate import min_l2

    X, y = _xy(x)
    l2 = min_l2(X, y)
    gaps = _gaps(x, LARGE[x["depth"]], l2.beta)
    return _limit_outcome(gaps, max(1.0, l2.objective), {"beta_l2": l2.beta})


#: min-ℓ1 not unique: X = [1 1], y = 1; by symmetry the flow ends at (½, ½), a vertex LP picks (1, 0)
TIE = {"X": [[1.0, 1.0]], "y": [1.0], "depth": 2, "sparse": False}

_L1_REFINED = Claim(
    key="KR.l1.norm",
    statement="α → 0: ‖β_α‖₁ → min{‖β‖₁ : Xβ = y}, and β_α → the minimum-ℓ1 interpolator when it is unique",
    inputs=_inputs(alphas=False), check=_check_l1_norm, tolerance="gap ≤ 1e-6·max(1, ‖β‖₁) at the smallest α",
    pinned=(TIE, {**TIE, "depth": 3}), describe=_describe, max_examples=12)

CLAIMS = (
    Claim(key="KR.limit",
          statement="gradient flow on β = w₊^D − w₋^D from w±(0) = α·1 (squared loss, Xβ = y solvable) converges "
          "to an interpolator, and it is argmin{Q_α(β) : Xβ = y}",
          inputs=_inputs(), check=_check_limit,
          tolerance="‖β_flow − β_Q‖ ≤ error bar of the flow (remaining step, invariant drift) + of the solver",
          pinned=({"seed": 1, "n": 3, "d": 6, "depth": 2, "log10_alpha": -2.0, "sparse": True},
                  {"seed": 1, "n": 3, "d": 6, "depth": 3, "log10_alpha": -2.0, "sparse": True},
                  {"seed": 2, "n": 2, "d": 5, "depth": 3, "log10_alpha": 1.0, "sparse": True},
                  {**TIE, "log10_alpha": -2.0}),
          describe=_describe, max_examples=30),
    Claim(key="KR.l1", statement="α → 0: the limit tends to the minimum-ℓ1 interpolator",
          inputs=_inputs(alphas=False), check=_check_l1,
          tolerance="‖β_α − β_ℓ1‖ ≤ 1e-6·max(1, ‖β_ℓ1‖₁) at the smallest α (10⁻¹⁶ for D = 2, 10⁻⁴ for D = 3)",
          pinned=(TIE,), refined=_L1_REFINED, describe=_describe, max_examples=20),
    Claim(key="KR.l2", statement="α → ∞: the limit tends to the minimum-ℓ2 interpolator",
          inputs=_inputs(alphas=False, sparse=False), check=_check_l2,
          tolerance="‖β_α − β_ℓ2‖ ≤ 1e-6·max(1, ‖β_ℓ2‖) at the largest α (10³ for D = 2, 30 for D = 3)",
          pinned=(TIE, {**TIE, "depth": 3}), describe=_describe, max_examples=20),
)


def claims() -> list[Claim]:
    return list(CLAIMS)
