"""E2.linear: THEORY.md's E2 on the model the theorems are about — an L-layer diagonal linear
network on image pixels, where β is the pixel map (no Grad-CAM in between).

Statement (THEORY.md E2, linear networks): in the intermediate regime, ℓ2-SAM's β puts more mass
on minor (low-intensity, background) pixels than GD's at matched training loss; the same for
ℓ∞-SAM (E2.linear-linf).

Model: the doubled network of :mod:`theorycheck.batched.pixels` (β = u_+^L − u_−^L, balanced
start α, L = 2), raw intensities in [0, 1], logistic loss, the rescaled flow (τ), every run
stopped at training loss 1e-2. Background: MNIST pixels with mean raw training intensity < 0.1.

The verdict rule, fixed before any run:
- replicates are class pairs of MNIST (``PAIRS``), each a class-balanced training subset;
- per pair, α is the geometric middle of its intermediate range [α_c's upper end, α_gd]
  (:mod:`theorycheck.proofs.minor_first.predict.pixels`); a pair without one (no bracket, or α_gd ≤ α_c) is left out
  and counted; so is a pair where a run stops on a budget (max_steps, chattering);
- per pair, D = (background fraction of |β| under SAM) − (under GD) at matched training loss
  (:func:`theorycheck.observe_pixels.matched`);
- with at least 3 pairs: the mean of D and its 95 % Student-t interval. *holds* when the interval's
  lower end is > 0, *fails* when its upper end is < 0 (the counterexample: the pair with the
  smallest D), otherwise *inconclusive* (the pairs do not decide the sign).

What the ℓ1 max-margin limit says: GD (C6) and ℓ2-SAM (C4) at L = 2 both tend in direction to the
ℓ1 max-margin solution over the doubled input, i.e. the ℓ1 max margin over β ∈ R^d; its background
fraction is reported per pair beside the finite-time ones (the limit predicts D → 0 as the loss → 0).
"""

from __future__ import annotations

import functools
import math

#: the replicates of the verify run (five disjoint class pairs) and their training subset size
PAIRS = ((0, 1), (2, 3), (4, 5), (6, 7), (8, 9))
N_TRAIN = 120
RHO = 1.0
LOSS_TARGET = 1e-2
#: the ℓ∞ run's step budget in the verify run (its flow crosses many surfaces G_j = 0)
LINF_MAX_STEPS = 600


_REGIMES: dict = {}


def _regimes(classes, n_train, rho, depth, max_steps, array_backend, Z, gd_scan_hi=2.0, collapse_bracket=None):
    """α_c(Z) and α_gd(Z) of a pair, computed once per process (E2.linear and E2.linear-linf share them).
    ``gd_scan_hi``: the α_gd scan's upper end over ρ (the rule's 2; a wider scan keeps the rule's
    density of points); ``collapse_bracket``: α_c's bracket from an earlier run of the same
    (deterministic) scan, instead of scanning again."""
    from theorycheck.proofs.minor_first.predict.pixels import alpha_collapse, pixel_alpha_gd_like

    key = (classes, n_train, rho, depth, max_steps, array_backend, gd_scan_hi,
           None if collapse_bracket is None else tuple(collapse_bracket))
    if key not in _REGIMES:
        lo, hi = 1e-3 * rho, 2.0 * rho
        small = n_train is not None and n_train <= 1000
        if collapse_bracket is None:
            ac = alpha_collapse(Z, rho, depth=depth, lo=lo, hi=hi, points=8 if small else 10,
                                refine=4 if small else 8, max_steps=max_steps, array_backend=array_backend)
        else:
            ac = {"bracket": [float(collapse_bracket[0]), float(collapse_bracket[1])], "given": True}
        ghi = gd_scan_hi * rho
        points = max(48, math.ceil(48 * math.log(ghi / lo) / math.log(hi / lo)))
        _REGIMES[key] = (ac, pixel_alpha_gd_like(Z, rho, depth=depth, lo=lo, hi=ghi, points=points))
    return _REGIMES[key]


