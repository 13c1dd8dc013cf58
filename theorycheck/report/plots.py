"""Figures (matplotlib, Agg backend, no display needed), drawn from computed results only:
a trajectory's β_j(t) on a log scale with j†(t) along the time axis (:func:`plot_trajectory`),
and for sweeps j† heatmaps with integer colorbars, regime maps and curves
(:func:`draw_heatmap`, :func:`heatmap_figure`, :func:`save`; PNG and/or SVG)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg", force=False)  # harmless when a backend is already chosen

import numpy as np  # noqa: E402
from matplotlib import colors  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from theorycheck.observe import Switch, dominant_index, switches  # noqa: E402
from theorycheck.optimizers import get as get_optimizer  # noqa: E402
from theorycheck.optimizers import names as optimizer_names  # noqa: E402
from theorycheck.outputs import FIGURE_SUFFIXES, make_parent, output_file  # noqa: E402
from theorycheck.solvers.trajectory import Trajectory  # noqa: E402
from theorycheck.vocabulary import TimeKind


def _samples(traj: Trajectory, n: int = 400, log: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Stored steps plus, for float64 trajectories, n dense samples (evenly spaced, or
    geometric from the first positive time when ``log``)."""
    t = traj.t
    la = traj.log_abs_beta
    if traj.digits is None and traj.step_bounds().size and t[-1] > t[0]:
        extra = np.linspace(t[0], t[-1], n)
        pos = t[t > 0]
        if log and pos.size:
            extra = np.concatenate([extra, np.geomspace(pos[0], t[-1], n)])
        t_all = np.unique(np.concatenate([t, extra]))
        la = np.array([traj.at(s)[0] for s in t_all])
        return t_all, la
    return t, la


def use_log_time(t_end: float, switch_times: Sequence[float], decades: float = 2.0) -> bool:
    """A log time axis when the switches (or the first switch and the end) span more than
    ``decades`` decades: on a linear axis the early ones would be crushed into one pixel."""
    pos = [x for x in switch_times if x > 0]
    if not pos or not t_end > 0:
        return False
    return bool(np.log10(max(max(pos), t_end) / min(pos)) > decades)


def _strip_labels(bounds: Sequence[float], labels: Sequence[int], to_axis, min_gap: float = 0.055):
    """(x, text) of the j† labels that fit: a segment gets its label when it is at least
    ``min_gap`` of the axis wide (in axis fraction, after ``to_axis``) and the label does
    not overlap the previous one. Returns the labels kept."""
    kept, right = [], -np.inf
    for a, b, j in zip(bounds[:-1], bounds[1:], labels):
        fa, fb = to_axis(a), to_axis(b)
        if not (np.isfinite(fa) and np.isfinite(fb)) or fb - fa < min_gap:
            continue
        mid = 0.5 * (fa + fb)
        if mid - min_gap / 2 < right:
            continue
        kept.append((mid, f"j†={j}" if j else "0"))
        right = mid + min_gap / 2
    return kept


