"""E1 as claims (several examples, balanced L = 2, uniform α): "GD's j† does not move".

C6 checks GD for one example, where ln u_j grows like z_j t for every coordinate at once. With
several examples, d ln u_j/dt = Σ_i w_i(t) z_ij with weights w_i = −ℓ'(m_i)/n that change as the
margins m_i grow, so the coordinate that leads early (largest Σ_i z_ij at equal weights) need not
lead later. What does hold (proved below): if one coordinate j has the largest entry of every
example (z_ij ≥ z_ik for all i, k), then d(ln u_j − ln u_k)/dt = Σ_i w_i (z_ij − z_ik) ≥ 0, so j
leads from the start and forever (uniform init).

ℓ2-SAM (E1.sam-order, E1.sam-limit). The paper's E1 data have minor and major features: z_ij =
s_j (1 + 0.3 g_ij) with a feature strength s_j. On a data set the strength is read off the data as
the column sum Σ_i z_ij (the initial rate of ln u_j at equal weights, the analogue of z_j for one
example); j† "moves from small to large" is checked on the heatmap j†(α, t) of the batched
``multi`` system (real time): (a) along t, the visited features in that order (cells whose j† is
a tie within the integration error are skipped; the final switch to 0 of a collapse is left out);
(b) across α at every t (collapse counts as j† = 0, below every feature). A violation in resolved
cells is a counterexample whatever happened elsewhere; a member stopped by a budget or at a
critical point makes an otherwise clean check inconclusive. The limit (E1.sam-limit) is compared
with the ℓ1 max margin over the orthant β ≥ 0 that a balanced positive start reaches, along
checkpoints geometric in log t (so that a rate (log t)^(−p) is geometric and Aitken's Δ² applies),
with the lp-margin pack's verdict rule.

A limit of the solvers found here, since fixed: late in real time, with ρ of order 1, ℓ2-SAM runs
on separable data stopped with ``critical_point`` although Lo has none there: Z = ((1.573, 1.987),
(0.687, 2.628)), ρ = 1.48, α = 1.10 stopped at t ≈ 618 with margins ≈ 21 and growing; ‖∇Lo(w)‖ =
4e-9 is ≈ 1e-5 of the field ‖∇Lo(w + ε)‖ only because the perturbation of size ρ lowers the margins
by ≈ ρ‖∇m‖ (an independent scipy integration continues to t = 5000). The critical-point test now
also requires the relative gradient ‖∇Lo(w)‖/Lo(w) to have fallen (tests/test_batched_guards.py).
The claims here still report such members as inconclusive (never as holding), and keep drawing
ρ ≤ 1 (order) or ≤ 0.3 (limit).
"""

from __future__ import annotations

import functools


# Each claim's check and its strategy are module functions (numpy, hypothesis and the solvers
# imported inside them, so that `theorycheck prove` stays symbolic); _e1_claims and _e1_sam_claims
# assemble them.
def _check_gd_static(x, refined: bool):
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num

    from theorycheck.claims.claim import Outcome
    from theorycheck.setting import Setting

    Z = np.array(x["Z"], float)
    s = Setting(Z, np.ones(Z.shape[0]), depth=2, optimizer="gd", alpha=x["alpha"])
    tr = num.solve(s, x["t_max"])
    if not tr.successful and tr.stopped_because not in ("t_max",):
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    sw = num.switches(tr)
    first = num.index_at(tr, min(1e-6, tr.t_end))
    return Outcome(not sw, float(len(sw)), {"initial_index": first, "switches": [list(w) for w in sw]})


def _datasets(dominant: bool):
    """n, d ∈ {2, 3}, entries in [0.2, 3] (``dominant``: one column has the largest entry of every row)."""
    import numpy as np
    from hypothesis import strategies as st

    @st.composite
    def datasets(draw, dominant: bool):
        n = draw(st.integers(2, 3))
        d = draw(st.integers(2, 3))
        seed = draw(st.integers(0, 2**31 - 1))
        rng = np.random.default_rng(seed)
        Z = rng.uniform(0.2, 3.0, size=(n, d))
        if dominant:  # one column has the largest entry of every row
            j = int(rng.integers(d))
            Z[:, j] = Z.max(axis=1) + rng.uniform(0.05, 1.0, size=n)
        return {"Z": Z.round(3).tolist(), "alpha": float(draw(st.floats(0.05, 1.0))), "t_max": 60.0}

    return datasets(dominant)


