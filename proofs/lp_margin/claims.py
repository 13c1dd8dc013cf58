"""Claims of the pack ``lp-margin`` (``theorycheck verify``), each with its check and its input strategy."""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import strategies as st

from theorycheck.claims.claim import Claim, Outcome
from theorycheck.claims.trend import tends_to_zero

DEPTHS = (2, 3, 4)


def _data(seed: int, n: int, d: int) -> np.ndarray:
    """z_i = y_i x_i with labels from a β₀ ≥ 0: separable within the reachable orthant."""
    rng = np.random.default_rng(seed)
    b0 = rng.uniform(0.0, 1.0, size=d)
    X = np.round(rng.standard_normal((n, d)), 2)
    m = X @ b0
    X[np.abs(m) < 1e-3] += 0.05
    return np.round(np.sign(X @ b0)[:, None] * X, 2)


@st.composite
def _inputs(draw, depths=DEPTHS):
    n = draw(st.integers(1, 4))
    return {"seed": draw(st.integers(0, 10_000)), "n": n, "d": draw(st.integers(2, 5)),
            "depth": draw(st.sampled_from(depths)), "loss": draw(st.sampled_from(("exponential", "logistic")))}


def _Z(x) -> np.ndarray:
    return np.atleast_2d(np.asarray(x["Z"], float)) if "Z" in x else _data(x["seed"], x["n"], x["d"])


def _describe(x) -> dict:
    return {**x, "Z": _Z(x).tolist()}


def _usable(Z) -> bool:
    from theorycheck.solvers.lp_limits import orthant_l1_max_margin

    try:
        orthant_l1_max_margin(Z)
        return True
    except Exception:
        return False


#: checkpoints s = log max β_j of the first flow, and of the longer one run when the first is undecided
CHECKPOINTS = tuple(float(c) for c in range(2, 17, 2))
LONG_CHECKPOINTS = tuple(float(c) for c in range(2, 41, 2))
#: the flows' budget, in right-hand-side evaluations (not seconds: a verdict must not depend on load)
MAX_EVALUATIONS = 20_000


def _flow(x, checkpoints=CHECKPOINTS):
    from theorycheck.solvers.lp_flow import DEFAULT_BUDGET, flow_margin

    return flow_margin(_Z(x), depth=x["depth"], loss=x["loss"], alpha=x.get("alpha", 1.0), checkpoints=checkpoints,
                       budget=DEFAULT_BUDGET.but(max_seconds=float("inf"), max_evaluations=MAX_EVALUATIONS))


def _followed(x, residuals, detail) -> Outcome:
    """The trend of ``residuals(directions)`` along the flow to the checkpoints :data:`CHECKPOINTS`,
    and when that is undecided, along the flow to :data:`LONG_CHECKPOINTS` (the directions recorded
    before a budget ran out are used when there are more of them)."""
    f = _flow(x)
    if f.status != "reached" or len(f.directions) < 4:
        return Outcome(None, detail={"flow_status": f.status})
    out = tends_to_zero(f.log_t, residuals(f.directions), {**detail, "checkpoints": len(f.directions),
                                                    "direction": f.directions[-1]})
    if out.ok is not None:
        return out
    g = _flow(x, LONG_CHECKPOINTS)
    if len(g.directions) <= len(f.directions):
        out.detail["long_flow_status"] = g.status
        return out
    return tends_to_zero(g.log_t, residuals(g.directions), {**detail, "checkpoints": len(g.directions),
                                                     "direction": g.directions[-1], "long_flow_status": g.status})


def _check_kkt(x, orthant: bool = False) -> Outcome:
    from theorycheck.solvers.lp_limits import kkt_residual

    Z = _Z(x)
    if not _usable(Z):
        return Outcome(None, detail={"why": "no β ≥ 0 separates the data (outside the claim's hypotheses)"})

    def residuals(directions):
        return [kkt_residual(d, Z, x["depth"], orthant=orthant)["residual"] for d in directions]

    out = _followed(x, residuals, {})
    if "direction" in out.detail:
        last = kkt_residual(out.detail["direction"], Z, x["depth"], orthant=orthant)
        out.detail.update({"normalised_beta": last["normalised_beta"], "multipliers": last["multipliers"]})
    return out


def _check_l1(x) -> Outcome:
    from theorycheck.solvers.lp_limits import kkt_residual, orthant_l1_max_margin

    Z = _Z(x)
    if not _usable(Z):
        return Outcome(None, detail={"why": "no β ≥ 0 separates the data (outside the claim's hypotheses)"})
    o = orthant_l1_max_margin(Z)

    def gaps(directions):
        return [abs(float(np.abs(kkt_residual(d, Z, 2)["normalised_beta"]).sum()) - o["l1_norm"]) / o["l1_norm"]
                for d in directions]

    return _followed({**x, "depth": 2}, gaps, {"l1_orthant": o["l1_norm"], "l1_unrestricted": o["unrestricted_l1_norm"],
                                               "beta_l1_orthant": o["beta"]})


TOLERANCE_RULE = ("extrapolated to log t = ∞ (Aitken's Δ²) within 3 s.e. + 1e-6 of 0 with 3 s.e. ≤ 1e-3; "
                  "fails only when the limit is > 1e-3 under every admissible rate model a + c·(log t or "
                  "log log t)^(−p) and the values stopped decreasing")
TOLERANCE_KKT = "KKT residual " + TOLERANCE_RULE

#: one example z = (−1, ½): the unrestricted ℓ1 max margin is β = (−1, 0) (norm 1), but a positive start
#: reaches only β ≥ 0, where the best is (0, 2) (norm 2)
NEGATIVE = {"Z": [[-1.0, 0.5]], "depth": 2, "loss": "exponential"}

_KKT_ORTHANT = Claim(
    key="LM.kkt.orthant",
    statement="from w_k(0) = α·1 the limit direction is a KKT point of min ‖β‖_{2/L} s.t. y_i⟨x_i, β⟩ ≥ 1, β ≥ 0 "
    "(the orthant the initialisation reaches; data separable within it)",
    inputs=_inputs(), check=functools.partial(_check_kkt, orthant=True),
    tolerance=TOLERANCE_KKT,
    pinned=(NEGATIVE, {**NEGATIVE, "depth": 3}), describe=_describe, max_examples=20)

CLAIMS = (
    Claim(key="LM.kkt",
          statement="gradient flow (exponential or logistic loss, separable data) converges in direction to a KKT "
          "point of min ‖β‖_{2/L} s.t. y_i⟨x_i, β⟩ ≥ 1",
          inputs=_inputs(), check=_check_kkt,
          tolerance=TOLERANCE_KKT,
          pinned=(NEGATIVE, {**NEGATIVE, "depth": 3}), refined=_KKT_ORTHANT, describe=_describe, max_examples=20),
    Claim(key="LM.l1",
          statement="L = 2: the limit direction is the ℓ1 max margin over the directions the initialisation reaches "
          "(β ≥ 0 from a positive balanced start)",
          inputs=_inputs(depths=(2,)), check=_check_l1,
          tolerance="relative ℓ1-norm gap at margin 1, " + TOLERANCE_RULE,
          pinned=(NEGATIVE,), describe=_describe, max_examples=20),
)


def claims() -> list[Claim]:
    return list(CLAIMS)
