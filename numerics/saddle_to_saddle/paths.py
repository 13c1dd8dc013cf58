"""Saddle-to-saddle paths: β_j(t̃) of the gradient flow at α = 1e-4, 1e-10, 1e-30, 1e-100, 1e-300 (float64,
log chart) over the piecewise-constant limit of the exact jump process, on the instance where a coordinate
enters, leaves and re-enters (X = [[0, 0, −1], [−1, −3, 1]], y = (3, −2)); one mpmath run at α = 1e-2048
(30 digits) to the first observed jump. Table: the gaps t̂_k − t̃_k, gap·ln(1/α), and the fit
gap = a + b/ln(1/α) (flows.py for the definitions). What the paper leads us to expect: the paths tend to the
limit process, with jump times off by O(1/ln(1/α))."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np

NAME = "paths"
TITLE = "saddle-to-saddle: β_j(t̃) at α = 1e-4 … 1e-300 over the jump process, and the jump-time gaps"
X = [["0", "0", "-1"], ["-1", "-3", "1"]]  # flows.LEAVES
Y = ["3", "-2"]
FIGURE = Path("docs/figures/saddle_to_saddle_paths.png")

from theorycheck.proofs.saddle_to_saddle.flows import mp_first_jump  # noqa: E402, F401


def compute(*, quick: bool = False, ctx=None) -> dict:
    from theorycheck.proofs.saddle_to_saddle.flows import ALPHAS, first_gap_constant, sweep

    alphas = ALPHAS[1::2] + ALPHAS[-1:] if quick else ALPHAS
    s = sweep(X, Y, alphas)
    p = s["process"]
    tmax = float(p.jumps[-1].time) + 0.5
    grid = np.linspace(0.0, tmax, 600)
    curves = [{"alpha": r["alpha"], "beta": [r["run"].beta_at(t).tolist() for t in grid]} for r in s["rows"]]
    rows = [{k: v for k, v in r.items() if k != "run"} for r in s["rows"]]
    return {"result": {"X": X, "y": Y, "grid": grid.tolist(), "curves": curves, "rows": rows, "fits": s["fits"],
                       "jumps": [{"time": str(j.time), "beta": [str(b) for b in j.beta],
                                  "entered": list(j.entered), "left": list(j.left)} for j in p.jumps],
                       "first_gap_constant": first_gap_constant(p), "mp": mp_first_jump()}}


def _limit(res, grid):
    d = len(res["X"][0])
    out = np.zeros((len(grid), d))
    for j in res["jumps"]:
        out[grid >= float(Fraction(j["time"]))] = [float(Fraction(b)) for b in j["beta"]]
    return out


def draw(results: dict, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from theorycheck.report.plots import save

    res = results["result"]
    grid = np.array(res["grid"])
    lim = _limit(res, grid)
    d = lim.shape[1]
    fig, axes = plt.subplots(1, d, figsize=(4 * d, 3.4), sharex=True)
    cmap = plt.get_cmap("viridis")
    for j, ax in enumerate(np.atleast_1d(axes)):
        for c, cur in enumerate(res["curves"]):
            ax.plot(grid, np.array(cur["beta"])[:, j], color=cmap(c / max(len(res["curves"]) - 1, 1)), lw=1.2,
                    label=f"α = {cur['alpha']}")
        ax.plot(grid, lim[:, j], "k--", lw=1.4, label="jump process (α → 0)")
        ax.set(xlabel="t̃ = t / ln(1/α)", ylabel=f"β_{j + 1}", title=f"coordinate {j + 1}")
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.suptitle("saddle-to-saddle: the flow at tiny α over the exact jump process", fontsize=10)
    fig.tight_layout()
    paths = save(fig, out / f"saddle_to_saddle_{NAME}", formats=("png", "svg"))
    plt.close(fig)
    return paths


def summarize(results: dict) -> tuple[list[str], list[str]]:
    res = results["result"]
    lines, dev = [], []
    for r in res["rows"]:
        g = ", ".join("—" if v is None else f"{v:+.3e}" for v in r["gaps"])
        sg = ", ".join("—" if v is None else f"{v:+.4f}" for v in r["scaled_gaps"])
        pd = ", ".join("—" if v is None else f"{v:.1e}" for v in r["plateau_distance"])
        lines.append(f"α = {r['alpha']} ({r['status']}, {r['steps']} steps): gaps {g}; gap·ln(1/α) {sg}; "
                     f"plateau distances {pd}")
    for k, f in enumerate(res["fits"], 1):
        if f is None:
            continue
        lines.append(f"jump {k}: gap = a + b/ln(1/α), a = {f['a']:+.2e} ± {f['a_se']:.1e}, "
                     f"b = {f['b']:+.6f} ± {f['b_se']:.1e}")
        if abs(f["a"]) > 3 * f["a_se"] + 1e-4:
            dev.append(f"jump {k}: the gap does not extrapolate to 0 in 1/ln(1/α)")
    c = res["first_gap_constant"]
    if c is not None:
        lines.append(f"first gap: closed-form constant {c:+.6f} (gap·ln(1/α) at the smallest α: "
                     f"{res['rows'][-1]['scaled_gaps'][0]:+.6f})")
    m = res["mp"]
    lines.append(f"α = {m['alpha']} at {m['digits']} digits ({m['status']}, {m['steps']} steps): t̂₁ = "
                 f"{m['observed']}, gap·ln(1/α) = {m['scaled_gap']}")
    return lines, dev
