"""Directional convergence: the KKT residual of the margin-normalised direction of the
product flow (positive balanced start, exponential loss) against log t, for L = 2, 3, 4 on
one separable data set (n = 4, d = 5), with the ℓ_{2/L} problem as stated and restricted to
the reachable orthant β ≥ 0. What the papers lead us to expect: the residual tends to 0 (slowly:
a power of 1/log t)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

NAME = "directional"
TITLE = "lp-margin: KKT residual of the limit direction against log t (L = 2, 3, 4; quick run: 2, 3)"


def figure_title(depths) -> str:
    """The figure's title: the norm rendered by matplotlib's mathtext, the depths drawn."""
    return (r"direction → KKT point of min $\Vert\beta\Vert_{2/L}$"
            f" (L = {', '.join(str(int(L)) for L in depths)})")


def problem() -> np.ndarray:
    rng = np.random.default_rng(11)
    X = np.round(rng.standard_normal((4, 5)), 2)
    b0 = np.array([1.0, 0.2, 0.0, 0.6, 0.1])
    return np.sign(X @ b0)[:, None] * X


def compute(*, quick: bool = False, ctx=None) -> dict:
    """The experiment's one result, ``{"result": {...}}`` (JSON-able; ``ctx`` is not used: one process)."""
    return {"result": _compute(quick)}


def _compute(quick: bool) -> dict:
    from theorycheck.solvers.lp_flow import flow_margin
    from theorycheck.solvers.lp_limits import aitken_limit, kkt_residual

    Z = problem()
    rows = []
    for L in (2, 3) if quick else (2, 3, 4):
        f = flow_margin(Z, depth=L, loss="exponential")
        free = [kkt_residual(d, Z, L)["residual"] for d in f.directions]
        orth = [kkt_residual(d, Z, L, orthant=True)["residual"] for d in f.directions]
        rows.append({"depth": L, "status": f.status, "log_t": f.log_t, "kkt": free, "kkt_orthant": orth,
                     "limit": aitken_limit(free), "limit_orthant": aitken_limit(orth),
                     "direction": f.directions[-1].tolist() if f.directions else None})
    return {"Z": Z.tolist(), "rows": rows}


def draw(results: dict, out: Path) -> list[Path]:
    res = results["result"]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for r in res["rows"]:
        ax.loglog(r["log_t"], np.maximum(r["kkt"], 1e-18), "o-", label=f"L={r['depth']}: as stated")
        ax.loglog(r["log_t"], np.maximum(r["kkt_orthant"], 1e-18), "x--", label=f"L={r['depth']}: in β ≥ 0")
    ax.set(xlabel="log t", ylabel="KKT residual", title=figure_title([r["depth"] for r in res["rows"]]))
    ax.legend(fontsize=7)
    fig.tight_layout()
    from theorycheck.report.plots import save

    paths = save(fig, out / f"lp_margin_{NAME}", formats=("png", "svg"))
    plt.close(fig)
    return paths


def summarize(results: dict) -> tuple[list[str], list[str]]:
    res = results["result"]
    lines, dev = [], []
    for r in res["rows"]:
        a, se = r["limit"]
        ao, seo = r["limit_orthant"]
        lines.append(f"L={r['depth']}: residual {r['kkt'][-1]:.1e} at log t = {r['log_t'][-1]:.1e}, extrapolated "
                     f"{a:.1e} ± {se:.1e}; in the orthant {r['kkt_orthant'][-1]:.1e}, extrapolated {ao:.1e} ± {seo:.1e}")
        if abs(a) > 3 * se + 1e-6:
            dev.append(f"L={r['depth']}: the residual of the problem as stated does not extrapolate to 0")
    return lines, dev

