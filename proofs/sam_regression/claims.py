"""Claims of the pack ``sam-regression`` (``theorycheck verify``), each with its check and its input strategy as
separate functions (THEORY.md, "Claims checked by `verify`"). The flows, their effective scales and error
bars, and the predicted limits come from the engine through :mod:`.runs`; the inputs from :mod:`.problems`."""

from __future__ import annotations

import numpy as np
from theorycheck.proofs.sam_regression import problems as P
from theorycheck.proofs.sam_regression import runs

from theorycheck.claims.claim import Claim, Outcome

#: a float64 computation of ln c or of a norm agrees to this (relative) when the statement holds with equality
ROUNDING = 1e-9


def _sams():
    from theorycheck.optimizers import N_SAM, ONE_SAM

    return N_SAM, ONE_SAM


def _gd():
    from theorycheck.optimizers import GD

    return GD


def _not_converged(r) -> Outcome:
    return Outcome(None, detail={"optimizer": r.optimizer, "flow_status": r.status, "message": r.message,
                                 "residual": r.residual, "t": r.t})


# ------------------------------------------------------------------------------------------ SR.identity
def check_identity(x) -> Outcome:
    """SR1 on flows: ln(c_T/α) read off the final state against −κρ∫g ĝ by quadrature, n-SAM and 1-SAM."""
    detail, dev, tol = {}, 0.0, 0.0
    for opt in _sams():
        r = runs.identity_run(x, opt)
        if not r.ok:
            return Outcome(None, detail={"optimizer": opt.name, "run_status": r.status, "t": r.t})
        gap = float(np.max(np.abs(r.log_scale - r.predicted)))
        scale = max(1.0, float(np.max(np.abs(r.predicted))))
        dev, tol = max(dev, gap / scale), max(tol, 1e-12)
        detail[opt.name] = {"log_scale": r.log_scale, "predicted": r.predicted, "gap": gap, "t": r.t, "steps": r.steps}
    return Outcome(dev <= tol, dev, {**detail, "tolerance": tol})


# ------------------------------------------------------------------------------------------ SR.gd, SR.sam-limit
def _against_limit(x, opt) -> tuple[bool | None, float, dict]:
    """The flow of ``opt`` against argmin Q at its potential scale: read off the final state (SAM), or of the
    initial α (GD: P1 predicts from α itself)."""
    X, y, _ = P.data(x)
    r = runs.flow(x, opt)
    if not r.converged:
        return None, 0.0, _not_converged(r).detail
    q = r.potential_scale if opt.perturbs else runs.potential_scale(x["param"], r.alpha)
    lim = runs.limit(X, y, q)
    info = {"flow_beta": r.beta, "flow_error_bar": r.error_bar, "potential_scale": r.potential_scale,
            "limit_status": lim.status}
    if lim.beta is None:
        return None, 0.0, {**info, "undecided_because": lim.message}
    scale = max(1.0, float(np.linalg.norm(lim.beta)))
    bar = r.error_bar + lim.error_bar + 1e-9 * scale
    dev = float(np.linalg.norm(r.beta - lim.beta))
    return dev <= bar, dev, {**info, "predicted_beta": lim.beta, "error_bar": bar}


def check_gd(x) -> Outcome:
    """P1: the GD flow's limit is argmin Q_α (deviation ‖β_flow − β_Q‖)."""
    ok, dev, detail = _against_limit(x, _gd())
    return Outcome(ok, dev, detail)


def check_sam_limit(x) -> Outcome:
    """P2/P3 with SR2: n-SAM's and 1-SAM's limits are argmin Q at the scale read off the final state."""
    out, worst, detail = True, 0.0, {}
    for opt in _sams():
        ok, dev, d = _against_limit(x, opt)
        detail[opt.name] = d
        if ok is None:
            return Outcome(None, worst, detail)
        out, worst = out and ok, max(worst, dev)
    return Outcome(out, worst, detail)


