"""Grad-CAM and the background-attention metric (THEORY.md E2).

Grad-CAM (Selvaraju et al.) through captum's ``LayerGradCam``: for class c and feature
maps A^k of the target layer, ``cam = ReLU(Σ_k a_k A^k)`` with ``a_k`` the spatial mean of
∂y_c/∂A^k. captum registers its hooks inside ``attribute`` and removes them in a
``finally``; the ReLU and the upsampling are done here, explicitly.

Upsampling decides how much mass lands on the background, so it is a parameter:

- ``"rf"`` (default): cell (i, j) of the target layer spreads its mass uniformly over the
  input pixels it really sees — its receptive field, clipped to the image (padding is
  not image). Computed from the layer stack by :func:`receptive_fields`. Mass-preserving.
- ``"center"``: each pixel belongs to the cell whose receptive-field centre is nearest
  (a partition); each cell spreads its mass uniformly over its pixels. Mass-preserving.
- ``"bilinear"``: the usual ``F.interpolate(..., "bilinear")`` of the values (for comparison).

The metric: for a non-negative pixel map M and a background mask B,
``fraction = Σ_B M / Σ M``. A map with ``Σ M = 0`` (all zero after the ReLU) is *blank*: it
has no fraction, is counted, and is left out of means. Two flat-map baselines go beside
every number: ``baseline_pixels`` (a uniform pixel map: |B| / #pixels) and
``baseline_cells`` (a uniform cell map pushed through the same upsampling).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from theorycheck.vocabulary import CNN_UPSAMPLING

__all__ = [
    "UPSAMPLING", "AttentionSummary", "Fields", "background_fraction", "gradcam", "receptive_fields",
    "summarize", "upsample",
]

UPSAMPLING: tuple[str, ...] = CNN_UPSAMPLING

#: modules that act pixel by pixel (they do not change receptive fields)
_POINTWISE = (nn.ReLU, nn.LeakyReLU, nn.ELU, nn.GELU, nn.Sigmoid, nn.Tanh, nn.Identity, nn.Dropout,
              nn.modules.batchnorm._BatchNorm)


def _pair(v) -> int:
    a = (v, v) if isinstance(v, int) else tuple(v)
    if a[0] != a[1]:
        raise ValueError(f"only square kernels/strides/paddings are supported, got {v!r}")
    return int(a[0])


@dataclass(frozen=True)
class Fields:
    """What each row (= column) of cells of the target layer sees, on one image axis:
    ``intervals`` ``(h, 2)`` inclusive input pixel ranges clipped to the image, and
    ``centres`` ``(h,)`` the centres of the unclipped fields (where the cell is "looking")."""

    intervals: np.ndarray
    centres: np.ndarray

    def __len__(self) -> int:
        return len(self.intervals)


def receptive_fields(layers: Sequence[nn.Module], size: int) -> Fields:
    """Receptive fields of the cells of a conv/pool stack on a square ``size``×``size``
    input. ``layers`` is the stack up to and including the target layer; a conv or pool
    layer (kernel k, stride s, padding p, dilation δ) maps an output interval [a, b] to
    [a·s − p, b·s − p + δ(k − 1)]; pointwise layers leave it unchanged; padding is not image."""
    geo: list[tuple[int, int, int, int, int]] = []  # (k, s, p, dil, in_size)
    n = int(size)
    for m in layers:
        if isinstance(m, (nn.Conv2d, nn.MaxPool2d, nn.AvgPool2d)):
            k, s, p = _pair(m.kernel_size), _pair(m.stride), _pair(m.padding)
            dil = _pair(getattr(m, "dilation", 1))
            if getattr(m, "ceil_mode", False):
                raise ValueError("ceil_mode pooling is not supported")
            geo.append((k, s, p, dil, n))
            n = (n + 2 * p - dil * (k - 1) - 1) // s + 1
        elif isinstance(m, _POINTWISE) or type(m).__name__ == "Standardize":
            continue
        else:
            raise ValueError(f"cannot compute the receptive field through {type(m).__name__}")
    intervals = np.empty((n, 2), dtype=np.int64)
    centres = np.empty(n)
    for i in range(n):
        lo, hi, rlo, rhi = i, i, i, i
        for k, s, p, dil, n_in in reversed(geo):
            lo, hi = max(lo * s - p, 0), min(hi * s - p + dil * (k - 1), n_in - 1)
            rlo, rhi = rlo * s - p, rhi * s - p + dil * (k - 1)
        intervals[i] = lo, hi
        centres[i] = (rlo + rhi) / 2
    return Fields(intervals, centres)


def _matrix(fields: Fields, size: int, method: str) -> np.ndarray:
    """``(h, size)`` matrix U with pixel map = Uᵀ cam U (rows sum to 1: mass-preserving)."""
    h = len(fields)
    U = np.zeros((h, size))
    if method == "rf":
        for i, (lo, hi) in enumerate(fields.intervals):
            U[i, lo:hi + 1] = 1.0 / (hi - lo + 1)
    elif method == "center":
        dist = np.abs(np.arange(size)[:, None] - fields.centres[None, :])
        owner = np.argmin(dist, axis=1)  # ties → the lower cell
        for i in range(h):
            mine = owner == i
            if mine.any():
                U[i, mine] = 1.0 / mine.sum()
    else:
        raise ValueError(f"unknown upsampling {method!r}; choose one of {', '.join(UPSAMPLING)}")
    return U


def upsample(cam: torch.Tensor | np.ndarray, size: int, method: str = "rf",
             fields: Fields | None = None) -> np.ndarray:
    """Cell maps ``(N, h, h)`` → pixel maps ``(N, size, size)`` (float64). ``fields`` from
    :func:`receptive_fields` is needed for ``"rf"`` and ``"center"``."""
    c = torch.as_tensor(cam, dtype=torch.float64)
    if c.ndim != 3 or c.shape[1] != c.shape[2]:
        raise ValueError(f"cam must be (N, h, h), got {tuple(c.shape)}")
    if method == "bilinear":
        return F.interpolate(c[:, None], (size, size), mode="bilinear", align_corners=False)[:, 0].numpy()
    if fields is None or len(fields) != c.shape[1]:
        raise ValueError(f"upsampling {method!r} needs the receptive fields of the {c.shape[1]} cells per side")
    U = torch.as_tensor(_matrix(fields, size, method))
    return torch.einsum("ip,nij,jq->npq", U, c, U).numpy()


def gradcam(model: nn.Module, layer: nn.Module, x: torch.Tensor, target: torch.Tensor | Sequence[int],
            *, batch_size: int = 256) -> torch.Tensor:
    """Grad-CAM cell maps ``(N, h, w)`` after the ReLU, for class ``target[n]`` of image n.
    The model is put in eval mode for the call (BatchNorm/dropout frozen) and restored."""
    from captum.attr import LayerGradCam

    target = torch.as_tensor(target, dtype=torch.long)
    was_training = model.training
    model.eval()
    try:
        lgc = LayerGradCam(model, layer)
        out = []
        with torch.enable_grad():
            for i in range(0, len(x), batch_size):
                a = lgc.attribute(x[i:i + batch_size], target=target[i:i + batch_size].to(x.device),
                                  relu_attributions=False)
                out.append(F.relu(a.detach())[:, 0].cpu())
        return torch.cat(out) if out else torch.zeros(0)
    finally:
        model.train(was_training)


def background_fraction(maps: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per image ``Σ_B M / Σ M`` for pixel maps ``(N, H, W)`` ≥ 0 and masks ``(N, H, W)``.
    Returns (fractions with NaN where blank, blank flags)."""
    maps = np.asarray(maps, dtype=np.float64)
    if (maps < 0).any():
        raise ValueError("Grad-CAM maps must be non-negative (apply the ReLU first)")
    total = maps.sum(axis=(1, 2))
    blank = total <= 0
    bg = (maps * mask).sum(axis=(1, 2))
    frac = np.full(len(maps), np.nan)
    frac[~blank] = bg[~blank] / total[~blank]
    return frac, blank


