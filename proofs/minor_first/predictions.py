"""What the pack ``minor-first`` predicts for one example z = y·x (``theorycheck predict --pack minor-first``):
the limit direction and index of the flow from the uniform initialisation α·1 (C2, C3, C4, C6) and the
initial dominant index j†(0+) (C5), from the refined statements the tool checks, not the paper's as stated."""

from __future__ import annotations

import numpy as np

from theorycheck.errors import TheorycheckError
from theorycheck.record import Keys
from theorycheck.strength import KEYS as STRENGTH_KEYS

__all__ = ["KEYS", "predict"]

#: what :func:`predict` returns (meanings: docs/commands/predict.md)
KEYS = Keys("predict.minor-first", "optimizer", "depth", "rho", "alpha", "alpha_collapse", "initial_index",
            "limit_index", "limit_direction", "rests_on", strength=STRENGTH_KEYS)


def _example(X, y) -> np.ndarray:
    X = np.atleast_2d(np.asarray(X, float))
    y = np.asarray(y, float).reshape(-1)
    if X.shape[0] != 1 or y.size != 1:
        raise TheorycheckError("minor-first predicts for one example (one row of X, one label y)")
    if y[0] not in (-1.0, 1.0):
        raise TheorycheckError("minor-first needs a label y = ±1")
    return y[0] * X[0]


def _top(z: np.ndarray) -> tuple[int, list[float]]:
    """The limit of GD and of ℓ2-SAM above α_c: ∝ 1 over the coordinates tied at max z (C6 and C4
    refined: equal z_j stay equal along the flow), as a unit vector, and its smallest index."""
    top = z == z.max()
    return int(np.flatnonzero(top)[0]) + 1, (top / np.sqrt(top.sum())).tolist()


def predict(X, y, *, optimizer: str = "sam-l2", rho: float = 1.0, alpha: float = 1.0, depth: int = 2,
            **_ignored) -> dict:
    """The predicted limit of one example's flow from α·1: ``limit_index`` (1-based; 0: the zero
    vector, collapse), ``limit_direction``, and for ℓ2-SAM the regime of α against α_c (floating point,
    L = 2) and j†(0+). GD: argmax z (C6); ℓ∞-SAM: the refined C2/C3 limit; ℓ2-SAM, L = 2: the ℓ1 max
    margin e_(argmax z) above α_c, 0 below (C4 refined)."""
    from theorycheck.proofs.minor_first.predict import alpha_c as AC
    from theorycheck.proofs.minor_first.predict import thresholds as th

    from theorycheck.setting import Setting

    z = _example(X, y)
    Setting.from_z(z, depth=depth, optimizer=optimizer, rho=rho, alpha=alpha)  # validates
    d = z.size
    out: dict = {"optimizer": optimizer, "depth": int(depth), "rho": float(rho), "alpha": float(alpha)}
    if optimizer == "gd":
        i, direction = _top(z)
        return {**out, "limit_index": i, "limit_direction": direction, "rests_on": "C6.gd-refined"}
    if optimizer == "sam-linf":
        a = np.full(d, float(alpha))
        return {**out, "limit_index": th.linf_prediction(z, a, rho, depth),
                "limit_direction": th.linf_limit_direction(z, a, rho, depth).tolist(),
                "rests_on": "C2.limit-refined" if depth == 2 else "C3.winner-refined"}
    if depth != 2 or np.any(z <= 0):
        raise TheorycheckError("minor-first predicts ℓ2-SAM's limit at L = 2 for z > 0 (use thresholds for L ≥ 3)")
    ac = AC.collapse_threshold(z, rho, digits=6)
    if ac.value is None:
        raise TheorycheckError(f"α_c could not be decided for z = {z.tolist()}, ρ = {rho}")
    lo, hi = (float(x) for x in ac.check["bracket"]) if ac.check else (ac.value, ac.value)
    if lo < alpha < hi:
        raise TheorycheckError(f"α = {alpha} lies in α_c's bracket [{lo}, {hi}]: the fate is not decided here")
    i, direction = _top(z) if alpha >= hi else (0, [0.0] * d)
    return {**out, "alpha_collapse": ac.value, "initial_index": th.initial_index(z, alpha, rho),
            "limit_index": i, "limit_direction": direction, "rests_on": "C4.limit-refined"}
