"""C5's regimes in α (L = 2, ℓ2-SAM, one example), as claims: three regimes (collapse below α_c, sequential
amplification between α_c and α_GD-like, GD-like above), the saddle at α = α_c, and α_c's bounds
ρ z_min/(√2‖z‖) < α_c < ρ z_max/(√2‖z‖). Each is checked against the full flow and α_c's checked bracket, and the
regimes and bounds are proved on α boxes (:mod:`theorycheck.proofs.minor_first.box_claims`). The start-of-training
conditions and C5's derivation are :mod:`theorycheck.proofs.minor_first.c5`.
"""

from __future__ import annotations

import functools
import math

__all__ = ["l2_setting", "regime_claims"]


# Each claim: its check and its strategy are module functions (numpy, hypothesis and the solvers
# are imported inside them, so that `theorycheck prove` stays symbolic); _c5_claims assembles them.
def l2_setting(x, alpha=None):
    """The ℓ2-SAM, L = 2 setting of a claim's input (z, ρ, α; ``alpha`` replaces the input's)."""
    from theorycheck.setting import Setting

    return Setting.from_z(x["z"], depth=2, optimizer="sam-l2", rho=x["rho"], alpha=x["alpha"] if alpha is None else alpha)


def _classify_full(x, alpha):
    """Collapse or not, with the FULL d-dimensional flow (independent of C4's reduction)."""
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num

    z = np.array(x["z"])
    tr = num.solve(l2_setting(x, alpha), 200.0 / z.min(), method="scipy")
    if tr.collapsed:
        return True, tr
    if not tr.successful:
        return None, tr
    return (False if _final_norm(z, tr.log_abs_beta[-1]) >= x["rho"] * z.max() else None), tr


def _final_norm(z, log_abs_beta) -> float:
    """N = (Σ_j 2 z_j² u_j²)^½ at β_j = u_j² (L = 2), from the symbolic layer's ln(term j of N²)
    (:func:`closed_forms.balanced_log_norm_summand` at θ = ln|β|/2) and ln N of their logsumexp."""
    import numpy as np

    from theorycheck.symbolic import forms as C

    with np.errstate(divide="ignore"):
        terms = C.balanced_log_field(2, "sam-l2").log_summand(z, np.asarray(log_abs_beta) / 2)
    return float(np.exp(C.log_norm("numpy")(np.logaddexp.reduce(terms))))


def _sequential_problem(x, ac: float, hi: float, rows: dict) -> str | None:
    """At the geometric middle of (α_c, alpha_gd_like): j† starts below the major value and ends on it."""
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num

    z = np.array(x["z"])
    mid = float(np.sqrt(ac * hi)) if ac > 0 else hi / 2
    tr = num.solve(l2_setting(x, mid), 200.0 / z.min(), method="scipy")
    sw = num.switches(tr)
    first = num.index_at(tr, min(1e-6, tr.t_end))
    rows["regime2_switches"] = [list(s_) for s_ in sw]
    if tr.collapsed or z[first - 1] == z.max() or not sw or z[sw[-1][2] - 1] != z.max():
        return f"α = {mid:.6g} in (α_c, α_gd_like) is not sequential amplification"
    return None


def _check_regimes(x):
    import numpy as np
    from theorycheck.proofs.minor_first.predict import alpha_c as AC
    from theorycheck.proofs.minor_first.predict import thresholds as th

    from theorycheck.claims.claim import Outcome

    z, r = np.array(x["z"]), x["rho"]
    # no seconds budget: the certificate's work is bounded by its Taylor step budget (a verdict must
    # not depend on the host's load)
    ac = AC.collapse_threshold(z, r, digits=10, max_seconds=math.inf)
    if ac.value is None:
        return Outcome(None, detail={"alpha_c": ac.note})
    lo, hi = th.alpha_all_shrink(z, r).value, th.alpha_gd_like(z, r).value
    problems, rows = [], {}
    if not lo <= ac.value * (1 + 1e-9) and ac.value <= hi * (1 + 1e-9):
        problems.append("α_c outside [alpha_all_shrink, alpha_gd_like]")
    for f in (1 - 1e-2, 1 - 1e-6, 1 + 1e-6, 1 + 1e-2):
        c, tr = _classify_full(x, ac.value * f)
        rows[f"collapse at alpha_c*{f}"] = c
        if c is None:
            return Outcome(None, detail={"alpha": ac.value * f, "stopped_because": tr.stopped_because})
        if c != (f < 1):
            problems.append(f"α = α_c·{f}: collapse = {c}")
    if ac.value < hi and (p := _sequential_problem(x, ac.value, hi, rows)) is not None:
        problems.append(p)
    rows.update(alpha_c=ac.value, alpha_all_shrink=lo, alpha_gd_like=hi)
    return Outcome(not problems, float(len(problems)), {**rows, "problems": problems})


