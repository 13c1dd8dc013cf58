"""Pack ``lp-margin``: depth-L diagonal networks trained by gradient descent (flow) on separable
data with the exponential or logistic loss converge in direction to a KKT point of
min ‖β‖_{2/L} s.t. y_i⟨x_i, β⟩ ≥ 1 (Gunasekar, Lee, Soudry, Srebro, NeurIPS 2018; Lyu & Li,
ICLR 2020). THEORY.md beside this file.

Theorems: LM1 (a positive balanced start stays positive and balanced), LM2 (KKT in the
layers ⇔ KKT of the ℓ_{2/L} problem on the support). Claims: LM.kkt (as the issue states it,
refined to LM.kkt.orthant) and LM.l1 (L = 2: the ℓ1 max margin over the reachable orthant).
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from hypothesis import strategies as st

from theorycheck.claims.claim import Claim, Outcome
from theorycheck.proofs._core import Identity, Theorem
from theorycheck.symbolic import regression as R
from theorycheck.symbolic.model import layer_symbols, predictor, product_of_others

DEPTHS = (2, 3, 4)


# ------------------------------------------------------------------------------- theorems
def _lm1():
    for L in DEPTHS:
        W = layer_symbols(L, 1)
        P = product_of_others(W)
        w = sp.Symbol("w", positive=True)
        eq = {W[k, 0]: w for k in range(L)}
        w0 = sp.Symbol("w0", real=True)
        yield Identity(f"L={L}: with equal layers w the common field −w^(L−1)·g vanishes at w = 0, so w > 0 stays "
                       "positive (unequal layers could cross 0)",
                       (-P[0, 0] * R.g).subs({W[k, 0]: w0 for k in range(L)}).subs(w0, 0), 0)
        yield Identity(f"L={L}: with equal layers all fields are equal (balance is kept): "
                       "d/dt(w_k − w_1) = 0 at w_k = w_1",
                       [(-P[k, 0] * R.g).subs(eq) for k in range(L)], [(-P[0, 0] * R.g).subs(eq)] * L)
        yield Identity(f"L={L}: in u = log w the balanced field is du/dt = {sp.sstr(R.balanced_product_log_field(L))}",
                       R.balanced_product_log_field(L), (-(w ** (L - 1)) * R.g / w).subs(w, sp.exp(R.up)))


def _lm2():
    s_ = sp.Symbol("s", real=True)  # s = Σ_i λ_i z_ij
    for L in DEPTHS:
        w = sp.Symbol("w", positive=True)
        W = layer_symbols(L, 1)
        beta = predictor(W)[0, 0]
        # min ‖w‖² s.t. margins ≥ 1: 2 w_k = s·∂β/∂w_k; at equal layers w: 2w = s w^(L−1) ⇒ s = 2 w^(2−L)
        s_w = sp.solve(sp.Eq(2 * w, s_ * (product_of_others(W)[0, 0]).subs({W[k, 0]: w for k in range(L)})), s_)[0]
        b = beta.subs({W[k, 0]: w for k in range(L)})
        # min Σ β^(2/L): (2/L) β^(2/L − 1) = μ s with μ = λ/(2/L)·… : proportional to s_w with a constant factor L
        yield Identity(f"L={L}: the layer KKT multiplier s = {sp.sstr(s_w)} equals L × the ℓ_(2/L) gradient "
                       "(2/L)β^(2/L−1) at β = w^L (so layer-KKT ⇔ β-KKT on the support, multipliers ×L)",
                       s_w, L * (sp.Rational(2, L) * b ** (sp.Rational(2, L) - 1)))


THEOREMS = (
    Theorem("LM1", "positive balanced start", "From w_k(0) = α·1 (α > 0) gradient flow keeps the layers equal and "
            "positive, so β = w^L ≥ 0: only the orthant β ≥ 0 is reachable.", _lm1),
    Theorem("LM2", "KKT in the layers and in β", "For balanced positive layers, the KKT conditions of min ‖w‖² s.t. "
            "y_i⟨x_i, β(w)⟩ ≥ 1 (Lyu & Li) are those of min ‖β‖_{2/L}^{2/L} on the support of β.", _lm2),
)


def theorems() -> list[Theorem]:
    return list(THEOREMS)


# ------------------------------------------------------------------------------- predictions
def predict(X, y, *, depth: int = 2, loss: str = "exponential", **_ignored) -> dict:
    """The global ℓ_{2/L} max margin over the reachable orthant (vertex enumeration) with its KKT
    residual, and (L = 2) the orthant and unrestricted ℓ1 max margins."""
    from theorycheck.solvers.lp_flow import kkt_residual, lp_vertex_solution, orthant_l1_max_margin

    X, y = np.atleast_2d(np.asarray(X, float)), np.asarray(y, float).ravel()
    if not np.all(np.isin(y, (-1.0, 1.0))):
        from theorycheck.errors import TheorycheckError

        raise TheorycheckError("lp-margin needs labels y = ±1")
    Z = y[:, None] * X
    v = lp_vertex_solution(Z, int(depth))
    k = kkt_residual(np.array(v["beta"]), Z, int(depth), orthant=True)
    out = {"beta": v["beta"], "objective": v["objective"], "kkt_residual": k["residual"], "depth": int(depth),
           "vertices_tried": v["vertices_tried"], "multipliers": k["multipliers"]}
    if int(depth) == 2:
        o = orthant_l1_max_margin(Z)
        out.update({"beta_l1_orthant": o["beta"], "l1_orthant": o["l1_norm"],
                    "beta_l1_unrestricted": o["unrestricted_beta"], "l1_unrestricted": o["unrestricted_l1_norm"]})
    return out


# ------------------------------------------------------------------------------- claims
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
    from theorycheck.solvers.lp_flow import orthant_l1_max_margin

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


def _trend(log_t, values, detail) -> Outcome:
    """Decide whether the values (a residual ≥ 0 at the checkpoints) tend to 0.

    holds: Aitken's Δ² limit (:func:`aitken_limit`) is within 3 error bars + 1e-6 of 0 and those 3
    error bars are ≤ 1e-3 (the limit is resolved to the fails bound: a noisy extrapolation, e.g. a
    residual that bounces around 4e-3 with an error bar as large, is not evidence of 0), or the last
    value is below 1e-9. fails only when all three say the limit is positive: Aitken's limit exceeds
    3 error bars + 1e-3; the rate model a + c·r^(−p), p > 0, fitted to the last 5 checkpoints with r
    = log t and with r = log log t (directional convergence can be that slow, and the exponent is
    not known) has a − 3 s.e. > 1e-3 for every admissible p of both (:func:`power_limit`); and the
    sequence has stopped decreasing (its last step is within 3 of Aitken's error bars). Otherwise
    inconclusive: a sequence still falling is no evidence of a nonzero limit."""
    from theorycheck.solvers.lp_flow import aitken_limit, power_limit

    a, se = aitken_limit(values)
    fits = {"log_t": power_limit(log_t, values), "log_log_t": power_limit(np.log(log_t), values)}
    step = float(values[-2] - values[-1]) if len(values) >= 2 else float("inf")
    stalled = abs(step) <= 3 * se
    detail.update({"log_t": log_t, "values": values, "intercept": a, "intercept_se": se,
                   "rate_fits": fits, "last_step": step, "stopped_decreasing": stalled})
    if values[-1] <= 1e-9 or (abs(a) <= 3 * se + 1e-6 and 3 * se <= 1e-3):
        return Outcome(True, abs(a), detail)
    if a > 3 * se + 1e-3 and stalled and all(f["a_low"] > 1e-3 for f in fits.values()):
        return Outcome(False, abs(a), detail)
    detail["undecided_because"] = ("the values are still decreasing" if not stalled else
                                   "a rate model admits a limit ≤ 1e-3" if a > 3 * se + 1e-3 else
                                   "the extrapolated limit is between the holds and fails bounds" if 3 * se <= 1e-3
                                   else "the extrapolation's error bar exceeds 1e-3")
    return Outcome(None, abs(a), detail)


def _flow(x, checkpoints=CHECKPOINTS):
    from theorycheck.solvers.lp_flow import flow_margin

    return flow_margin(_Z(x), depth=x["depth"], loss=x["loss"], alpha=x.get("alpha", 1.0), checkpoints=checkpoints,
                       max_seconds=float("inf"), max_evaluations=MAX_EVALUATIONS)


def _followed(x, residuals, detail) -> Outcome:
    """The trend of ``residuals(directions)`` along the flow to the checkpoints :data:`CHECKPOINTS`,
    and when that is undecided, along the flow to :data:`LONG_CHECKPOINTS` (the directions recorded
    before a budget ran out are used when there are more of them)."""
    f = _flow(x)
    if f.status != "reached" or len(f.directions) < 4:
        return Outcome(None, detail={"flow_status": f.status})
    out = _trend(f.log_t, residuals(f.directions), {**detail, "checkpoints": len(f.directions),
                                                    "direction": f.directions[-1]})
    if out.ok is not None:
        return out
    g = _flow(x, LONG_CHECKPOINTS)
    if len(g.directions) <= len(f.directions):
        out.detail["long_flow_status"] = g.status
        return out
    return _trend(g.log_t, residuals(g.directions), {**detail, "checkpoints": len(g.directions),
                                                     "direction": g.directions[-1], "long_flow_status": g.status})


def _check_kkt(x, orthant: bool = False) -> Outcome:
    from theorycheck.solvers.lp_flow import kkt_residual

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
    from theorycheck.solvers.lp_flow import kkt_residual, orthant_l1_max_margin

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
    inputs=_inputs(), check=lambda x: _check_kkt(x, orthant=True),
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
