"""What the pack ``lp-margin`` predicts for one input (``theorycheck predict --pack lp-margin``)."""

from __future__ import annotations

import numpy as np

from theorycheck.record import Keys
from theorycheck.strength import KEYS as STRENGTH_KEYS

#: what :func:`predict` returns (meanings: docs/commands/predict.md)
KEYS = Keys("predict.lp-margin", "beta", "objective", "kkt_residual", "depth", "vertices_tried", "multipliers",
            "beta_l1_orthant", "l1_orthant", "beta_l1_unrestricted", "l1_unrestricted", strength=STRENGTH_KEYS)


def predict(X, y, *, depth: int = 2, loss: str = "exponential", **_ignored) -> dict:
    """The global ℓ_{2/L} max margin over the reachable orthant (vertex enumeration) with its KKT
    residual, and (L = 2) the orthant and unrestricted ℓ1 max margins."""
    from theorycheck.solvers.lp_limits import kkt_residual, lp_vertex_solution, orthant_l1_max_margin

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
