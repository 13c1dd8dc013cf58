"""Figures (matplotlib, Agg backend): β_j(t) on a log scale with j†(t) along the time axis."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import TheorycheckError
from .observe import Switch, dominant_index, switches
from .trajectory import Trajectory


def _samples(traj: Trajectory, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Stored steps plus, for float64 trajectories, n evenly spaced dense samples."""
    t = traj.t
    la = traj.log_abs_beta
    if traj.precision is None and traj.step_bounds().size and t[-1] > t[0]:
        extra = np.linspace(t[0], t[-1], n)
        t_all = np.unique(np.concatenate([t, extra]))
        la = np.array([traj.at(s)[0] for s in t_all])
        return t_all, la
    return t, la


def plot_trajectory(traj: Trajectory, path: str | Path, *, title: str | None = None,
                    sw: list[Switch] | None = None) -> Path:
    """Write a PNG/SVG/PDF (by extension): top, log10|β_j(t)| for every feature j; bottom
    strip, j†(t) as coloured segments with the switch times marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise TheorycheckError(f"--plot {path}: give a file name ending in .png, .svg or .pdf")
    t, la = _samples(traj)
    log10 = la / np.log(10)
    d = la.shape[1]
    colors = plt.get_cmap("tab10" if d <= 10 else "viridis")(np.linspace(0, 1, max(d, 2)) if d > 10 else np.arange(d) % 10)
    fig, (ax, strip) = plt.subplots(2, 1, sharex=True, figsize=(8, 5.2), gridspec_kw={"height_ratios": [5, 1]})
    for j in range(d):
        y = np.where(np.isfinite(log10[:, j]), log10[:, j], np.nan)
        ax.plot(t, y, color=colors[j], lw=1.5, label=f"|β_{j + 1}|")
    ax.set_ylabel("log10 |β_j|")
    ax.grid(alpha=0.3)
    sw = switches(traj) if sw is None else sw
    for s in sw:
        ax.axvline(s.time, color="0.5", ls=":", lw=0.8)
    if traj.collapse_time is not None:
        ax.axvline(traj.collapse_time, color="k", ls="--", lw=1, label="collapse")
    if traj.blowup_time is not None:
        ax.axvline(traj.blowup_time, color="r", ls="--", lw=1, label="blow-up")
    ax.legend(loc="best", fontsize=8, ncol=2 if d > 4 else 1)
    kind = "τ (rescaled time)" if traj.time_kind == "rescaled" else "t"
    s = traj.setting
    ax.set_title(title or f"{s.optimizer}, L = {s.depth}, ρ = {s.rho:g}, n = {s.n} — stopped: {traj.stopped_because}",
                 fontsize=10)
    # j† strip
    idx = [dominant_index(row) for row in la]
    bounds = [t[0]] + [w.time for w in sw] + [t[-1]]
    labels = [idx[0]] + [w.to for w in sw]
    for a, b, j in zip(bounds[:-1], bounds[1:], labels):
        c = colors[j - 1] if j > 0 else (0.85, 0.85, 0.85, 1.0)
        strip.axvspan(a, b, color=c, alpha=0.8)
        if b > a:
            strip.text(0.5 * (a + b), 0.5, f"j†={j}" if j else "0", ha="center", va="center", fontsize=8,
                       clip_on=True)
    strip.set_yticks([])
    strip.set_ylabel("j†", rotation=0, labelpad=12)
    strip.set_xlabel(kind)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
