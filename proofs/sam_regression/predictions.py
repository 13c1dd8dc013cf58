"""What the pack ``sam-regression`` predicts for one input (``theorycheck predict --pack sam-regression``)."""

from __future__ import annotations

import numpy as np


def predict(X, y, *, alpha=0.1, rho: float = 0.1, optimizer=None, param: str = "uv", **_ignored) -> dict:
    """The predicted limit of ``optimizer`` (default n-SAM) from scale ``alpha`` (one number or one per
    coordinate): argmin{Q_q(β) : Xβ = y} at the potential scale q of the effective scale c∞ that the flow
    reaches (SR1–SR2: exact when the flow interpolates; the scale is read off the flow's final state), beside
    GD's (argmin at the scale of α) and the minimum-ℓ1 interpolator."""
    from theorycheck.proofs.sam_regression import runs

    from theorycheck.optimizers import GD, N_SAM, get
    from theorycheck.solvers.interpolate import min_l1
    from theorycheck.solvers.regression import alpha_vector, check_regression_data, solve_regression

    X, y = check_regression_data(X, y)
    opt = N_SAM if optimizer is None else get(optimizer)
    a = alpha_vector(alpha, X.shape[1])
    fl = solve_regression(X, y, param=param, optimizer=opt, rho=float(rho), alpha=a, t_max=runs.T_MAX,
                          rtol=runs.RTOL, budget=runs._budget())
    lim = runs.limit(X, y, fl.potential_scale)
    gd = solve_regression(X, y, param=param, optimizer=GD, rho=0.0, alpha=a, t_max=runs.T_MAX, rtol=runs.RTOL,
                          budget=runs._budget())
    gd_lim = runs.limit(X, y, gd.potential_scale)
    l1 = min_l1(X, y)
    beta = None if lim.beta is None else lim.beta.tolist()
    return {"beta": beta, "effective_scale": fl.effective_scale.tolist(),
            "potential_scale": fl.potential_scale.tolist(), "limit_status": lim.status,
            "limit_message": lim.message, "limit_error_bar": lim.error_bar, "flow_beta": fl.beta.tolist(),
            "flow_status": fl.status, "flow_error_bar": fl.error_bar, "flow_residual": fl.residual,
            "beta_gd": None if gd_lim.beta is None else gd_lim.beta.tolist(), "beta_l1": l1.beta.tolist(),
            "l1_norm": None if lim.beta is None else float(np.abs(lim.beta).sum()),
            "l1_norm_gd": None if gd_lim.beta is None else float(np.abs(gd_lim.beta).sum()),
            "l1_norm_min": l1.objective, "optimizer": opt.name, "param": param, "rho": float(rho),
            "alpha": a.tolist()}
