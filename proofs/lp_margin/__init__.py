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
    from theorycheck.solve.lp_flow import kkt_residual, lp_vertex_solution, orthant_l1_max_margin

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
    from theorycheck.solve.lp_flow import orthant_l1_max_margin

    try:
        orthant_l1_max_margin(Z)
        return True
    except Exception:
        return False


def _trend(log_t, values, detail) -> Outcome:
    """Extrapolate the values to t = ∞ (Aitken's Δ² over the last checkpoints; the rate is a
    power of 1/log t whose exponent depends on the data): holds when the limit is within 3 error
    bars + 1e-6 of 0, or the last value is below 1e-9; fails when it exceeds that and 1e-3;
    inconclusive in between."""
    from theorycheck.solve.lp_flow import aitken_limit

    a, se = aitken_limit(values)
    detail.update({"log_t": log_t, "values": values, "intercept": a, "intercept_se": se})
    if values[-1] <= 1e-9 or abs(a) <= 3 * se + 1e-6:
        return Outcome(True, abs(a), detail)
    if a > 3 * se + 1e-3:
        return Outcome(False, abs(a), detail)
    return Outcome(None, abs(a), detail)


def _flow(x):
    from theorycheck.solve.lp_flow import flow_margin

    return flow_margin(_Z(x), depth=x["depth"], loss=x["loss"], alpha=x.get("alpha", 1.0), max_seconds=60.0)


def _check_kkt(x, orthant: bool = False) -> Outcome:
    from theorycheck.solve.lp_flow import kkt_residual

    Z = _Z(x)
    if not _usable(Z):
        return Outcome(None, detail={"why": "no β ≥ 0 separates the data (outside the claim's hypotheses)"})
    f = _flow(x)
    if f.status != "reached" or len(f.directions) < 4:
        return Outcome(None, detail={"flow_status": f.status})
    res = [kkt_residual(d, Z, x["depth"], orthant=orthant)["residual"] for d in f.directions]
    last = kkt_residual(f.directions[-1], Z, x["depth"], orthant=orthant)
    return _trend(f.log_t, res, {"direction": f.directions[-1], "normalised_beta": last["normalised_beta"],
                                 "multipliers": last["multipliers"]})


def _check_l1(x) -> Outcome:
    from theorycheck.solve.lp_flow import kkt_residual, orthant_l1_max_margin

    Z = _Z(x)
    if not _usable(Z):
        return Outcome(None, detail={"why": "no β ≥ 0 separates the data (outside the claim's hypotheses)"})
    o = orthant_l1_max_margin(Z)
    f = _flow({**x, "depth": 2})
    if f.status != "reached" or len(f.directions) < 4:
        return Outcome(None, detail={"flow_status": f.status})
    gaps = [abs(float(np.abs(kkt_residual(d, Z, 2)["normalised_beta"]).sum()) - o["l1_norm"]) / o["l1_norm"]
            for d in f.directions]
    return _trend(f.log_t, gaps, {"l1_orthant": o["l1_norm"], "l1_unrestricted": o["unrestricted_l1_norm"],
                                  "beta_l1_orthant": o["beta"]})


#: one example z = (−1, ½): the unrestricted ℓ1 max margin is β = (−1, 0) (norm 1), but a positive start
#: reaches only β ≥ 0, where the best is (0, 2) (norm 2)
NEGATIVE = {"Z": [[-1.0, 0.5]], "depth": 2, "loss": "exponential"}

_KKT_ORTHANT = Claim(
    key="LM.kkt.orthant",
    statement="from w_k(0) = α·1 the limit direction is a KKT point of min ‖β‖_{2/L} s.t. y_i⟨x_i, β⟩ ≥ 1, β ≥ 0 "
    "(the orthant the initialisation reaches; data separable within it)",
    inputs=_inputs(), check=lambda x: _check_kkt(x, orthant=True),
    tolerance="KKT residual extrapolated to log t = ∞ (linear in 1/log t) within 3 s.e. + 1e-6 of 0",
    pinned=(NEGATIVE, {**NEGATIVE, "depth": 3}), describe=_describe, max_examples=20)

CLAIMS = (
    Claim(key="LM.kkt",
          statement="gradient flow (exponential or logistic loss, separable data) converges in direction to a KKT "
          "point of min ‖β‖_{2/L} s.t. y_i⟨x_i, β⟩ ≥ 1",
          inputs=_inputs(), check=_check_kkt,
          tolerance="KKT residual extrapolated to log t = ∞ (linear in 1/log t) within 3 s.e. + 1e-6 of 0",
          pinned=(NEGATIVE, {**NEGATIVE, "depth": 3}), refined=_KKT_ORTHANT, describe=_describe, max_examples=20),
    Claim(key="LM.l1",
          statement="L = 2: the limit direction is the ℓ1 max margin over the directions the initialisation reaches "
          "(β ≥ 0 from a positive balanced start)",
          inputs=_inputs(depths=(2,)), check=_check_l1,
          tolerance="relative ℓ1-norm gap at margin 1, extrapolated to log t = ∞, within 3 s.e. + 1e-6 of 0",
          pinned=(NEGATIVE,), describe=_describe, max_examples=20),
)


def claims() -> list[Claim]:
    return list(CLAIMS)