def _e1_claims():
    from theorycheck.claims.claim import Claim

    counterexample = {"Z": [[4.0, 1.0], [-1.0, 1.0]], "alpha": 0.1, "t_max": 60.0}
    return [Claim(
        key="E1.gd-static",
        statement="E1 (several examples): GD's j† does not move (balanced, L = 2, uniform α)",
        inputs=_datasets(False), check=functools.partial(_check_gd_static, refined=False), pinned=[counterexample],
        max_examples=4, tolerance="exact: no switch of j† between feature values on (0, t_max]",
        refined=Claim(
            key="E1.gd-static-refined",
            statement="(refined by theorycheck) GD's j† does not move when one coordinate has the largest entry of "
                      "every example (then d(ln u_j − ln u_k)/dt = Σ_i w_i (z_ij − z_ik) ≥ 0); otherwise it can: "
                      "Z = ((4, 1), (−1, 1)), α = 0.1 goes 1 → 2 (the ℓ1 max margin is e_2)",
            inputs=_datasets(True), check=functools.partial(_check_gd_static, refined=True), max_examples=4,
            tolerance="exact: no switch of j† on (0, t_max]"),
    )]


#: the heatmap of E1.sam-order: α geometric on [0.02, 3], t geometric on [1e-2, 1e5] (real time)
ORDER_ALPHAS = (0.02, 3.0, 16)
ORDER_TIMES = (1e-2, 1e5, 80)
#: E1.sam-limit: checkpoints ln t = LIMIT_TOP·2^(−k/2), k = 9..0 (t up to ≈ 1e139; near ln t ≈ 360 the
#: solver's critical-point test stops ℓ2-SAM runs), step budget
LIMIT_TOP = 320.0
LIMIT_MAX_STEPS = 100_000


def sam_order(Z, rho: float, order: str = "sum", rtol: float = 1e-8, atol: float = 1e-10) -> dict:
    """j†(α, t) of ℓ2-SAM (balanced, L = 2, uniform α, real time) on the grid ORDER_ALPHAS ×
    ORDER_TIMES and its violations of "moves to larger features" in the order ``order`` ("sum":
    s_j = Σ_i z_ij; "min": s_j = min_i z_ij, the margin e_j alone attains): ``time`` (a move to
    a smaller s along t), ``unimodal`` (a path that is not down*, up*), ``alpha`` (a smaller s at
    a larger α, same t); ``unfinished``: members stopped by a budget or at a critical point."""
    import numpy as np
    from theorycheck.proofs.minor_first.reduced import REDUCTIONS

    from theorycheck.status import COLLAPSE, DONE, STATUS
    from theorycheck.sweep.grid import time_grid
    from theorycheck.sweep.recipes import heatmap
    from theorycheck.sweep.run import RunOptions

    Z = np.asarray(Z, float)
    alphas = np.geomspace(*ORDER_ALPHAS)
    times = time_grid(ORDER_TIMES[1], ORDER_TIMES[2], log=True, t_min=ORDER_TIMES[0])
    r = heatmap(Z, optimizer="sam-l2", rho=rho, alphas=alphas, times=times, workers=1, progress=False,
                opts=RunOptions(rtol=rtol, atol=atol, max_steps=20_000), reductions=REDUCTIONS)
    s = Z.sum(0) if order == "sum" else Z.min(0)
    J, gap, lbm = r["jdag"], r["gap"], r["log_beta_max"]
    # resolved: collapse (0), or a top gap θ_(1) − θ_(2) above 10× the integration error (θ = ln u = ln β / 2)
    with np.errstate(invalid="ignore"):
        res = (J == 0) | ((J > 0) & (gap > 10 * (rtol * np.abs(lbm / 2) + atol)))
    key = np.where(J > 0, s[np.clip(J, 1, None) - 1], -np.inf)
    tie = 1e-9 * float(np.max(np.abs(s)))
    out = {"order": s.tolist(), "time": [], "unimodal": [], "alpha": [],
           "unfinished": [[float(a), STATUS[int(c)].value] for a, c in zip(alphas, r["status"]) if c not in (DONE, COLLAPSE)],
           "unresolved_cells": int((~res & (J >= 0)).sum())}
    for i, a in enumerate(alphas):
        seq = []
        for k in range(J.shape[1]):
            if res[i, k] and J[i, k] > 0 and (not seq or abs(key[i, k] - s[seq[-1][1] - 1]) > tie):
                seq.append((float(times[k]), int(J[i, k])))
        ups = [s[b - 1] > s[a_ - 1] for (_, a_), (_, b) in zip(seq, seq[1:])]
        turns = sum(u != v for u, v in zip(ups, ups[1:]))
        row = {"alpha": float(a), "path": [j for _, j in seq], "first_seen": [t for t, _ in seq]}
        if not all(ups):
            out["time"].append(row)
        if not (turns == 0 or (turns == 1 and not ups[0])):
            out["unimodal"].append(row)
    for k, t in enumerate(times):
        prev = None
        for i in range(J.shape[0]):
            if not res[i, k]:
                continue
            if prev is not None and key[i, k] < key[prev, k] - tie:
                out["alpha"].append({"t": float(t), "alpha": [float(alphas[prev]), float(alphas[i])],
                                     "jdag": [int(J[prev, k]), int(J[i, k])]})
                break
            prev = i
    return out


