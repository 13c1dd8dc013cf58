"""C5's regime map over (ρ, α) for ℓ2-SAM, L = 2, one example, with the closed-form
boundaries and the computed collapse curve.

What it runs: z = (1, …, 6); ρ geometric on [0.1, 10] (30 values; 8 with --quick), α
geometric on [0.003, 20] (100 values; 30 with --quick): every (ρ, α) cell is a member of one
batch of C4's reduced scalar ODE (batch.ReducedL2), τ geometric on [1e-4, 60] (200 values).
A cell's regime: 1 collapse (N → 0 after the certificate N < ρ z_min), 2 sequential
amplification (no collapse, j† ≠ 6 somewhere on the τ grid), 3 GD-like (j† = 6 on the whole
grid). α_c(ρ) = ρ · α_c(z, 1) from the one α_c routine (grids.collapse_threshold_per_rho →
predict.alpha_c.collapse_threshold: Taylor integration of the reduced ODE, both sides
both ends checked, 13 significant digits): α_c(ρ = 1) = 0.31948487657496… (the previous batched
float64 bisection gave 0.3194848776, wrong in the 10th digit: the full flow at α = 0.3194848770
already grows).

Figure ``regime_map``: left, the regimes over (ρ, α) with alpha_all_shrink(ρ) and
alpha_gd_like(ρ) (closed forms, thresholds.py) and the computed α_c(ρ) overlaid; right, the
number of distinct features j† visits in each cell.

Expected (C5): three regimes ordered in α; collapse below α_c(ρ), with
alpha_all_shrink ≤ α_c ≤ alpha_gd_like; regime 3 from alpha_gd_like on. The flow has a
scaling symmetry ((α, ρ) → (cα, cρ) scales u by c), so every boundary is a line α ∝ ρ.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib import colors
from theorycheck.proofs.minor_first.predict import grids as G

from theorycheck import sweep as S
from theorycheck.report import plots

NAME = "regime-map"
TITLE = "C5: regimes of ℓ2-SAM over (ρ, α), closed-form boundaries and computed α_c"
Z = np.arange(1.0, 7.0)


def compute(*, quick: bool, ctx) -> dict:
    rhos = np.geomspace(0.1, 10.0, 8 if quick else 30)
    alphas = np.geomspace(0.003, 20.0, 30 if quick else 100)
    taus = S.time_grid(60.0, 200, log=True, t_min=1e-4)
    return {"regimes": G.regime_grid(Z, alphas=alphas, rhos=rhos, times=taus, **ctx.kw())}


def draw(results: dict, out: Path) -> list[Path]:
    r = results["regimes"]
    rho, alpha = r["rho"], r["alpha"]
    fig, axes = plots.figure(5.6, 4.4, ncols=2)
    ax = axes[0, 0]
    budget = bool(np.any(r["regime"] == 0))
    cmap = colors.ListedColormap((["#ffffff"] if budget else []) + ["#3a3a3a", "#2a9d8f", "#f4d35e"])
    norm = colors.BoundaryNorm(np.arange(-0.5 if budget else 0.5, 4.5), cmap.N)
    mesh = ax.pcolormesh(plots._edges(rho, True), plots._edges(alpha, True), r["regime"].T, cmap=cmap, norm=norm,
                         shading="flat", rasterized=True)
    ax.plot(rho, r["alpha_all_shrink"], "w--", lw=2.2)
    ax.plot(rho, r["alpha_all_shrink"], "k--", lw=1.1, label="alpha_all_shrink (closed form)")
    ax.plot(rho, r["alpha_c"], "w-", lw=2.2)
    ax.plot(rho, r["alpha_c"], "r-", lw=1.2, label="α_c (computed, both ends checked)")
    ax.plot(rho, r["alpha_gd_like"], "w-.", lw=2.2)
    ax.plot(rho, r["alpha_gd_like"], "k-.", lw=1.1, label="alpha_gd_like (closed form)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(plots._edges(rho, True)[[0, -1]])
    ax.set_ylim(plots._edges(alpha, True)[[0, -1]])
    ax.set_xlabel("SAM radius ρ")
    ax.set_ylabel("initial scale α")
    ax.set_title("ℓ2-SAM regimes, z = (1,…,6), L = 2")
    ax.legend(loc="upper left", fontsize=7, framealpha=0.9)
    cb = fig.colorbar(mesh, ax=ax, ticks=[0, 1, 2, 3] if budget else [1, 2, 3], pad=0.02)
    cb.ax.set_yticklabels((["budget ran out"] if budget else []) + ["1 collapse", "2 sequential", "3 GD-like"])
    ax = axes[0, 1]
    J = r["jdag"]
    nvis = np.array([[len({v for v in row.tolist() if v > 0}) for row in Jr] for Jr in J])
    vmax = int(max(nvis.max(), 1))
    cm2 = plots.jdag_colormap(vmax, False)[0]
    mesh2 = ax.pcolormesh(plots._edges(rho, True), plots._edges(alpha, True), nvis.T, cmap=cm2,
                          norm=colors.BoundaryNorm(np.arange(-0.5, vmax + 1.5), cm2.N), shading="flat", rasterized=True)
    ax.plot(rho, r["alpha_c"], "r-", lw=1.2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("SAM radius ρ")
    ax.set_ylabel("initial scale α")
    ax.set_title("number of features j† visits (τ ≤ 60)")
    fig.colorbar(mesh2, ax=ax, ticks=list(range(vmax + 1)), pad=0.02, label="distinct j† (0: collapse at once)")
    return plots.save(fig, Path(out) / "regime_map", ["png", "svg"])


def summarize(results: dict) -> tuple[list[str], list[str]]:
    r = results["regimes"]
    rho, alpha, reg = r["rho"], r["alpha"], r["regime"]
    ac, shrink, gdl = r["alpha_c"], r["alpha_all_shrink"], r["alpha_gd_like"]
    summary, dev = [], []
    k = ac / rho
    summary.append(f"α_c(ρ)/ρ = {np.median(k):.10g} for all {rho.size} ρ (relative spread {np.ptp(k) / np.median(k):.1e}: "
                   "the scaling symmetry (α, ρ) → (cα, cρ)); alpha_all_shrink/ρ = "
                   f"{np.median(shrink / rho):.6g}, alpha_gd_like/ρ = {np.median(gdl / rho):.6g}; "
                   f"α_c/alpha_all_shrink = {np.median(ac / shrink):.4g}, α_c/alpha_gd_like = {np.median(ac / gdl):.4g}.")
    if np.ptp(k) / np.median(k) > 1e-6:
        dev.append("α_c(ρ)/ρ is not constant to 1e-6: the scaling symmetry is not reproduced.")
    if not r["alpha_c_status"].all():
        dev.append(f"α_c is inconclusive (no checked bracket) for {int(np.sum(r['alpha_c_status'] == 0))} ρ.")
    counts = {int(v): int(c) for v, c in zip(*np.unique(reg, return_counts=True))}
    summary.append(f"cells per regime (0 budget, 1 collapse, 2 sequential, 3 GD-like): {counts} of {reg.size}.")
    A = alpha[None, :]
    pred1 = A < ac[:, None]
    pred3 = A >= gdl[:, None]
    bad1 = int(np.sum((reg == 1) != pred1))
    bad3 = int(np.sum((reg == 3) != pred3))
    summary.append(f"computed collapse cells vs α < α_c(ρ): {reg.size - bad1}/{reg.size} agree; regime-3 cells vs "
                   f"α ≥ alpha_gd_like(ρ): {reg.size - bad3}/{reg.size} agree.")
    if bad1:
        dev.append(f"{bad1} cells: collapse on the τ grid disagrees with the bisected α_c (cells next to α_c whose "
                   "collapse or take-off happens after τ = 60).")
    if bad3:
        near = np.sum(((reg == 3) != pred3) & (np.abs(np.log(A / gdl[:, None])) < 0.05))
        dev.append(f"{bad3} cells: regime 3 on the grid disagrees with alpha_gd_like ({int(near)} of them within 5 % "
                   "of it: j† = 5 only for τ below the first grid point 1e-4).")
    lower = bool(np.all((shrink <= ac) & (ac <= gdl)))
    summary.append(f"alpha_all_shrink ≤ α_c ≤ alpha_gd_like for every ρ: {lower}.")
    if not lower:
        dev.append("the computed α_c lies outside the closed-form bracket for some ρ.")
    return summary, dev
