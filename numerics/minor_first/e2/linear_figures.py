"""Figures of the pixel-network experiment: β as images, background-fraction curves, and the
heatmap of j†'s intensity quantile over (time, α)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from theorycheck import observe_pixels as ob
from theorycheck.optimizers import get as get_optimizer
from theorycheck.optimizers import names as optimizer_names
from theorycheck.report.plots import figure, save

__all__ = ["draw_all", "beta_grid", "background_curves", "jdag_heatmap"]

COLORS = {n: get_optimizer(n).color for n in optimizer_names()}


def _image(beta: np.ndarray, shape) -> np.ndarray:
    """β (d,) as an H×W image (channels summed: CIFAR-10's three maps added)."""
    return np.asarray(beta, float).reshape(shape).sum(-1)


def _chosen_alpha(out: dict) -> float:
    inter = [a["alpha"] for a in out["alphas"] if a["regime"] == 2]
    al = [a["alpha"] for a in out["alphas"]]
    if inter:
        return inter[len(inter) // 2]
    return al[len(al) // 2]


def beta_grid(path: Path, run, task, out: dict, columns: int = 5) -> Path:
    """Rows: optimizers; columns: the first checkpoint at or below each of ``columns`` training-loss
    levels (geometric from 0.6 to the smallest loss all rows reach) — the same α for every row."""
    alpha = _chosen_alpha(out)
    rows = [b for b, r in enumerate(out["runs"]) if r["alpha"] == alpha]
    reach = max(float(np.nanmin(run.loss[b])) for b in rows)
    levels = np.geomspace(0.6, max(reach, 1e-12) * 1.0000001, columns) if reach < 0.6 else np.array([reach])
    fig, axes = figure(2.0, 2.2, ncols=len(levels), nrows=len(rows))
    for i, b in enumerate(rows):
        r = out["runs"][b]
        for j, lev in enumerate(levels):
            ax = axes[i, j]
            ax.set_xticks([])
            ax.set_yticks([])
            k = ob.first_at_or_below(run.loss[b], lev)
            if k < 0:
                ax.text(0.5, 0.5, "not reached", ha="center", va="center", transform=ax.transAxes, fontsize=8)
                continue
            img = _image(run.beta[b, k], task.shape)
            m = float(np.max(np.abs(img))) or 1.0
            ax.imshow(img, cmap="RdBu_r", vmin=-m, vmax=m, interpolation="nearest")
            bgf = ob.background_fraction(run.beta[b, k], task.background)
            ax.set_title(f"loss {run.loss[b, k]:.3g}\nbg {bgf:.2f}", fontsize=8)
            if j == 0:
                ax.set_ylabel(r["optimizer"], fontsize=10)
    fig.suptitle(f"β as an image, {task.label}, L = {out['config']['depth']}, α = {alpha:.3g} "
                 f"({out['runs'][rows[0]]['regime_name']}); columns: matched training loss", fontsize=9)
    return save(fig, path)[0]


def background_curves(path: Path, run, task, out: dict, bg: np.ndarray) -> Path:
    """Background fraction of |β| against training loss, one panel per α (its regime in the title),
    one line per optimizer, the flat-map baseline dashed."""
    alphas = [a["alpha"] for a in out["alphas"]]
    ncol = min(4, len(alphas))
    nrow = math.ceil(len(alphas) / ncol)
    fig, axes = figure(3.1, 2.6, ncols=ncol, nrows=nrow)
    flat = out["task"]["flat_baseline"]
    for i, a in enumerate(out["alphas"]):
        ax = axes[i // ncol, i % ncol]
        for b, r in enumerate(out["runs"]):
            if r["alpha"] != a["alpha"]:
                continue
            ok = np.isfinite(run.loss[b]) & np.isfinite(bg[b])
            ax.plot(run.loss[b][ok], bg[b][ok], "-o", ms=2, color=COLORS[r["optimizer"]], label=r["optimizer"])
        ax.axhline(flat, ls="--", color="0.5", lw=1, label="flat map")
        ax.set_xscale("log")
        ax.invert_xaxis()
        ax.set_ylim(0, 1)
        ax.set_title(f"α = {a['alpha']:.3g}: {a['regime_name']}", fontsize=9)
        ax.set_xlabel("training loss (training →)", fontsize=8)
        if i % ncol == 0:
            ax.set_ylabel("background fraction of |β|", fontsize=8)
        if i == 0:
            ax.legend(fontsize=7)
    for j in range(len(alphas), nrow * ncol):
        axes[j // ncol, j % ncol].axis("off")
    ac = out["regimes"]["alpha_collapse"].get("bracket")
    agd = out["regimes"]["alpha_gd_like"]["value"]
    fig.suptitle(f"{task.label}: background fraction vs training loss (α_c ∈ {['—'] if ac is None else [round(v, 4) for v in ac]}, "
                 f"α_gd = {'beyond the scan' if agd is None else f'{agd:.3g}'}, ρ = {out['regimes']['rho']})", fontsize=9)
    return save(fig, path)[0]


def jdag_heatmap(path: Path, run, task, out: dict, q: np.ndarray) -> Path:
    """Per optimizer: the intensity quantile of j†(t) (0 dimmest pixel, 1 brightest) over
    (time, α); the regime boundaries α_c and α_gd as lines."""
    from matplotlib import colors

    alphas = np.array([a["alpha"] for a in out["alphas"]])
    opts = list(dict.fromkeys(r["optimizer"] for r in out["runs"]))
    t = run.times
    tt = t[1:]  # log time: the start (t = 0) is left out
    fig, axes = figure(3.6, 3.2, ncols=len(opts))
    ac = out["regimes"]["alpha_collapse"].get("bracket")
    agd = out["regimes"]["alpha_gd_like"]["value"]
    im = None
    for i, op in enumerate(opts):
        ax = axes[0, i]
        M = np.full((alphas.size, tt.size), np.nan)
        for b, r in enumerate(out["runs"]):
            if r["optimizer"] == op:
                M[int(np.argmin(np.abs(alphas - r["alpha"])))] = q[b, 1:]
        xe = np.concatenate([[tt[0] / math.sqrt(tt[1] / tt[0])], np.sqrt(tt[1:] * tt[:-1]),
                             [tt[-1] * math.sqrt(tt[-1] / tt[-2])]])
        la = np.log(alphas)
        if alphas.size > 1:
            mid = np.exp((la[1:] + la[:-1]) / 2)
            ye = np.concatenate([[alphas[0] ** 2 / mid[0]], mid, [alphas[-1] ** 2 / mid[-1]]])
        else:
            ye = np.array([alphas[0] / 1.5, alphas[0] * 1.5])
        im = ax.pcolormesh(xe, ye, np.ma.masked_invalid(M), cmap="viridis", norm=colors.Normalize(0, 1))
        ax.set_xscale("log")
        ax.set_yscale("log")
        for v, name in ((ac[1] if ac else None, "α_c"), (agd, "α_gd")):
            if v is not None:
                ax.axhline(v, color="w", ls="--", lw=1)
                ax.text(xe[0], v, f" {name}", color="w", va="bottom", fontsize=7)
        ax.set_title(op, fontsize=10)
        ax.set_xlabel({"tau": "rescaled time τ", "t": "time t", "discrete": "t = kη"}[out["config"]["time_kind"]],
                      fontsize=8)
        if i == 0:
            ax.set_ylabel("init scale α", fontsize=8)
    cb = fig.colorbar(im, ax=list(axes[0]), shrink=0.9)
    cb.set_label("intensity quantile of j† (0 dim, 1 bright)", fontsize=8)
    fig.suptitle(f"{task.label}: where j†(t) sits by pixel intensity (blank: stopped)", fontsize=9)
    return save(fig, path)[0]


def draw_all(folder: Path, run, task, out: dict, bg: np.ndarray, q: np.ndarray) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [beta_grid(folder / "beta_grid.png", run, task, out),
             background_curves(folder / "background_curves.png", run, task, out, bg),
             jdag_heatmap(folder / "jdag_heatmap.png", run, task, out, q)]
    return [str(p) for p in paths]