def _check_order(x, refined: bool):
    from theorycheck.claims.claim import Outcome

    o = sam_order(x["Z"], x["rho"])
    bad = (o["unimodal"] if refined else o["time"]) + o["alpha"]
    if bad:
        return Outcome(False, float(len(bad)), o)
    if o["unfinished"]:
        return Outcome(None, detail=o)
    return Outcome(True, 0.0, o)


def _features(common: bool):
    """E1's construction: z_ij = s_j (1 + 0.3 g_ij), s_j ∈ [0.3, 2] sorted (feature 1 the most
    minor), entries clipped at 0.05; ``common``: each example's entries sorted, so that one
    order of the features holds in every example."""
    import numpy as np
    from hypothesis import strategies as st

    @st.composite
    def features(draw, common: bool):
        n = draw(st.integers(2, 3))
        d = draw(st.integers(2, 3))
        rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
        s = np.sort(rng.uniform(0.3, 2.0, d))
        Z = np.clip(s * (1 + 0.3 * rng.standard_normal((n, d))), 0.05, None)
        if common:
            Z = np.sort(Z, axis=1)
        return {"Z": Z.round(3).tolist(), "rho": round(float(draw(st.floats(0.2, 1.0))), 3)}

    return features(common)


def _limit_gaps(tr, Z, ln_t, l1: float) -> tuple[list, list]:
    """The relative ℓ1-margin gaps |‖β/min_i⟨z_i, β⟩‖₁ − l1|/l1 and the directions at the checkpoints."""
    import numpy as np

    gaps, dirs = [], []
    for lt in ln_t:
        lab, sg = tr.at(float(np.exp(lt)))[:2]
        b = sg * np.exp(lab - lab.max())
        nb = b / np.min(Z @ b)
        gaps.append(abs(float(np.abs(nb).sum()) - l1) / l1)
        dirs.append((b / np.linalg.norm(b)).tolist())
    return gaps, dirs


def _check_limit(x):
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num

    from theorycheck.claims.claim import Outcome
    from theorycheck.claims.trend import tends_to_zero
    from theorycheck.setting import Setting
    from theorycheck.solvers.lp_limits import orthant_l1_max_margin

    Z = np.array(x["Z"], float)
    s = Setting(Z, np.ones(Z.shape[0]), depth=2, optimizer="sam-l2", rho=x["rho"], alpha=x["alpha"])
    reach = s.reachable()
    if not reach.separable:
        return Outcome(None, detail={"why": "no reachable β separates the data (outside the claim's hypotheses)"})
    o = orthant_l1_max_margin(Z)
    ln_t = LIMIT_TOP * 2.0 ** (-np.arange(9, -1, -1) / 2)
    tr = num.solve(s, float(np.exp(LIMIT_TOP)),
                   budget=num.claim_budget(max_steps=LIMIT_MAX_STEPS, max_evaluations=50 * LIMIT_MAX_STEPS))
    detail = {"stopped_because": tr.stopped_because, "t_end": tr.t_end, "signs": reach.signs,
              "l1_orthant": o["l1_norm"], "beta_l1_orthant": o["beta"], "l1_unrestricted": o["unrestricted_l1_norm"]}
    if tr.collapsed:
        return Outcome(None, detail={**detail, "why": "collapse: α below the data set's α_c (outside the claim)"})
    ln_t = ln_t[ln_t <= np.log(tr.t_end) * (1 + 1e-12)]
    if ln_t.size < 5:
        return Outcome(None, detail={**detail, "why": "fewer than 5 checkpoints before the run stopped"})
    gaps, dirs = _limit_gaps(tr, Z, ln_t, o["l1_norm"])
    detail["direction"] = dirs[-1]
    return tends_to_zero(ln_t.tolist(), np.array(gaps), detail)