def pair_difference(classes, optimizer: str = "sam-l2", *, n_train: int | None = N_TRAIN, rho: float = RHO,
                    depth: int = 2, loss_target: float = LOSS_TARGET, max_steps: int = 1500,
                    limit: bool = True, array_backend: str = "numpy", images=None,
                    linf_max_steps: int | None = None, gd_scan_hi: float = 2.0, collapse_bracket=None) -> dict:
    """One replicate of E2.linear: α in the middle of the pair's intermediate range, GD and
    ``optimizer`` from the same start, D at matched loss, and the ℓ1 max-margin limit's
    background fraction (``limit``). Step budget of the pair's run: ``max_steps`` for ℓ2-SAM;
    for ℓ∞-SAM ``linf_max_steps``, or when None the verify run's min(``max_steps``, 600).
    ``gd_scan_hi``, ``collapse_bracket``: see :func:`_regimes` (the verify run: 2 and None)."""
    import numpy as np

    from theorycheck import observe_pixels as ob
    from theorycheck.batched.pixels import run_pixels
    from theorycheck.pixel_task import pixel_task
    task = pixel_task("mnist", classes, n_train=n_train, n_test=200, images=images)
    Z = task.Z
    ac, agd = _regimes(tuple(task.classes), n_train, rho, depth, max_steps, array_backend, Z, gd_scan_hi,
                       collapse_bracket)
    out = {"classes": list(task.classes), "n_train": int(Z.shape[0]), "alpha_collapse": ac["bracket"],
           "alpha_gd_like": agd["value"]}
    br = ac["bracket"]
    if br is None or agd["value"] is None or agd["value"] <= br[1]:
        why = ("α_gd beyond the scan's upper end (the intermediate range has no upper end on the scan)"
               if br is not None and agd["value"] is None else "no intermediate regime on the scan")
        out.update(usable=False, why=why)
        return out
    alpha = math.sqrt(br[1] * agd["value"])
    d_act = int(task.active.sum())
    r_opt = rho if optimizer == "sam-l2" else rho / math.sqrt(depth * 2 * d_act)
    grid = np.concatenate([[0.0], np.geomspace(2e-3, 200.0, 119)])
    run = run_pixels(Z, ["gd", optimizer], [alpha, alpha], [0.0, r_opt], depth=depth, time_kind="tau", grid=grid,
                     loss_target=loss_target,
                     max_steps=max_steps if optimizer == "sam-l2" else
                     (min(max_steps, LINF_MAX_STEPS) if linf_max_steps is None else linf_max_steps),
                     array_backend=array_backend)
    st = [str(s) for s in run.status]
    out.update(alpha=alpha, rho=r_opt, status=st)
    if any(s not in ("loss_reached", "done") for s in st):
        out.update(usable=False, why=f"a run stopped on a budget: {st}")
        return out
    bg = ob.background_fraction(run.beta, task.background)
    m = ob.matched(run.loss[0], bg[0], run.loss[1], bg[1])
    out.update(usable=m is not None and m["difference"] is not None, matched_loss=m["level"] if m else None,
               gd=m["a"] if m else None, sam=m["b"] if m else None, difference=m["difference"] if m else None,
               flat_baseline=ob.flat_baseline(task.background, task.active))
    if limit and out["usable"]:
        from theorycheck.errors import TheorycheckError
        from theorycheck.solvers.maxmargin import l1_max_margin

        try:
            mm = l1_max_margin(Z[:, task.active])
        except TheorycheckError as exc:  # the limit is reported beside D, never instead of it
            out.update(l1_limit_background=None, angle_to_l1=None, l1_limit_why=str(exc))
            return out
        beta = np.zeros(Z.shape[1])
        beta[task.active] = mm.direction
        out["l1_limit_background"] = float(ob.background_fraction(beta, task.background))
        out["angle_to_l1"] = {"gd": float(ob.angle_degrees_rows(run.beta[0, m["index_a"]], beta)),
                              "sam": float(ob.angle_degrees_rows(run.beta[1, m["index_b"]], beta))}
    return out


def verdict(rows: list[dict]) -> dict:
    """The rule of the module docstring over replicates ``rows``."""
    import numpy as np
    from scipy import stats

    D = np.array([r["difference"] for r in rows if r.get("usable")], float)
    out = {"pairs_used": int(D.size), "pairs_left_out": int(len(rows) - D.size),
           "differences": D.tolist(), "positive": int(np.sum(D > 0))}
    if D.size < 3:
        out.update(ok=None, why="fewer than 3 usable pairs")
        return out
    mean, se = float(D.mean()), float(D.std(ddof=1) / math.sqrt(D.size))
    h = float(stats.t.ppf(0.975, D.size - 1) * se)
    out.update(mean=mean, ci95=[mean - h, mean + h])
    out["ok"] = True if mean - h > 0 else False if mean + h < 0 else None
    return out


def check(x):
    """E2.linear / E2.linear-linf on one input: the paired background differences over ``x["pairs"]``."""
    from theorycheck.claims.claim import Outcome
    from theorycheck.imagedata import DataError

    try:
        rows = [pair_difference(tuple(p), x["optimizer"], n_train=x["n_train"]) for p in x["pairs"]]
    except DataError as exc:
        return Outcome(None, detail={"why": str(exc)})
    v = verdict(rows)
    worst = min((r for r in rows if r.get("usable")), key=lambda r: r["difference"], default=None)
    dev = -v["ci95"][0] if "ci95" in v else 0.0
    return Outcome(v["ok"], dev, {"verdict": v, "pairs": rows,
                                  "counterexample_pair": worst["classes"] if (v["ok"] is False and worst) else None})


def _describe(x):
    return {**x, "model": "doubled diagonal network, raw intensities, rescaled flow, loss 1e-2"}


@functools.cache
def claims() -> tuple:
    """This module's claims (E2.linear, E2.linear-linf), built once; the pack's manifest lists them."""
    from hypothesis import strategies as st

    from theorycheck.claims.claim import Claim

    base = {"pairs": [list(p) for p in PAIRS], "n_train": N_TRAIN}
    tol = ("95 % t-interval of the mean paired difference D = bg(SAM) − bg(GD) at matched loss over the usable "
           "class pairs: holds if it lies above 0, fails if below 0, otherwise inconclusive (deviation: −lower end)")
    found = []
    for key, opt, name in (("E2.linear", "sam-l2", "ℓ2-SAM"), ("E2.linear-linf", "sam-linf", "ℓ∞-SAM")):
        x = {**base, "optimizer": opt}
        found.append(Claim(
            key=key,
            statement=f"E2 (diagonal linear network on MNIST pixels, L = 2): in the intermediate regime {name}'s β "
                      "puts more mass on background (low-intensity) pixels than GD's at matched training loss",
            inputs=st.just(x), check=check, max_examples=1, tolerance=tol, describe=_describe))
    return tuple(found)