def _zr():
    from hypothesis import strategies as st

    from theorycheck.claims import strategies as tcs

    @st.composite
    def zr(draw):
        z = draw(tcs.single_examples(d=(2, 4), min_value=0.5, max_value=4.0, sort=True))
        return {"z": z.tolist(), "rho": draw(st.floats(0.2, 2.0))}

    return zr()


def _zonly():
    import numpy as np
    from hypothesis import strategies as st

    from theorycheck.claims import strategies as tcs

    @st.composite
    def zonly(draw):
        z = draw(tcs.single_examples(d=(2, 4), min_value=0.5, max_value=4.0, ties=True, sort=True))
        if np.all(z == z[0]):
            z = np.append(z, z[0] + 1.0)
        return {"z": z.tolist(), "rho": draw(st.floats(0.2, 2.0))}

    return zonly()


def _check_saddle(x):
    """At α_c (18 digits, both ends checked) the reduced flow, integrated at 30 digits, reaches N ≈ ρ z_min with
    all of N carried by the z_min coordinates, and stays there for a time ≈ ln(1e14)/z_min."""
    import mpmath as mp
    import numpy as np
    from theorycheck.proofs.minor_first.predict import alpha_c as AC
    from theorycheck.proofs.minor_first.predict import reduced_taylor as col

    from theorycheck.claims.claim import Outcome

    z, r = np.array(x["z"]), x["rho"]
    t = AC.collapse_threshold(z, r, digits=18, max_seconds=math.inf)  # bounded by its step budget
    if t.value is None:
        return Outcome(None, detail={"alpha_c": t.note})
    zs = np.ldexp(z, -int(np.frexp(z.max())[1]))  # the same exact scaling the α_c routine uses
    zm = float(zs.min())
    T = 14 * math.log(10) / zm  # a deviation of 1e-18 grows to ~1e-4 by then
    with mp.workdps(30):
        a = mp.mpf(t.value_text) / mp.mpf(r)
        fate = col.ReducedFlow(zs, 30).run(a, T, lower=0.2)
        if not fate.at_horizon:
            return Outcome(False, 1.0, {"outcome": fate.fate, "time": float(fate.tau)})
        x_min = float(fate.q * mp.exp(zm * fate.tau))  # N_min/(ρ z_min) − 1
        n_dev = float(fate.N / zm - 1)  # N/(ρ z_min) − 1
    dev = max(abs(x_min), abs(n_dev))
    k = int(np.sum(z == z.min()))
    return Outcome(dev < 1e-3, dev, {"alpha_c": t.value_text, "tau": T, "N_over_rho_zmin_minus_1": n_dev,
                                     "Nmin_over_rho_zmin_minus_1": x_min,
                                     "saddle": f"u = ρ/√(2·{k}) on the z_min coordinates, 0 elsewhere"})


def _alpha_c_bounds(z, r) -> tuple[float, float]:
    """ρ z_min/(√2‖z‖) and ρ z_max/(√2‖z‖): the α where N0 = α√2‖z‖ meets C5's collapse certificate
    ρ z_min and its no-collapse certificate ρ z_max — :func:`theory_exprs.alpha_all_shrink` (the
    solution of N0 = ρ z_min, compiled) at z_min and at z_max."""
    import numpy as np

    from theorycheck.symbolic import theory_forms as MF


    f, nrm = MF.alpha_all_shrink("numpy"), float(np.linalg.norm(z))
    return float(f(float(z.min()), nrm, r)), float(f(float(z.max()), nrm, r))


