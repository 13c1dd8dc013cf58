"""Figures of the E2 experiment: the Grad-CAM grid and the training curves (PNG)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from theorycheck.optimizers import get as get_optimizer
from theorycheck.optimizers import names as optimizer_names

__all__ = ["curves", "gradcam_grid"]

_COLOURS = {n: get_optimizer(n).color for n in optimizer_names()}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def gradcam_grid(result: dict, path: str | Path) -> Path:
    """Rows: the input images (background hatched), then optimizer × α (first seed, last
    step); columns: the same test images. Each map is scaled to its own maximum; the
    title is that image's background fraction ("blank" for an all-zero map)."""
    plt = _plt()
    grid = result["_grid"]
    runs, images, masks = grid["runs"], grid["images"], grid["masks"]
    n_cols = len(images)
    n_rows = 1 + len(runs)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(1.35 * n_cols + 1.2, 1.45 * n_rows), squeeze=False)
    gray = images.shape[-1] == 1

    def show(ax, img):
        ax.imshow(img[..., 0] if gray else img, cmap="gray" if gray else None, vmin=0, vmax=255)
        ax.set_xticks([])
        ax.set_yticks([])

    for j in range(n_cols):
        show(axes[0, j], images[j])
        axes[0, j].contour(masks[j].astype(float), levels=[0.5], colors="red", linewidths=0.7)
    axes[0, 0].set_ylabel("input\n(red: bg edge)", fontsize=8)
    for i, run in enumerate(runs, start=1):
        for j in range(n_cols):
            ax = axes[i, j]
            show(ax, images[j])
            m = run.grid_maps[j]
            total = m.sum()
            if total > 0:
                ax.imshow(m / m.max(), cmap="jet", alpha=0.5, vmin=0, vmax=1)
                frac = float((m * masks[j]).sum() / total)
                ax.set_title(f"bg {frac:.2f}", fontsize=7, pad=2)
            else:
                ax.set_title("blank", fontsize=7, pad=2)
        axes[i, 0].set_ylabel(f"{run.optimizer}\nα={run.alpha:g}", fontsize=8)
    fig.suptitle(f"Grad-CAM ({result['background']['upsample']} upsampling), {result['dataset']}, "
                 f"seed {result['config']['seed']}, step {result['steps']}", fontsize=9)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def curves(result: dict, path: str | Path) -> Path:
    """Columns: init scales; rows: training loss, test accuracy, background fraction
    (mean over seeds, band = min..max), with both flat-map baselines dashed."""
    plt = _plt()
    from matplotlib.ticker import FormatStrFormatter

    cfg = result["config"]
    alphas = cfg["init_scales"]
    fig, axes = plt.subplots(3, len(alphas), figsize=(4.2 * len(alphas), 8.0), squeeze=False, sharex=True)
    for c, alpha in enumerate(alphas):
        for opt in cfg["optimizers"]:
            rs = [r for r in result["runs"] if r["optimizer"] == opt and r["alpha"] == alpha]
            steps = np.array(rs[0]["steps"])
            for row, key in enumerate(("train_loss", "test_accuracy", "background_fraction")):
                vals = np.array([[np.nan if v is None else v for v in r[key]] for r in rs], dtype=float)
                ax = axes[row, c]
                colour = _COLOURS.get(opt)
                with np.errstate(all="ignore"):
                    mean = np.nanmean(vals, axis=0) if np.isfinite(vals).any() else vals[0]
                    lo, hi = np.nanmin(vals, axis=0), np.nanmax(vals, axis=0)
                stalled = sum(r["stalled"] for r in rs)
                label = opt + (f" ({stalled} stalled)" if stalled else "")
                ax.plot(steps, mean, color=colour, label=label if row == 0 else None)
                ax.fill_between(steps, lo, hi, color=colour, alpha=0.15, linewidth=0)
        rs0 = [r for r in result["runs"] if r["alpha"] == alpha]
        axes[2, c].axhline(np.mean([r["baseline_pixels"][-1] for r in rs0]), color="gray", ls="--", lw=1,
                           label="flat map (pixels)")
        axes[2, c].axhline(np.mean([r["baseline_cells"][-1] for r in rs0]), color="k", ls=":", lw=1,
                           label="flat map (cells)")
        axes[0, c].set_yscale("log")
        axes[0, c].yaxis.set_major_formatter(FormatStrFormatter("%.3g"))
        axes[0, c].yaxis.set_minor_formatter(FormatStrFormatter("%.2g"))
        axes[0, c].set_title(f"α = {alpha:g}")
        axes[2, c].set_xlabel("step")
    axes[0, 0].set_ylabel("training loss")
    axes[1, 0].set_ylabel("test accuracy")
    axes[2, 0].set_ylabel("Grad-CAM mass on background")
    axes[0, 0].legend(fontsize=8)
    axes[2, 0].legend(fontsize=8)
    fig.suptitle(f"{result['dataset']}: mean over {cfg['seeds']} seeds (band: min–max), ρ = {cfg['rho']:g}",
                 fontsize=10)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