# ------------------------------------------------------------------------------------------ SR.shrink, SR.one-vs-n
def _scales(x) -> dict | Outcome:
    """The effective scales c∞ of n-SAM and 1-SAM — of a flow that interpolated or stopped short
    (:func:`runs.stopped_short`) — or an inconclusive Outcome."""
    _, y, _ = P.data(x)
    out = {}
    for opt in _sams():
        r = runs.flow(x, opt)
        if not (r.converged or runs.stopped_short(r, y)):
            return _not_converged(r)
        out[opt.name] = r
    return out


def check_shrink(x) -> Outcome:
    """P2: c∞ ≤ α coordinate-wise, for n-SAM and 1-SAM (deviation: max_j ln(c∞_j/α_j), > 0 fails)."""
    got = _scales(x)
    if isinstance(got, Outcome):
        return got
    with np.errstate(divide="ignore"):  # a collapsed scale is 0: ln 0 = −inf, which satisfies the claim
        growth = {k: np.log(r.effective_scale / r.alpha) for k, r in got.items()}
    worst = max(float(np.max(g)) for g in growth.values())
    return Outcome(worst <= ROUNDING, worst, {"log_scale_over_alpha": growth,
                                              "argmax": {k: int(np.argmax(g)) for k, g in growth.items()}})


def check_one_vs_n(x) -> Outcome:
    """P3: c∞(1-SAM) ≤ c∞(n-SAM) coordinate-wise (deviation: max_j ln(c1_j / cn_j))."""
    got = _scales(x)
    if isinstance(got, Outcome):
        return got
    n_sam, one_sam = (got[o.name] for o in _sams())
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(one_sam.effective_scale / n_sam.effective_scale)
    if np.any(np.isnan(ratio)):  # both scales underflowed to 0 in a coordinate: no comparison there
        return Outcome(None, 0.0, {"undecided_because": "both effective scales underflowed to 0 in a coordinate",
                                   "n_sam_scale": n_sam.effective_scale, "one_sam_scale": one_sam.effective_scale})
    worst = float(np.max(ratio))
    return Outcome(worst <= ROUNDING, worst, {"log_ratio": ratio, "n_sam_scale": n_sam.effective_scale,
                                              "one_sam_scale": one_sam.effective_scale})


# ------------------------------------------------------------------------------------------ SR.sparser, SR.generalises
def _pair(x, opt) -> tuple | Outcome:
    r0, r1 = runs.flow(x, _gd()), runs.flow(x, opt)
    for r in (r0, r1):
        if not r.converged:
            return _not_converged(r)
    return r0, r1


def check_sparser(x) -> Outcome:
    """P4: ‖β_n-SAM‖₁ ≤ ‖β_GD‖₁ (deviation: the difference; its error bar √d·(bar_GD + bar_n-SAM))."""
    got = _pair(x, _sams()[0])
    if isinstance(got, Outcome):
        return got
    gd, sam = got
    diff = float(np.abs(sam.beta).sum() - np.abs(gd.beta).sum())
    bar = np.sqrt(gd.beta.size) * (gd.error_bar + sam.error_bar) + ROUNDING * float(np.abs(gd.beta).sum())
    return Outcome(diff <= bar, diff, {"l1_gd": float(np.abs(gd.beta).sum()),
                                             "l1_n_sam": float(np.abs(sam.beta).sum()), "difference": diff,
                                             "error_bar": bar})


def _closer(x, opt) -> tuple[bool | None, float, dict]:
    _, _, star = P.data(x)
    got = _pair(x, opt)
    if isinstance(got, Outcome):
        return None, 0.0, got.detail
    gd, sam = got
    e0, e1 = float(np.linalg.norm(gd.beta - star)), float(np.linalg.norm(sam.beta - star))
    bar = gd.error_bar + sam.error_bar + ROUNDING * max(1.0, float(np.linalg.norm(star)))
    return e1 - e0 <= bar, e1 - e0, {"error_gd": e0, "error_sam": e1, "error_bar": bar}