def _check_bounds(x, which: str):
    import numpy as np
    from theorycheck.proofs.minor_first.predict import alpha_c as AC
    from theorycheck.proofs.minor_first.predict import thresholds as th

    from theorycheck.claims.claim import Outcome

    z, r = np.array(x["z"]), x["rho"]
    t = AC.collapse_threshold(z, r, digits=8, max_seconds=math.inf)  # bounded by its step budget
    if t.value is None:
        return Outcome(None, detail={"alpha_c": t.note})
    lo, hi = (float(v) for v in t.check["bracket"])
    b_lo, b_hi = _alpha_c_bounds(z, r)
    gd = th.alpha_gd_like(z, r).value
    if which == "theory":
        ok = b_lo < lo and hi < gd
    else:
        ok = b_lo < lo and hi <= b_hi * (1 + 1e-15) and (b_hi <= gd or z.size == 1)
    return Outcome(ok, 0.0 if ok else 1.0, {"alpha_c": t.value, "rho_zmin_over_sqrt2_norm": b_lo,
                                             "rho_zmax_over_sqrt2_norm": b_hi, "alpha_gd_like": gd,
                                             "alpha_c_over_lower": t.value / b_lo,
                                             "alpha_c_over_upper": t.value / b_hi})


def regime_claims() -> list:
    """C5.regimes, C5.saddle and C5.alpha-c-bounds, in THEORY.md's order (C5's claims list them after its start
    claims, :func:`theorycheck.proofs.minor_first.c5.claims`)."""
    from theorycheck.proofs.minor_first import box_claims as bc

    from theorycheck.claims.claim import Claim

    return [Claim(
        key="C5.regimes",
        statement="ℓ2-SAM, L = 2: three regimes in α: collapse for α < α_c; sequential amplification (j† starts "
                  "below the major coordinate and ends on it) for α_c < α < α_gd_like; GD-like above",
        inputs=_zr(), check=_check_regimes, pinned=[{"z": [1.0, 2.0, 3.0], "rho": 1.0}], max_examples=3,
        # one α box per regime for the pinned z (α_c = 0.43640…, alpha_gd_like = 0.94491…)
        prover=bc.alpha_box_prover([1.0, 2.0, 3.0], 1.0, [
            ("0.3", "0.31", bc.regime("collapse", [1, 2, 3]), "collapse (α < α_c)"),
            ("0.5", "0.51", bc.regime("sequential", [1, 2, 3]), "sequential amplification (α_c < α < α_gd_like)"),
            ("0.96", "1", bc.regime("gd-like", [1, 2, 3]), "GD-like (α ≥ α_gd_like)")]),
        tolerance="α_c to 10 checked digits; the FULL flow must collapse at α_c·(1 − 1e-6), "
                  "(1 − 1e-2) and not at α_c·(1 + 1e-6), (1 + 1e-2)",
    ), Claim(
        key="C5.saddle",
        statement="ℓ2-SAM, L = 2: at α = α_c the path tends to the saddle u* = (ρ/√(2k)) on the k coordinates of "
                  "z_min (0 elsewhere), where N = ρ z_min; eigenvalues z_min (unstable) and z_j(1 − z_j/z_min) (theorycheck "
                  "prove C5)",
        inputs=_zonly(), check=_check_saddle, pinned=[{"z": [1.0, 2.0, 3.0], "rho": 1.0}], max_examples=3,
        tolerance="|N/(ρ z_min) − 1| and |N_min/(ρ z_min) − 1| < 1e-3 at τ = 14 ln 10 / z_min (30-digit integration "
                  "from the 18-digit α_c)",
    ), Claim(
        key="C5.alpha-c-bounds",
        statement="ℓ2-SAM, L = 2: ρ z_min/(√2‖z‖) < α_c < ρ z_max/(√2‖z‖) ≤ alpha_gd_like (the upper bound: N0 ≥ ρ z_max "
                  "makes every rate ≥ 0, and that persists; it is sharper than alpha_gd_like)",
        inputs=_zonly(), check=functools.partial(_check_bounds, which="sharp"),
        pinned=[{"z": [1.0, 2.0, 3.0], "rho": 1.0}, {"z": [1.0, 1.0, 3.0], "rho": 0.5}],
        max_examples=4, tolerance="strict inequalities against α_c's checked bracket (8 digits)",
        # every α of [0.188, 0.19] collapses and every α of [0.5, 0.51] grows: the boundary lies in (0.19, 0.5),
        # strictly inside (ρ z_min, ρ z_max)/(√2‖z‖) = (0.18898…, 0.56694…) for z = (1, 2, 3), ρ = 1
        prover=bc.alpha_box_prover([1.0, 2.0, 3.0], 1.0, [
            ("0.188", "0.19", bc.regime("collapse", [1, 2, 3]), "collapse just above ρ z_min/(√2‖z‖) = 0.18898…"),
            ("0.5", "0.51", lambda p: p.fate == "growth", "growth below ρ z_max/(√2‖z‖) = 0.56694…")]),
    )]