def plot_trajectory(traj: Trajectory, path: str | Path, *, title: str | None = None,
                    sw: list[Switch] | None = None) -> Path:
    """Write a PNG/SVG/PDF (by extension): top, log10|β_j(t)| for every feature j; bottom
    strip, j†(t) as coloured segments with the switch times marked. The time axis is
    logarithmic when the switches span decades (:func:`use_log_time`); j† labels are
    written only where they fit without overlapping."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = make_parent(output_file(path, "path", suffixes=FIGURE_SUFFIXES), "path")
    sw = switches(traj) if sw is None else sw
    log_t = use_log_time(float(traj.t[-1]), [w.time for w in sw])
    t, la = _samples(traj, log=log_t)
    if log_t:  # t = 0 has no place on a log axis
        keep = t > 0
        t, la = t[keep], la[keep]
    log10 = la / np.log(10)
    d = la.shape[1]
    colors = plt.get_cmap("tab10" if d <= 10 else "viridis")(np.linspace(0, 1, max(d, 2)) if d > 10 else np.arange(d) % 10)
    fig, (ax, strip) = plt.subplots(2, 1, sharex=True, figsize=(8, 5.2), gridspec_kw={"height_ratios": [5, 1]})
    for j in range(d):
        y = np.where(np.isfinite(log10[:, j]), log10[:, j], np.nan)
        ax.plot(t, y, color=colors[j], lw=1.5, label=f"|β_{j + 1}|")
    ax.set_ylabel("log10 |β_j|")
    ax.grid(alpha=0.3)
    for s in sw:
        ax.axvline(s.time, color="0.5", ls=":", lw=0.8)
    if traj.collapse_time is not None:
        ax.axvline(traj.collapse_time, color="k", ls="--", lw=1, label="collapse")
    if traj.blowup_time is not None:
        ax.axvline(traj.blowup_time, color="r", ls="--", lw=1, label="blow-up")
    ax.legend(loc="best", fontsize=8, ncol=2 if d > 4 else 1)
    kind = "τ (rescaled time)" if traj.time_kind == TimeKind.RESCALED else "t"
    s = traj.setting
    ax.set_title(title or f"{s.optimizer}, L = {s.depth}, ρ = {s.rho:g}, n = {s.n} — stopped: {traj.stopped_because}",
                 fontsize=10)
    # j† strip
    idx = [dominant_index(row) for row in la]
    t0, t1 = float(t[0]), float(t[-1])
    bounds = [t0] + [min(max(w.time, t0), t1) for w in sw] + [t1]
    labels = [sw[0].from_ if sw else idx[0]] + [w.to for w in sw]
    for a, b, j in zip(bounds[:-1], bounds[1:], labels):
        c = colors[j - 1] if j > 0 else (0.85, 0.85, 0.85, 1.0)
        strip.axvspan(a, b, color=c, alpha=0.8)
    if log_t:
        ax.set_xscale("log")
        span = np.log10(t1 / t0) if t1 > t0 else 1.0

        def to_axis(x):
            return np.log10(x / t0) / span if x > 0 else -np.inf
    else:
        span = (t1 - t0) or 1.0

        def to_axis(x):
            return (x - t0) / span
    ax.set_xlim(t0, t1)
    for x, text in _strip_labels(bounds, labels, to_axis):
        strip.text(x, 0.5, text, ha="center", va="center", fontsize=8, transform=strip.transAxes, clip_on=True)
    strip.set_yticks([])
    strip.set_ylabel("j†", rotation=0, labelpad=12)
    strip.set_xlabel(kind + (" (log scale)" if log_t else ""))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# ---------------------------------------------------------------- sweeps: heatmaps of j†
#: optimizer name -> its title in figures (the registry's)
OPTIMIZER_LABEL = {n: get_optimizer(n).title for n in optimizer_names()}
#: axis label by time kind (results saved before the one word pair said "tau" / "t")
TIME_LABEL = {**{k: k.label for k in TimeKind}, "tau": TimeKind.RESCALED.label, "t": TimeKind.REAL.label}
#: cells: −1 not computed (white), 0 collapse β = 0 (dark grey), 1..d features
NOT_COMPUTED, COLLAPSED = "#ffffff", "#3a3a3a"


def jdag_colormap(d: int, with_unknown: bool = True) -> tuple[colors.ListedColormap, colors.BoundaryNorm]:
    """A discrete colormap for j† ∈ {−1, 0, 1..d}: white (−1, only ``with_unknown``), dark
    grey (0), then viridis steps."""
    import matplotlib as mpl

    base = mpl.colormaps["viridis"].resampled(max(d, 2))
    cols = ([NOT_COMPUTED] if with_unknown else []) + [COLLAPSED] + [base(i) for i in range(d)]
    cmap = colors.ListedColormap(cols)
    norm = colors.BoundaryNorm(np.arange(-1.5 if with_unknown else -0.5, d + 1.5), cmap.N)
    return cmap, norm


def _edges(x: np.ndarray, log: bool) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.size == 1:
        return np.array([x[0] * 0.9, x[0] * 1.1]) if log else np.array([x[0] - 0.5, x[0] + 0.5])
    if log and np.all(x > 0):
        lx = np.log(x)
        mid = np.exp((lx[1:] + lx[:-1]) / 2)
        return np.concatenate([[np.exp(2 * lx[0] - np.log(mid[0]))], mid, [np.exp(2 * lx[-1] - np.log(mid[-1]))]])
    mid = (x[1:] + x[:-1]) / 2
    return np.concatenate([[max(2 * x[0] - mid[0], 0.0) if x[0] >= 0 else 2 * x[0] - mid[0]], mid,
                           [2 * x[-1] - mid[-1]]])


def _is_log(x: np.ndarray) -> bool:
    x = np.asarray(x, float)
    if x.size < 3 or np.any(x <= 0):
        return False
    r = x[1:] / x[:-1]
    return bool(np.allclose(r, r[0], rtol=1e-6)) and not np.allclose(np.diff(x), x[1] - x[0], rtol=1e-6)


def draw_heatmap(ax, jdag: np.ndarray, alpha: np.ndarray, time: np.ndarray, d: int, *, title: str = "",
                 time_kind: str = TimeKind.RESCALED, lines: Sequence[tuple[float, str, str]] = (), colorbar: bool = True,
                 fig: Figure | None = None):
    """j† (A, T) as a heatmap: x = time, y = α (log axis when the α grid is geometric),
    a colorbar with integer ticks (0 = collapse). ``lines``: (α, label, style) horizontal
    markers (thresholds)."""
    unknown = bool(np.any(np.asarray(jdag) == -1))
    cmap, norm = jdag_colormap(d, unknown)
    log_a, log_t = _is_log(alpha), _is_log(time)
    mesh = ax.pcolormesh(_edges(time, log_t), _edges(alpha, log_a), np.asarray(jdag), cmap=cmap, norm=norm,
                         shading="flat", rasterized=True)
    if log_a:
        ax.set_yscale("log")
    if log_t:
        ax.set_xscale("log")
    ax.set_xlabel(TIME_LABEL.get(time_kind, time_kind))
    ax.set_ylabel("initial scale α")
    if title:
        ax.set_title(title)
    for value, label, style in lines:
        if value is not None and np.isfinite(value) and alpha.min() <= value <= alpha.max():
            ax.axhline(value, color="white", lw=1.6, ls=style)
            ax.axhline(value, color="black", lw=0.8, ls=style, label=label)
    if lines:
        handles = [h for h in ax.get_legend_handles_labels()[0]]
        if handles:
            ax.legend(loc="lower right", fontsize=7, framealpha=0.85)
    if colorbar and fig is not None:
        ticks = list(range(0, d + 1)) if d <= 12 else [0, 1] + list(np.unique(np.linspace(1, d, 9).round().astype(int)))
        cb = fig.colorbar(mesh, ax=ax, ticks=ticks, pad=0.02)
        cb.set_label("j† (0: β = 0, collapse" + ("; −1 white: not computed)" if unknown else ")"))
        cb.ax.set_yticklabels([str(t) for t in ticks])
    return mesh


def figure(width: float = 6.0, height: float = 4.0, ncols: int = 1, nrows: int = 1, **kw) -> tuple[Figure, np.ndarray]:
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig, axes


def save(fig: Figure, path: str | Path, formats: Sequence[str] | None = None) -> list[Path]:
    """Save ``fig``: at ``path`` (its suffix chooses the format) or, with ``formats``, at
    path.with_suffix(f) for each f in formats ("png", "svg")."""
    out = []
    if not formats:
        path = output_file(path, "path", suffixes=FIGURE_SUFFIXES)
    path = make_parent(Path(path), "path")
    if formats:
        for f in formats:
            p = path.with_suffix("." + f)
            fig.savefig(p, dpi=130)
            out.append(p)
    else:
        fig.savefig(path, dpi=130)
        out.append(path)
    return out


def data_label(data, n: int, max_entries: int = 6) -> str:
    """"z = (1, 2, 3)" for one example (shortened past ``max_entries``), "n examples" otherwise."""
    if data is None or n != 1:
        return "one example" if n == 1 else f"{n} examples"
    z = np.asarray(data, float).reshape(-1)
    shown = ", ".join(f"{v:.4g}" for v in z[:max_entries]) + (f", … ({z.size} entries)" if z.size > max_entries else "")
    return f"z = ({shown})"


def threshold_lines(result, *, alpha_c: bool = True) -> list[tuple[float, str, str]]:
    """The (α, label, style) lines a heatmap of ``result`` shows: for ℓ2-SAM, L = 2, one example
    with a positive entry, the closed forms alpha_all_shrink and alpha_gd_like and (``alpha_c``)
    the floating-point α_c the heatmap computed; for ℓ∞-SAM with ρ > 0, α = ρ (where each coordinate's fate changes)."""
    m = result.meta
    if get_optimizer(m["optimizer"]).discontinuous and m["rho"] > 0:
        return [(float(m["rho"]), "α = ρ", ":")]
    thr = m.get("thresholds")
    if not thr:
        return []
    lines = [(thr["alpha_all_shrink"], "alpha_all_shrink", "--"), (thr["alpha_gd_like"], "alpha_gd_like", "-.")]
    if alpha_c and thr.get("alpha_collapse") is not None:
        lines.append((thr["alpha_collapse"], "α_c (collapse threshold)", "-"))
    return lines


def heatmap_figure(result, *, title: str | None = None, lines: Sequence[tuple[float, str, str]] | None = None) -> Figure:
    """The figure of ``theorycheck heatmap --out``, from a :class:`~theorycheck.sweep.SweepResult`
    of kind "heatmap" (what :func:`theorycheck.heatmap` returns): j† over (time, α), a log α axis
    for a geometric grid, an integer colorbar (0 = collapse), z in the title and the threshold
    lines of :func:`threshold_lines` (``lines`` replaces them; ``[]``: none). Save it with
    :func:`save` or show it in a notebook (a matplotlib Figure)."""
    m = result.meta
    lines = threshold_lines(result) if lines is None else lines
    fig, axes = figure(6.4, 4.2)
    opt = OPTIMIZER_LABEL.get(m["optimizer"], m["optimizer"])
    t = title or (f"j† of {opt}, L = {m['depth']}, ρ = {m['rho']:g}, " + data_label(m.get("data"), m["n"]))
    draw_heatmap(axes[0, 0], result["jdag"], result["alpha"], result["time"], int(m["d"]), title=t,
                 time_kind=m["time_kind"], lines=lines, fig=fig)
    return fig