def check_generalises(x) -> Outcome:
    """P4: n-SAM and 1-SAM end closer to β* than GD (deviation: the worst ‖β_SAM − β*‖ − ‖β_GD − β*‖)."""
    detail, ok, worst = {}, True, -np.inf
    for opt in _sams():
        o, dev, d = _closer(x, opt)
        detail[opt.name] = d
        if o is None:
            return Outcome(None, 0.0, detail)
        ok, worst = ok and o, max(worst, dev)
    return Outcome(ok, worst, detail)


def check_generalises_one_sam(x) -> Outcome:
    """P4 for 1-SAM alone."""
    o, dev, d = _closer(x, _sams()[1])
    return Outcome(o, dev, d)


# ------------------------------------------------------------------------------------------ SR.interpolates (found)
def check_interpolates(x) -> Outcome:
    """The paper's assumption: the n-SAM and 1-SAM flows reach an interpolator. Fails where a flow ran to the
    horizon with a flat loss and a residual ≥ 1e-6·max(1, ‖y‖) (it stopped short); inconclusive where a budget
    ended it or the loss was still falling."""
    X, y, _ = P.data(x)
    detail, worst = {}, 0.0
    for opt in _sams():
        r = runs.flow(x, opt)
        short = runs.stopped_short(r, y)
        detail[opt.name] = {"status": r.status, "residual": r.residual, "beta": r.beta, "t": r.t,
                            "effective_scale": r.effective_scale}
        worst = max(worst, r.residual / max(1.0, float(np.linalg.norm(y))))
        if short:
            return Outcome(False, worst, {**detail, "stopped": opt.name})
        if short is None:
            return Outcome(None, worst, detail)
    return Outcome(True, worst, detail)


def check_interpolation_threshold(x) -> Outcome:
    """SR3 on flows: where every coordinate can leave the origin (ρ below every threshold) both flows
    interpolate; where none can (ρ above every threshold) both stop short at β = 0 (‖β‖ ≤ 1e-8·max(1, ‖y‖))."""
    X, y, _ = P.data(x)
    th = P.origin_thresholds(X, y)
    rho = float(x["rho"])
    escape = {k: rho < v for k, v in th.items()}
    detail = {"thresholds": th, "escaping": {k: int(v.sum()) for k, v in escape.items()}}
    for opt, key in zip(_sams(), ("n_sam", "one_sam")):
        if 0 < escape[key].sum() < escape[key].size:
            return Outcome(None, 0.0, {**detail, "undecided_because": "ρ lies between the thresholds: SR3 says nothing"})
        r = runs.flow(x, opt)
        short = runs.stopped_short(r, y)
        detail[opt.name] = {"status": r.status, "residual": r.residual, "beta": r.beta}
        if short is None and not r.converged:
            return Outcome(None, r.residual, detail)
        at_zero = float(np.linalg.norm(r.beta)) <= 1e-8 * max(1.0, float(np.linalg.norm(y)))
        if (r.converged, bool(short and at_zero)) != (bool(escape[key].all()), not escape[key].any()):
            return Outcome(False, r.residual, {**detail, "disagrees": opt.name})
    return Outcome(True, 0.0, detail)


def check_support(x) -> Outcome:
    """(found by the tool) n-SAM shrinks the scale more on the support S of β* than off it: mean_{j∈S}
    ln(c∞_j/α_j) < mean_{j∉S} ln(c∞_j/α_j) (deviation: the first minus the second; > 0 fails)."""
    _, _, star = P.data(x)
    support = star != 0
    if support.all() or not support.any():
        return Outcome(True, 0.0, {"vacuous": "β* has no zero or no nonzero coordinate"})
    r = runs.flow(x, _sams()[0])
    if not r.converged:
        return _not_converged(r)
    ln = np.log(r.effective_scale / r.alpha)
    on, off = float(ln[support].mean()), float(ln[~support].mean())
    return Outcome(on < off, on - off, {"mean_on_support": on, "mean_off_support": off, "log_scale_over_alpha": ln})


