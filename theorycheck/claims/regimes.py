"""Where an initialisation lies among the regimes of one example (C2, C3, C5): the regime
thresholds in α — closed forms where THEORY.md gives one, computed where not — and, for a
given α, its regime and the trajectory's switches. :func:`thresholds` is what
``theorycheck thresholds`` prints."""

from __future__ import annotations

import numpy as np

from theorycheck.claims import thresholds as th
from theorycheck.errors import TheorycheckError
from theorycheck.report.record import Record
from theorycheck.setting import Setting, parse_floats

__all__ = ["REGIMES", "ThresholdsResult", "thresholds"]


class ThresholdsResult(Record):
    """Keys (as the README documents): optimizer, depth, z, rho; ℓ2-SAM: alpha_all_shrink,
    alpha_gd_like, alpha_collapse (each {value, closed_form, expression, note, …}); with α:
    alpha, initial_index, regime, regime_name and the trajectory's initial_index,
    final_index, switches, collapsed, collapse_time, blowup_time, stopped_because,
    time_kind (and warning when α is inside α_c's bracket); ℓ∞-SAM: alpha, grows,
    stationary, predicted_index, predicted_direction, blowup_times (L ≥ 3); GD:
    predicted_index."""


REGIMES = {1: "collapse (the predictor goes to 0, the loss does not vanish)",
           2: "sequential amplification (minor features before the major one; near α_c the path first moves "
              "to a more minor feature: verify's C4.sequential)",
           3: "GD-like (straight to the major feature)"}


def _trajectory_facts(setting: Setting, t_max: float) -> dict:
    from theorycheck.observe import summary
    from theorycheck.solve.integrate import solve

    tr = solve(setting, t_max=t_max)
    s = summary(tr)
    return {k: s[k] for k in ("initial_index", "final_index", "switches", "collapsed", "collapse_time",
                              "blowup_time", "stopped_because", "time_kind")}


def thresholds(z, rho: float, *, optimizer: str = "sam-l2", alpha=None, depth: int = 2,
               t_max: float | None = None) -> ThresholdsResult:
    """The regime thresholds in α for one example ``z`` (what ``theorycheck thresholds``
    reports). ℓ2-SAM (L = 2, z > 0): ``alpha_all_shrink`` and ``alpha_gd_like`` (closed forms)
    and ``alpha_collapse`` (α_c, certified bisection); with a scalar ``alpha``: its initial
    index, regime (1 collapse, 2 sequential amplification, 3 GD-like) and the trajectory's
    switches up to ``t_max`` (rescaled τ, default 40/min|z_j|). ℓ∞-SAM (``alpha`` needed):
    per-coordinate growth, the predicted limit index and direction, blow-up times for L ≥ 3.
    GD: the predicted limit index."""
    if isinstance(z, str):
        z = parse_floats(z, "z")
    if isinstance(alpha, str):
        a = parse_floats(alpha, "alpha")
        alpha = float(a[0]) if a.size == 1 else a
    z = np.asarray(z, float).reshape(-1)
    out: dict = {"optimizer": optimizer, "depth": depth, "z": z, "rho": rho}
    if alpha is not None:
        s = Setting.from_z(z, depth=depth, optimizer=optimizer, rho=rho, alpha=alpha)  # validates
    else:
        Setting.from_z(z, depth=depth, optimizer=optimizer, rho=rho)
    T = t_max or 40.0 / float(np.min(np.abs(z[z != 0])))
    if optimizer == "sam-l2":
        if depth != 2:
            raise TheorycheckError("the ℓ2-SAM regime thresholds (C5) are derived for depth L = 2: use --depth 2")
        if np.any(z <= 0):
            raise TheorycheckError("the ℓ2-SAM thresholds are computed for z > 0 (a balanced network has β = u² ≥ 0)")
        ac = th.collapse_threshold(z, rho)
        out.update(alpha_all_shrink=th.alpha_all_shrink(z, rho).to_dict(),
                   alpha_gd_like=th.alpha_gd_like(z, rho).to_dict(),
                   alpha_collapse=ac.to_dict())
        if alpha is not None:
            a = float(np.asarray(alpha).reshape(-1)[0])
            if np.size(alpha) != 1:
                raise TheorycheckError("give one scalar --alpha for ℓ2-SAM (uniform init)")
            out["alpha"] = a
            out["initial_index"] = th.initial_index(z, a, rho)
            gd = out["alpha_gd_like"]["value"]
            out["regime"] = 1 if a < ac.value else (3 if a >= gd else 2)
            out["regime_name"] = REGIMES[out["regime"]]
            out.update(_trajectory_facts(s, T))
            if (out["regime"] == 1) != out["collapsed"]:
                out["warning"] = ("α is within the bisection bracket of α_c: the regime from α_c and the trajectory's "
                                  "fate disagree")
        return ThresholdsResult(out)
    if optimizer == "sam-linf":
        if alpha is None:
            raise TheorycheckError("ℓ∞-SAM thresholds are per coordinate (α_j > ρ): give --alpha")
        a = np.broadcast_to(np.asarray(alpha, float), z.shape)
        out["alpha"] = a
        out["grows"] = (a > rho).tolist()
        out["stationary"] = (a == rho).tolist()
        out["predicted_index"] = th.linf_prediction(z, a, rho, depth)
        out["predicted_direction"] = th.linf_limit_direction(z, a, rho, depth)
        if depth >= 3:
            with np.errstate(divide="ignore", invalid="ignore"):
                ts = np.where(a > rho, 1.0 / ((depth - 2) * z * (a - rho) ** (depth - 2)), np.inf)
            out["blowup_times"] = [float(t) if np.isfinite(t) else None for t in ts]
        out.update(_trajectory_facts(s, T))
        return ThresholdsResult(out)
    out["predicted_index"] = int(np.argmax(z)) + 1
    if alpha is not None:
        out.update(_trajectory_facts(s, T))
    return ThresholdsResult(out)
