"""What the pack ``kernel-rich`` predicts for one input (``theorycheck predict --pack kernel-rich``)."""

from __future__ import annotations

from theorycheck.record import Keys
from theorycheck.strength import KEYS as STRENGTH_KEYS

#: what :func:`predict` returns (meanings: docs/commands/predict.md)
KEYS = Keys("predict.kernel-rich", "beta", "beta_l1", "beta_l2", "objective", "constraint_residual", "status",
            "iterations", "l1_norm", "l1_unique", "l1_kkt_residual", "l2_norm", "depth", "alpha", strength=STRENGTH_KEYS)


def predict(X, y, *, depth: int = 2, alpha: float = 1.0, **_ignored) -> dict:
    """The pack's predicted limit: argmin Q_α (``beta``), min-ℓ1 and min-ℓ2 interpolators."""
    from theorycheck.solvers.interpolate import argmin_Q, min_l1, min_l2
    from theorycheck.solvers.pm_flow import check_regression_data

    X, y = check_regression_data(X, y)
    q = argmin_Q(X, y, depth=depth, alpha=alpha)
    l1, l2 = min_l1(X, y), min_l2(X, y)
    return {"beta": q.beta.tolist(), "beta_l1": l1.beta.tolist(), "beta_l2": l2.beta.tolist(),
            "objective": q.objective, "constraint_residual": q.constraint_residual, "status": q.status,
            "iterations": q.iterations, "l1_norm": l1.objective, "l1_unique": l1.unique,
            "l1_kkt_residual": l1.kkt_residual, "l2_norm": l2.objective, "depth": int(depth), "alpha": float(alpha)}
