"""Kernel-to-rich transition: for one underdetermined regression problem (n = 3, d = 8, a
2-sparse target), the limit of the signed flow from scale α, for D = 2 and 3 and α from 10⁻²
to 10, observed (flow, with its error bar) and predicted (argmin Q_α); its distance to the
minimum-ℓ1 and minimum-ℓ2 interpolators. What the paper leads us to expect: flow = argmin Q_α
at every α; → min-ℓ1 as α → 0, → min-ℓ2 as α → ∞; the transition sharper for D = 3."""

from __future__ import annotations

from pathlib import Path

import numpy as np

NAME = "transition"
TITLE = "kernel-rich: the limit of the signed flow from α = 10⁻² to 10 (D = 2, 3), flow against argmin Q_α"


def problem():
    rng = np.random.default_rng(7)
    X = np.round(rng.standard_normal((3, 8)), 3)
    b = np.zeros(8)
    b[[1, 5]] = [1.5, -1.0]
    return X, X @ b


def compute(*, quick: bool = False, ctx=None) -> dict:
    """The experiment's one result, ``{"result": {...}}`` (JSON-able; ``ctx`` is not used: one process)."""
    return {"result": _compute(quick)}


def _compute(quick: bool) -> dict:
    from theorycheck.optimizers import GD
    from theorycheck.solvers.interpolate import argmin_Q, min_l1, min_l2
    from theorycheck.solvers.pm_flow import DEFAULT_BUDGET, flow_pm

    X, y = problem()
    l1, l2 = min_l1(X, y), min_l2(X, y)
    alphas = np.logspace(-2, 1, 4 if quick else 13)
    rows = []
    for D in (2, 3):
        for a in alphas:
            fl = flow_pm(X, y, optimizer=GD, depth=D, alpha=float(a), budget=DEFAULT_BUDGET.but(max_seconds=60.0))
            pr = argmin_Q(X, y, depth=D, alpha=float(a))
            rows.append({"depth": D, "alpha": float(a), "flow_status": fl.status, "flow_error_bar": fl.error_bar,
                         "flow_vs_predict": float(np.linalg.norm(fl.beta - pr.beta)),
                         "to_l1": float(np.linalg.norm(pr.beta - l1.beta)),
                         "to_l2": float(np.linalg.norm(pr.beta - l2.beta)),
                         "flow_t": fl.t, "flow_beta": fl.beta.tolist(), "predicted_beta": pr.beta.tolist()})
    return {"X": X.tolist(), "y": y.tolist(), "beta_l1": l1.beta.tolist(), "beta_l2": l2.beta.tolist(),
            "l1_unique": l1.unique, "rows": rows}


def draw(results: dict, out: Path) -> list[Path]:
    res = results["result"]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for D, mk in ((2, "o"), (3, "s")):
        r = [x for x in res["rows"] if x["depth"] == D]
        a = [x["alpha"] for x in r]
        ax[0].loglog(a, [max(x["to_l1"], 1e-16) for x in r], mk + "-", label=f"D={D}: to min-ℓ1")
        ax[0].loglog(a, [max(x["to_l2"], 1e-16) for x in r], mk + "--", label=f"D={D}: to min-ℓ2")
        ax[1].loglog(a, [max(x["flow_vs_predict"], 1e-16) for x in r], mk + "-", label=f"D={D}: ‖flow − argmin Q‖")
        ax[1].loglog(a, [x["flow_error_bar"] for x in r], mk + ":", label=f"D={D}: error bar")
    ax[0].set(xlabel="α", ylabel="distance", title="the limit between rich (ℓ1) and kernel (ℓ2)")
    ax[1].set(xlabel="α", ylabel="‖β‖ difference", title="flow against prediction")
    for x in ax:
        x.legend(fontsize=7)
    fig.tight_layout()
    from theorycheck.report.plots import save

    paths = save(fig, out / f"kernel_rich_{NAME}", formats=("png", "svg"))
    plt.close(fig)
    return paths


def summarize(results: dict) -> tuple[list[str], list[str]]:
    res = results["result"]
    lines, dev = [], []
    for D in (2, 3):
        r = [x for x in res["rows"] if x["depth"] == D]
        worst = max(x["flow_vs_predict"] for x in r)
        ratio = max(x["flow_vs_predict"] / x["flow_error_bar"] for x in r)
        lines.append(f"D={D}: flow vs argmin Q_α over α ∈ [{r[0]['alpha']:.0e}, {r[-1]['alpha']:.0e}]: largest "
                     f"difference {worst:.1e}, at most {ratio:.2f} of the flow's error bar")
        lines.append(f"D={D}: distance to min-ℓ1 {r[0]['to_l1']:.1e} at α = {r[0]['alpha']:.0e}; to min-ℓ2 "
                     f"{r[-1]['to_l2']:.1e} at α = {r[-1]['alpha']:.0e}")
        if ratio > 1:
            dev.append(f"D={D}: the flow and argmin Q_α differ by more than the error bar")
        if any(x["flow_status"] != "converged" for x in r):
            dev.append(f"D={D}: some flows ran out of budget")
    return lines, dev