def _limit_inputs():
    """n ∈ {1, 2, 3}, d ∈ {2, 3}, entries in [−1, 3] with one column made positive (separable in
    β ≥ 0), ρ ∈ [0.05, 0.3], α ∈ [0.5, 1.5] (above collapse for these sizes)."""
    import numpy as np
    from hypothesis import strategies as st

    @st.composite
    def limit_inputs(draw):
        n = draw(st.integers(1, 3))
        d = draw(st.integers(2, 3))
        rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
        Z = rng.uniform(-1.0, 3.0, size=(n, d))
        j = int(rng.integers(d))
        Z[:, j] = np.abs(Z[:, j]) + 0.2
        return {"Z": Z.round(3).tolist(), "rho": round(float(draw(st.floats(0.05, 0.3))), 3),
                "alpha": round(float(draw(st.floats(0.5, 1.5))), 3)}

    return limit_inputs()


def _e1_sam_claims():
    from theorycheck.claims.claim import Claim

    # general data: up-then-down along t in the column-sum order (down-then-up in the min order), and
    # not monotone in α in either order
    cross = {"Z": [[1.2, 1.5], [2.7, 2.0]], "rho": 0.5}
    # one order in every example (the refinement's hypothesis): still down before up along t
    common_down = {"Z": [[0.4, 1.2, 1.8], [0.2, 0.5, 1.1]], "rho": 0.8}
    order = Claim(
        key="E1.sam-order",
        statement="E1 (several examples): ℓ2-SAM's j† moves from minor to major features with time and with α "
                  "(balanced, L = 2, uniform α, real time; features ordered by strength Σ_i z_ij): along t the "
                  "visited j† have nondecreasing Σ_i z_ij, and at each t Σ_i z_ij† is nondecreasing in α",
        inputs=_features(False), check=functools.partial(_check_order, refined=False), pinned=[cross, common_down],
        tolerance="exact on the grid α ∈ geomspace(0.02, 3, 16) × t ∈ geomspace(1e-2, 1e5, 80): no resolved cell "
                  "(top gap > 10 (rtol|θ| + atol)) with a move to a smaller Σ_i z_ij (deviation: number of violations)",
        refined=Claim(
            key="E1.sam-order-refined",
            statement="(refined by theorycheck) when one order of the features holds in every example (z_ij ≤ z_ik "
                      "for all i whenever feature j ≼ k), ℓ2-SAM's j† along t goes down, then up (at most one "
                      "change of direction, down first, as C4 for one example), and at each t it is nondecreasing "
                      "in α. Without a common order neither holds: Z = ((1.2, 1.5), (2.7, 2.0)), ρ = 0.5 goes 2 → 1 "
                      "→ 2 at α = 0.40 and has j† 2 at α = 0.40 but 1 at α = 0.56 (t = 0.01)",
            inputs=_features(True), check=functools.partial(_check_order, refined=True), pinned=[common_down],
            tolerance="exact on the same grid: the resolved path is down*, up*; no resolved move to a smaller "
                      "Σ_i z_ij across α"),
    )
    limit = Claim(
        key="E1.sam-limit",
        statement="E1 (several examples): ℓ2-SAM's limit direction (balanced, L = 2, uniform α above collapse, "
                  "logistic, real time) is the ℓ1 max margin over the directions the network reaches (β ≥ 0): "
                  "‖β/min_i⟨z_i, β⟩‖_1 → min{Σβ_j : Zβ ≥ 1, β ≥ 0}",
        inputs=_limit_inputs(), check=_check_limit,
        pinned=[{"Z": [[-1.0, 0.5]], "rho": 0.3, "alpha": 1.0},  # orthant optimum (0, 2), unrestricted (−1, 0)
                {"Z": [[4.0, 1.0], [-1.0, 1.0]], "rho": 0.3, "alpha": 0.5}],  # gap 1e-2 → 0 as (log t)^(−p)
        tolerance="relative ℓ1-margin gap at ln t = 320·2^(−k/2), k = 9..0 (step budget 1e5): "
                  "lp-margin's rule — extrapolated (Aitken) within 3 s.e. + 1e-6 of 0 with 3 s.e. ≤ 1e-3; fails only "
                  "when > 1e-3 under every rate model a + c·(log t or log log t)^(−p) and no longer decreasing",
        max_examples=4,
    )
    return [order, limit]


@functools.cache
def claims() -> tuple:
    """This module's claims, built once; the pack's manifest (``theorycheck.proofs.claims``) lists them."""
    return (*_e1_claims(), *_e1_sam_claims(),)