# ------------------------------------------------------------------------------------------ strategies
def paper_inputs():
    """The paper's problems, small (n ≤ 6), ρ ≤ 0.3, both parametrisations."""
    return P.problems()


def explicit_alpha_inputs():
    """The paper's problems with a per-coordinate α (every entry 10^[−2, 0])."""
    from hypothesis import strategies as st

    @st.composite
    def draw(dr):
        x = dr(P.problems())
        logs = dr(st.lists(st.sampled_from(P.LOG10_ALPHAS), min_size=x["d"], max_size=x["d"]))
        return {**{k: v for k, v in x.items() if k != "log10_alpha"}, "alpha": [10.0**v for v in logs]}

    return draw()


def large_rho_inputs():
    """The paper's problems with ρ up to 3 (where the origin can attract: SR3)."""
    return P.problems(rhos=(0.1, 0.3, 1.0, 3.0))


def paper_size_inputs():
    """The paper's problems at the grid's size (n = 10, d = 20, a 2-sparse β*), any seed, α, ρ and param."""
    from hypothesis import strategies as st

    return st.builds(lambda seed, a, r, p: {"seed": seed, "n": 10, "d": 20, "k": 2, "signs": False, "log10_alpha": a,
                                            "rho": r, "param": p},
                     st.integers(0, 10_000), st.sampled_from(P.LOG10_ALPHAS), st.sampled_from(P.RHOS),
                     st.sampled_from(P.PARAMS))


def threshold_inputs():
    """The paper's problems (α ≤ 0.1) with ρ below every or above every SR3 threshold."""
    return P.threshold_problems()


def generalisation_grid() -> list[dict]:
    """40 of the paper's problems (n = 10, d = 20, 2-sparse β*, α = 0.1, ρ = 0.1, uv)."""
    return P.paper_grid(40)


def rho_grid() -> list[dict]:
    """One paper problem (n = 6, d = 12) at ρ = 0.03 … 3, α = 0.1 and 0.01, both parametrisations."""
    return [{**P.PAPER, "rho": r, "log10_alpha": a, "param": p} for p in P.PARAMS for a in (-1.0, -2.0)
            for r in (0.03, 0.1, 0.3, 1.0, 3.0)]


#: every claim: inputs printed with their data; at most 24 checks spent shrinking a disagreement (a check runs
#: two to six flows)
_COMMON = {"describe": P.describe, "shrink_budget": 24}

_GEN_ONE = Claim(
    key="SR.generalises.one-sam", statement="1-SAM's limit is at least as close to β* as GD's",
    inputs=paper_inputs(), check=check_generalises_one_sam, grid=generalisation_grid, pinned=P.EDGES,
    tolerance="‖β_1SAM − β*‖ − ‖β_GD − β*‖ ≤ the flows' error bars", max_examples=12, **_COMMON)

_THRESHOLD = Claim(
    key="SR.interpolates.threshold", statement="(found by the tool, from SR3) from α ≤ 0.1: when ρ m_j < |c_j| for "
    "every j (every coordinate can leave w = 0) the n-SAM and 1-SAM flows interpolate; when ρ m_j > |c_j| for every j "
    "they stop short, at β = 0 (m_j = c_j² for n-SAM, mean_i (x_ij y_i)² for 1-SAM)", inputs=threshold_inputs(),
    check=check_interpolation_threshold, tolerance="interpolated: residual ≤ 1e-10·max(1, ‖y‖); stopped: as "
    "SR.interpolates, with ‖β‖ ≤ 1e-8·max(1, ‖y‖)", max_examples=12, **_COMMON)

