"""GD, n-SAM and 1-SAM on the paper's sparse regression problem (the authors' notebook: n = 20, d = 30, a
3-sparse β* ≥ 0 with ‖β*‖ = 1, Gaussian X; β = u ⊙ v from u = α·1, v = 0, α = 0.1), flows for ρ from 10⁻³
to 3: the distance of each limit to β*, its ℓ1 norm, the least and largest effective-scale ratio c∞_j/α and
the residual where a flow stops. What the paper leads us to expect: both SAMs end closer to β* than GD (the
paper's Figure on diagonal networks: a lower test loss), 1-SAM more so, with c∞ ≤ α; the flows interpolate."""

from __future__ import annotations

from pathlib import Path

import numpy as np

NAME = "rho-sweep"
TITLE = "sam-regression: GD, n-SAM and 1-SAM limits against ρ on the paper's sparse regression problem"


def problem(quick: bool) -> dict:
    """The paper's problem (seed 0 of :func:`theorycheck.proofs.sam_regression.problems.paper_grid`'s generator)."""
    n, d, k = (10, 20, 2) if quick else (20, 30, 3)
    return {"seed": 0, "n": n, "d": d, "k": k, "signs": False, "log10_alpha": -1.0, "param": "uv"}


def compute(*, quick: bool = False, ctx=None) -> dict:
    """The experiment's one result, ``{"result": {...}}`` (JSON-able; ``ctx`` is not used: one process)."""
    return {"result": _compute(quick)}


def _row(x: dict, opt, star: np.ndarray) -> dict:
    from theorycheck.proofs.sam_regression import runs

    r = runs.flow(x, opt)
    ratio = r.effective_scale / r.alpha
    return {"optimizer": opt.name, "rho": float(x["rho"]), "status": str(r.status), "residual": r.residual,
            "error_bar": r.error_bar, "distance": float(np.linalg.norm(r.beta - star)),
            "l1": float(np.abs(r.beta).sum()), "scale_min": float(ratio.min()), "scale_max": float(ratio.max()),
            "beta": r.beta.tolist()}


def _compute(quick: bool) -> dict:
    from theorycheck.proofs.sam_regression.problems import data

    from theorycheck.optimizers import GD, N_SAM, ONE_SAM

    base = problem(quick)
    X, y, star = data(base)
    rhos = [0.01, 0.1, 1.0] if quick else list(np.round(np.logspace(-3, np.log10(3), 13), 6))
    gd = _row({**base, "rho": 0.0}, GD, star)
    rows = [_row({**base, "rho": float(r)}, opt, star) for opt in (N_SAM, ONE_SAM) for r in rhos]
    return {"X": X.tolist(), "y": y.tolist(), "beta_star": star.tolist(), "alpha": 0.1, "gd": gd, "rows": rows}


def draw(results: dict, out: Path) -> list[Path]:
    res = results["result"]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from theorycheck.optimizers import N_SAM, ONE_SAM

    floor = 1e-30  # scales below are drawn at the floor (a collapsed coordinate reaches 1e-300 and less)
    fig, ax = plt.subplots(1, 3, figsize=(14, 4))
    for opt, mk in ((N_SAM, "o"), (ONE_SAM, "s")):
        r = [x for x in res["rows"] if x["optimizer"] == opt.name]
        rho = np.array([x["rho"] for x in r])
        done = np.array([x["status"] == "converged" for x in r])
        kw = {"color": opt.color}
        for a, key in ((ax[0], "distance"), (ax[1], "l1")):
            v = np.array([x[key] for x in r])
            a.semilogx(rho, v, "-", **kw, label=opt.title)
            a.semilogx(rho[done], v[done], mk, **kw)
            a.semilogx(rho[~done], v[~done], "x", ms=9, **kw, label=f"{opt.title}: stopped short" if (~done).any()
                       else None)
        ax[2].loglog(rho, [max(x["scale_min"], floor) for x in r], mk + "-", **kw, label=f"{opt.title}: min_j c∞_j/α")
        ax[2].loglog(rho, [max(x["residual"], 1e-16) for x in r], mk + ":", **kw, label=f"{opt.title}: residual")
    for a, key in ((ax[0], "distance"), (ax[1], "l1")):
        a.axhline(res["gd"][key], color="k", ls="--", label="GD")
    ax[0].set(xlabel="ρ", ylabel="‖β∞ − β*‖₂", title="distance to β*")
    ax[1].set(xlabel="ρ", ylabel="‖β∞‖₁", title="ℓ1 norm of the limit")
    ax[2].set(xlabel="ρ", title=f"least c∞_j/α (floor {floor:g}); residual")
    for a in ax:
        a.legend(fontsize=7)
    fig.tight_layout()
    from theorycheck.report.plots import save

    paths = save(fig, out / "sam_regression_rho_sweep", formats=("png", "svg"))
    plt.close(fig)
    return paths


def summarize(results: dict) -> tuple[list[str], list[str]]:
    from theorycheck.optimizers import N_SAM, ONE_SAM

    res = results["result"]
    gd = res["gd"]
    lines = [f"GD: ‖β∞ − β*‖ = {gd['distance']:.4f}, ‖β∞‖₁ = {gd['l1']:.4f}"]
    dev = []
    for name in (N_SAM.name, ONE_SAM.name):
        r = [x for x in res["rows"] if x["optimizer"] == name]
        done = [x for x in r if x["status"] == "converged"]
        best = min(done, key=lambda x: x["distance"]) if done else None
        if best is not None:
            lines.append(f"{name}: best ‖β∞ − β*‖ = {best['distance']:.4f} at ρ = {best['rho']:g} (GD "
                         f"{gd['distance']:.4f}); ℓ1 there {best['l1']:.4f}")
        worse = [x["rho"] for x in done if x["distance"] > gd["distance"] + x["error_bar"] + gd["error_bar"]]
        if worse:
            dev.append(f"{name} ends farther from β* than GD at ρ = {', '.join(f'{v:g}' for v in worse)}")
        grown = [x["rho"] for x in r if x["scale_max"] > 1 + 1e-9]
        if grown:
            dev.append(f"{name}: some effective scale grew above α at ρ = {', '.join(f'{v:g}' for v in grown)}")
        short = [(x["rho"], x["residual"]) for x in r if x["status"] != "converged"]
        if short:
            dev.append(f"{name} does not interpolate at ρ = " + ", ".join(f"{v:g} (residual {s:.2g})" for v, s in short))
    return lines, dev
