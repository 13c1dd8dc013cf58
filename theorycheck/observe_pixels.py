"""Observables of a pixel map β (observe stage: arrays in, numbers out, no state).

β has shape (..., d): one map or a stack (checkpoints, members). Pixels are 0-based here;
j† is reported 1-based as everywhere in theorycheck (0: β = 0).
"""

from __future__ import annotations

import numpy as np

__all__ = ["background_fraction", "flat_baseline", "dominant_pixel", "intensity_quantile", "accuracy",
           "first_at_or_below", "angle_degrees_rows", "matched"]


def background_fraction(beta, background) -> np.ndarray:
    """Σ_{j ∈ background} |β_j| / Σ_j |β_j| (NaN where β = 0 or is not finite)."""
    a = np.abs(np.asarray(beta, float))
    tot = a.sum(-1)
    bg = a[..., np.asarray(background, bool)].sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((tot > 0) & np.isfinite(tot), bg / tot, np.nan)


def flat_baseline(background, active=None) -> float:
    """The background fraction of a flat map: |background| / d, over the ``active`` pixels
    (those that can move) when given — a uniform |β| on them."""
    bg = np.asarray(background, bool)
    if active is not None:
        act = np.asarray(active, bool)
        return float(bg[act].sum() / max(act.sum(), 1))
    return float(bg.mean())


def dominant_pixel(beta) -> np.ndarray:
    """j† = argmax_j |β_j| + 1 (1-based; 0 where β = 0 or not finite)."""
    a = np.abs(np.asarray(beta, float))
    ok = np.all(np.isfinite(a), -1) & (a.max(-1, initial=0.0) > 0)
    return np.where(ok, np.argmax(np.nan_to_num(a, nan=-1.0), -1) + 1, 0)


def intensity_quantile(jdag, intensity, active=None) -> np.ndarray:
    """Where pixel j† (1-based) sits among the (active) pixels by mean raw intensity: 0 the
    dimmest, 1 the brightest (ties share the lower rank); NaN for j† = 0."""
    inten = np.asarray(intensity, float)
    pool = inten if active is None else inten[np.asarray(active, bool)]
    srt = np.sort(pool)
    j = np.asarray(jdag, int)
    val = inten[np.clip(j - 1, 0, inten.size - 1)]
    rank = np.searchsorted(srt, val, side="left")
    q = rank / max(pool.size - 1, 1)
    return np.where(j > 0, q, np.nan)


def accuracy(beta, X, y) -> np.ndarray:
    """Fraction of rows with sign⟨β, x_i⟩ = y_i (a margin of 0 counts as wrong); NaN where β is not finite."""
    B = np.asarray(beta, float)
    flat = B.reshape(-1, B.shape[-1])
    ok = np.all(np.isfinite(flat), 1)
    out = np.full(flat.shape[0], np.nan)
    if ok.any():
        m = np.asarray(X, float) @ flat[ok].T
        out[ok] = np.mean(m * np.asarray(y, float)[:, None] > 0, axis=0)
    return out.reshape(B.shape[:-1])


def first_at_or_below(values, level: float) -> int:
    """The first index whose value is ≤ level (−1: none) — matched loss."""
    v = np.asarray(values, float)
    hit = np.flatnonzero(np.isfinite(v) & (v <= level))
    return int(hit[0]) if hit.size else -1


def angle_degrees_rows(beta, direction) -> np.ndarray:
    """Angle (degrees) between each map β (..., d) and ``direction`` (d,); NaN where β = 0."""
    B = np.asarray(beta, float)
    v = np.asarray(direction, float)
    v = v / np.linalg.norm(v)
    nb = np.linalg.norm(B, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = B / nb[..., None]
        c = np.clip(np.sum(u * v, -1), -1.0, 1.0)
        s = np.linalg.norm(u - c[..., None] * v, axis=-1)
        ang = np.degrees(np.arctan2(s, c))
    return np.where((nb > 0) & np.isfinite(nb), ang, np.nan)


def matched(loss_a, value_a, loss_b, value_b) -> dict | None:
    """Two runs' observable at matched training loss: the level is the larger of the two runs'
    smallest recorded losses, each run is read at its first output at or below it. Returns
    {level, index_a, index_b, a, b, difference (b − a)} or None when a run has no finite loss."""
    la, lb = np.asarray(loss_a, float), np.asarray(loss_b, float)
    if not (np.isfinite(la).any() and np.isfinite(lb).any()):
        return None
    level = float(max(np.nanmin(la), np.nanmin(lb)))
    ia, ib = first_at_or_below(la, level), first_at_or_below(lb, level)
    a, b = float(np.asarray(value_a, float)[ia]), float(np.asarray(value_b, float)[ib])
    diff = b - a if np.isfinite(a) and np.isfinite(b) else None
    return {"level": level, "index_a": ia, "index_b": ib, "loss_a": float(la[ia]), "loss_b": float(lb[ib]),
            "a": a, "b": b, "difference": diff}