CLAIMS = (
    Claim(key="SR.identity", statement="along the n-SAM and 1-SAM flows (uv, pm) the effective scale is exactly "
          "c_t = α exp(−κρ∫₀ᵗ g ĝ) (SR1)", inputs=paper_inputs(), check=check_identity, pinned=P.EDGES,
          max_examples=6, tolerance="|ln(c_T/α) + κρ∫g ĝ| ≤ 1e-12·max(1, κρ|∫g ĝ|) (quadrature beside the flow)", **_COMMON),
    Claim(key="SR.gd", statement="the GD flow from scale α converges to argmin{Q_α(β) : Xβ = y} (P1)",
          inputs=explicit_alpha_inputs(), check=check_gd, pinned=P.EDGES,
          tolerance="‖β_flow − β_Q‖ ≤ the flow's and the solver's error bars + 1e-9·max(1, ‖β_Q‖)", **_COMMON),
    Claim(key="SR.sam-limit", statement="an interpolating n-SAM / 1-SAM flow converges to argmin Q at the effective "
          "scale read off its final state (P2, P3; exact by SR2)", inputs=paper_inputs(), check=check_sam_limit,
          pinned=P.EDGES, tolerance="‖β_flow − β_Q‖ ≤ the flow's and the solver's error bars + 1e-9·max(1, ‖β_Q‖)", **_COMMON),
    Claim(key="SR.shrink", statement="SAM's effective scale shrinks: α∞ ≤ α coordinate-wise, n-SAM and 1-SAM (P2)",
          inputs=large_rho_inputs(), check=check_shrink, pinned=P.EDGES, grid=rho_grid,
          tolerance="max_j ln(α∞_j/α_j) ≤ 1e-9", **_COMMON),
    Claim(key="SR.one-vs-n", statement="1-SAM's effective scale is at most n-SAM's, coordinate-wise (P3)",
          inputs=paper_inputs(), check=check_one_vs_n, pinned=P.EDGES, grid=generalisation_grid,
          tolerance="max_j ln(α∞(1-SAM)_j / α∞(n-SAM)_j) ≤ 1e-9", **_COMMON),
    Claim(key="SR.sparser", statement="n-SAM's solution is sparser than GD's: ‖β_n-SAM‖₁ ≤ ‖β_GD‖₁ (P4)",
          inputs=paper_inputs(), check=check_sparser, pinned=P.EDGES, grid=generalisation_grid,
          tolerance="‖β_n-SAM‖₁ − ‖β_GD‖₁ ≤ √d·(the flows' error bars) + 1e-9·‖β_GD‖₁", **_COMMON),
    Claim(key="SR.generalises", statement="n-SAM's and 1-SAM's limits are at least as close to β* as GD's (P4)",
          inputs=paper_inputs(), check=check_generalises, pinned=P.EDGES, grid=generalisation_grid,
          refined=_GEN_ONE, tolerance="‖β_SAM − β*‖ − ‖β_GD − β*‖ ≤ the flows' error bars", **_COMMON),
    Claim(key="SR.support", statement="(found by the tool) on the paper's problems (n = 10, d = 20, 2-sparse β*) "
          "n-SAM shrinks the effective scale more on the support of β* than off it (mean ln(c∞_j/α_j) over the "
          "support < over the rest): the coordinates it penalises are those it should learn",
          inputs=paper_size_inputs(), check=check_support, pinned=(P.PAPER, {**P.PAPER, "param": "pm"}),
          grid=generalisation_grid, tolerance="mean over the support − mean off it < 0", **_COMMON),
    Claim(key="SR.interpolates", statement="(found by the tool; the paper's assumption) the n-SAM and 1-SAM flows "
          "from α reach an interpolator", inputs=large_rho_inputs(), check=check_interpolates, pinned=P.EDGES,
          max_examples=8, refined=_THRESHOLD,
          grid=rho_grid, tolerance="a flow that ran to t = 1e12 with a flat loss and residual ≥ 1e-6·max(1, ‖y‖) "
          "stopped short", **_COMMON),
)


def claims() -> list[Claim]:
    return list(CLAIMS)
