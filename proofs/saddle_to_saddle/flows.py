"""The flows at tiny α against the jump process (THEORY.md): observed jump times, their gaps, plateau
distances and the 1/ln(1/α) rate of the gaps.

Definitions (exact, so that every number below is reproducible):

- the k-th observed jump time t̂_k(α) is the first accelerated time t̃ where the loss L(β_α(t̃ ln(1/α))) falls
  to the midpoint ½(L(β^{k−1}) + L(β^k)) of the losses of consecutive saddles (β⁰ = 0; GD's loss never
  increases, so the time is well defined), searched after t̂_{k−1};
- its gap is t̂_k(α) − t̃_k (t̃_k exact, from :func:`jump_process`);
- the k-th plateau distance is ‖β_α(t̃) − β^k‖∞ at the plateau's middle t̃ = ½(t̃_k + t̃_{k+1}) (the last
  plateau: t̃_K + ½);
- the rate: least squares of gap = a + b/ln(1/α) over the scales, with the standard errors of a and b.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from theorycheck.proofs.saddle_to_saddle.algorithm import jump_process

from theorycheck.solvers.log_flow import log_flow
from theorycheck.status import Budget

#: the instance where a coordinate enters (t̃ = 1/6), leaves (2/9) and re-enters with the other sign (14/9)
LEAVES = {"X": [["0", "0", "-1"], ["-1", "-3", "1"]], "y": ["3", "-2"]}


def problem(x) -> tuple[list, list]:
    """The exact problem of a claim's input: ``X``, ``y`` as given, or the Gaussian problem of the seed rounded to
    2 decimals (strings: the numbers used are the decimals shown); every claim of the pack reads its input so."""
    if "X" in x:
        return x["X"], x["y"]
    rng = np.random.default_rng(x["seed"])
    X = np.round(rng.standard_normal((x["n"], x["d"])), 2)
    y = np.round(rng.standard_normal(x["n"]), 2)
    return [[f"{v:.2f}" for v in r] for r in X], [f"{v:.2f}" for v in y]


#: the scales of the experiment and of the claims (exact decimal strings)
ALPHAS = ("1e-4", "1e-10", "1e-30", "1e-100", "1e-300")
#: the budget of one float64 run (steps and evaluations; no clock)
BUDGET = Budget(max_steps=20_000, max_evaluations=400_000, max_seconds=math.inf)


def saddle_losses(p) -> list[Fraction]:
    """L(β⁰ = 0), L(β¹), …: the losses of the saddles in order."""
    y = p.y
    return [sum((v * v for v in y), Fraction(0)) / (2 * len(y))] + [j.loss for j in p.jumps]


def midpoints(p) -> list[Fraction]:
    L = saddle_losses(p)
    return [(a + b) / 2 for a, b in zip(L, L[1:])]


def horizon(p) -> float:
    return float(p.jumps[-1].time) + 0.5 if p.jumps else 1.0


def observe(X, y, alpha, p=None, *, budget: Budget = BUDGET) -> dict:
    """One scale: the observed jump times, gaps, gap·ln(1/α), plateau distances, the run's status."""
    p = p or jump_process(X, y)
    run = log_flow(X, y, alpha, t_max=horizon(p), budget=budget)
    times, t_prev = [], 0.0
    for level in midpoints(p):
        t = run.first_below(float(level), t_prev) if t_prev is not None else None
        times.append(t)
        t_prev = t
    lam = float(run.lam)
    ends = [float(j.time) for j in p.jumps[1:]] + [horizon(p)]
    dist = [float(np.max(np.abs(run.beta_at(0.5 * (float(j.time) + e)) - np.array([float(b) for b in j.beta]))))
            if e <= run.t else None for j, e in zip(p.jumps, ends)]
    gaps = [None if t is None else t - float(j.time) for t, j in zip(times, p.jumps)]
    return {"alpha": str(alpha), "lam": lam, "status": str(run.status), "steps": run.run.steps,
            "evaluations": run.run.evaluations, "observed": times, "gaps": gaps,
            "scaled_gaps": [None if g is None else g * lam for g in gaps], "plateau_distance": dist,
            "run": run}


def fit_rate(lams, gaps) -> dict:
    """gap = a + b/λ by least squares: a, b and their standard errors (residual-based; exact fit: 0)."""
    x = 1.0 / np.asarray(lams, dtype=float)
    g = np.asarray(gaps, dtype=float)
    A = np.column_stack([np.ones_like(x), x])
    coef, *_ = np.linalg.lstsq(A, g, rcond=None)
    r = g - A @ coef
    dof = max(len(g) - 2, 1)
    cov = np.linalg.inv(A.T @ A) * float(r @ r) / dof
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    return {"a": float(coef[0]), "a_se": float(se[0]), "b": float(coef[1]), "b_se": float(se[1]),
            "max_residual": float(np.max(np.abs(r)))}


def first_gap_constant(p) -> float | None:
    """THEORY.md: when the first saddle has one coordinate i, gap₁·ln(1/α) → n·ln((√2 − 1)|β¹_i|)/(4|⟨x_i, y⟩|)
    (the scalar flow of coordinate i through the loss midpoint; derived in flow_claims.py)."""
    if not p.jumps or len(p.jumps[0].support) != 1:
        return None
    (i, _), = p.jumps[0].support.items()
    X, y = p.X, p.y
    xy = abs(sum(X[r][i] * y[r] for r in range(len(y))))
    return len(y) * math.log((math.sqrt(2) - 1) * abs(float(p.jumps[0].beta[i]))) / (4 * float(xy))


def sweep(X, y, alphas=ALPHAS, budget: Budget = BUDGET) -> dict:
    """Every scale of ``alphas`` and the fitted rate of each jump's gap."""
    p = jump_process(X, y)
    rows = [observe(X, y, a, p, budget=budget) for a in alphas]
    fits = []
    for k in range(len(p.jumps)):
        ok = [(r["lam"], r["gaps"][k]) for r in rows if r["gaps"][k] is not None]
        fits.append(fit_rate(*zip(*ok)) if len(ok) >= 3 else None)
    return {"process": p, "rows": rows, "fits": fits}


def mp_first_jump(X=LEAVES["X"], y=LEAVES["y"], alpha="1e-2048", digits: int = 30) -> dict:
    """The mpmath run at ``digits`` to the first loss midpoint: t̂₁, its gap and gap·ln(1/α)."""
    import mpmath
    from theorycheck.proofs.saddle_to_saddle.algorithm import jump_process

    from theorycheck.solvers.log_flow import log_flow
    from theorycheck.status import Budget

    p = jump_process(X, y)
    t1 = p.jumps[0].time
    run = log_flow(X, y, alpha, t_max=float(t1) * 2, digits=digits, stop_loss=midpoints(p)[0],
                   budget=Budget(max_steps=5_000, max_evaluations=2_000_000, max_seconds=float("inf")))
    with mpmath.workdps(digits):
        t = run.run.t_exact
        gap = None if t is None else t - mpmath.mpf(t1.numerator) / t1.denominator
        return {"alpha": alpha, "digits": digits, "status": str(run.status), "steps": run.run.steps,
                "observed": None if t is None else mpmath.nstr(t, digits - 5),
                "gap": None if gap is None else float(gap),
                "scaled_gap": None if gap is None else float(gap * run.lam)}
