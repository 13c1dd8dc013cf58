"""The E2 experiment's statistics: the paired SAM − GD differences of the Grad-CAM background fraction per SAM
variant and α, at matched steps and at matched training loss (:func:`compare`: the mean over seeds with a Student-t
95 % interval, stalled pairs apart), the verdict per setting (:func:`settings_verdicts`) and the one-line summary
of a run (:func:`summary_line`). The runs they read are :mod:`theorycheck.numerics.minor_first.e2.cnn`'s.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from theorycheck.optimizers import GD
from theorycheck.optimizers import get as get_optimizer

__all__ = ["compare", "settings_verdicts", "summary_line"]


def _t_interval(d: np.ndarray) -> tuple[float, list[float] | None]:
    mean = float(d.mean())
    if len(d) < 2:
        return mean, None
    from scipy.stats import t

    half = float(t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d)))
    return mean, [mean - half, mean + half]


def _verdict(ci: list[float] | None, n: int) -> str:
    if n == 0:
        return "no pairs"
    if ci is None:
        return "one seed: no interval"
    if ci[0] > 0:
        return "more"
    if ci[1] < 0:
        return "less"
    return "not significant"


def _matched_loss_index(loss: list[float], target: float) -> int:
    """First checkpoint ≥ 1 whose training loss is ≤ target (the last one if none is)."""
    for k in range(1, len(loss)):
        if loss[k] <= target:
            return k
    return len(loss) - 1


def compare(runs: list, cfg: Any) -> list[dict]:
    """Paired SAM − GD differences of the background fraction, per SAM variant and α (``runs``: the experiment's
    :class:`~theorycheck.numerics.minor_first.e2.cnn.Run` records; ``cfg`` its ``Config``)."""
    by = {(r.optimizer, r.alpha, r.seed): r for r in runs}
    out = []
    for opt in [o for o in cfg.optimizers if get_optimizer(o).perturbs]:
        for alpha in cfg.init_scales:
            pairs, stalled = [], []
            for s in range(cfg.seed, cfg.seed + cfg.seeds):
                g, v = by[(GD.name, alpha, s)], by[(opt, alpha, s)]
                (stalled if (g.stalled or v.stalled) else pairs).append((g, v))
            for matched in ("steps", "loss"):
                diffs, fg, fv, kg, kv = [], [], [], [], []
                no_map = 0
                for g, v in pairs:
                    if matched == "steps":
                        ig = iv = len(g.steps) - 1
                    else:
                        target = max(min(g.train_loss[1:]), min(v.train_loss[1:]))
                        ig, iv = _matched_loss_index(g.train_loss, target), _matched_loss_index(v.train_loss, target)
                    a, b = g.background_fraction[ig], v.background_fraction[iv]
                    if a is None or b is None:
                        no_map += 1
                        continue
                    diffs.append(b - a)
                    fg.append(a)
                    fv.append(b)
                    kg.append(g.steps[ig])
                    kv.append(v.steps[iv])
                d = np.array(diffs)
                mean, ci = _t_interval(d) if len(d) else (None, None)
                ref = pairs[0][0] if pairs else by[(GD.name, alpha, cfg.seed)]
                out.append({
                    "optimizer": opt, "alpha": alpha, "matched": matched,
                    "n_pairs": len(d), "n_stalled_pairs": len(stalled), "n_all_blank_pairs": no_map,
                    "stalled_seeds": [g.seed for g, _ in stalled],
                    "differences": diffs, "mean_difference": mean, "ci95": ci,
                    "verdict": _verdict(ci, len(d)),
                    "gd_fraction": float(np.mean(fg)) if fg else None,
                    "sam_fraction": float(np.mean(fv)) if fv else None,
                    "gd_steps": kg, "sam_steps": kv,
                    "baseline_pixels": ref.baseline_pixels[-1], "baseline_cells": ref.baseline_cells[-1],
                })
    return out


def settings_verdicts(comparisons: list[dict]) -> list[dict]:
    """One verdict per (SAM variant, α): ``more`` / ``less`` only when the matched-steps and
    the matched-loss intervals agree (both exclude 0 on the same side); ``inconsistent``
    when only one of them excludes 0 (or they disagree); else their common verdict."""
    out = []
    keys = sorted({(c["optimizer"], c["alpha"]) for c in comparisons}, key=lambda k: (k[0], k[1]))
    for opt, alpha in keys:
        v = {c["matched"]: c["verdict"] for c in comparisons if c["optimizer"] == opt and c["alpha"] == alpha}
        a, b = v.get("steps"), v.get("loss")
        if a == b:
            verdict = a
        elif "more" in (a, b) or "less" in (a, b):
            verdict = "inconsistent"
        else:
            verdict = "not significant"
        out.append({"optimizer": opt, "alpha": alpha, "steps": a, "loss": b, "verdict": verdict})
    return out


def summary_line(comparisons: list[dict], dataset: str) -> dict:
    """The overall verdict over the (SAM variant, α) settings of :func:`settings_verdicts`."""
    settings = settings_verdicts(comparisons)
    kinds = ("more", "less", "inconsistent", "not significant", "no pairs", "one seed: no interval")
    counts = {k: sum(s["verdict"] == k for s in settings) for k in kinds}
    n = len(settings)
    if counts["more"] and not counts["less"]:
        head = "SAM put MORE Grad-CAM mass on the background than GD"
    elif counts["less"] and not counts["more"]:
        head = "SAM put LESS Grad-CAM mass on the background than GD (the opposite of E2)"
    elif counts["more"] and counts["less"]:
        head = "mixed: SAM put more background mass than GD in some settings and less in others"
    elif counts["not significant"] or counts["inconsistent"]:
        head = "no robust difference between SAM and GD in Grad-CAM background mass"
    else:
        head = "no conclusion: no setting had non-stalled pairs over at least two seeds"
    parts = [f"{counts[k]} {k}" for k in kinds if counts[k]]
    where = "; ".join(f"{s['optimizer']} α={s['alpha']:g}: {s['verdict']}" for s in settings)
    detail = (f"{n} setting(s): {', '.join(parts)} ({where}); a setting counts only when matched steps and "
              "matched loss agree, 95% t-intervals across seeds, not adjusted for multiple comparisons")
    return {"verdict": f"E2 on {dataset}: {head}. {detail}.", "supported": counts["more"] > 0 and not counts["less"],
            "counts": counts, "settings": settings}