@dataclass(frozen=True)
class AttentionSummary:
    """Background attention over a set of images (means over the non-blank maps)."""

    fraction: float | None        # mean background fraction; None when every map is blank
    baseline_pixels: float        # mean |B|/#pixels over the same images
    baseline_cells: float         # mean background fraction of a uniform cell map, same upsampling
    n_images: int
    n_blank: int
    per_image: np.ndarray         # fractions, NaN where blank


def summarize(maps: np.ndarray, mask: np.ndarray, *, cell_side: int, method: str,
              fields: Fields | None) -> AttentionSummary:
    """The metric and both flat-map baselines for pixel maps ``maps`` and masks ``mask``."""
    frac, blank = background_fraction(maps, mask)
    keep = ~blank if (~blank).any() else np.ones_like(blank)
    size = mask.shape[-1]
    flat = upsample(np.ones((1, cell_side, cell_side)), size, method, fields)[0]
    cells = (flat[None] * mask).sum(axis=(1, 2)) / flat.sum()
    return AttentionSummary(
        fraction=float(np.nanmean(frac)) if (~blank).any() else None,
        baseline_pixels=float(mask[keep].mean()),
        baseline_cells=float(cells[keep].mean()),
        n_images=int(len(frac)),
        n_blank=int(blank.sum()),
        per_image=frac,
    )
