"""A binary task on image pixels for the diagonal networks (setting stage: validated once, here).

Two classes ``(a, b)`` (label +1 for a, −1 for b) or one class against the rest (``(a, None)``),
the training rows in the split's original order (``train_indices``), the preprocessing, and
what is fixed before any run looks at β: the background pixels and each pixel's intensity.

Preprocessing (``preprocess``):
- ``"raw"`` (default): intensities in [0, 1] (uint8 / 255). A pixel that is 0 in every training
  image has zero gradient under every optimizer (G_j = (1/n) Σ_i ℓ'(m_i) z_ij = 0, and both SAM
  perturbations of a zero gradient entry are 0): it never moves, so "minor" features are the
  low-intensity pixels that carry some signal, not the empty border.
- ``"centred"``: x − (mean training image of the task). Every pixel that varies now carries a
  signed signal (dark pixels of a bright-on-average region become negative entries); the pixels
  that are constant over the training images are exactly 0 and still never move. Which pixels
  are "minor" (small |mean z_ij|) changes: centring removes the common mean image, so the
  minor pixels are those whose intensity barely differs between the two classes.

Background (fixed before looking, as for the CNN experiment): MNIST — pixels whose mean raw
intensity over the task's training images is below ``MNIST_BACKGROUND_THRESHOLD`` (0.1);
CIFAR-10 — the border ring of width ``BORDER_WIDTH`` (6) in every channel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theorycheck import imagedata as D
from theorycheck.errors import TheorycheckError

__all__ = ["PREPROCESSING", "PixelTask", "pixel_task", "parse_classes"]

PREPROCESSING = ("raw", "centred")


@dataclass(frozen=True)
class PixelTask:
    """``X`` (n, d) preprocessed training images (d = H·W·C, row-major H, W, C), ``y`` (n,) ±1,
    ``Z`` = y X, ``train_indices`` (n,) rows of the training split (ascending: the split's
    order), ``X_test`` / ``y_test`` likewise for the test split, ``background`` (d,) bool,
    ``intensity`` (d,) mean raw intensity in [0, 1] over the training rows, ``shape`` (H, W, C)."""

    dataset: str
    classes: tuple
    preprocess: str
    X: np.ndarray
    y: np.ndarray
    train_indices: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    test_indices: np.ndarray
    background: np.ndarray
    intensity: np.ndarray
    shape: tuple
    source: str

    @property
    def Z(self) -> np.ndarray:
        return self.X * self.y[:, None]

    @property
    def active(self) -> np.ndarray:
        """Pixels that are not 0 in every training image (the only ones that can move)."""
        return np.any(self.X != 0, axis=0)

    @property
    def label(self) -> str:
        a, b = self.classes
        return f"{self.dataset} {a} vs {'rest' if b is None else b}"


def parse_classes(text) -> tuple:
    """``"0,1"`` → (0, 1); ``"3"`` or ``"3,rest"`` → (3, None) (one class against the rest)."""
    if isinstance(text, (tuple, list)):
        parts = list(text)
    else:
        parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if len(parts) == 1:
        parts.append(None)
    if len(parts) != 2:
        raise TheorycheckError(f"classes {text!r}: give two classes 'a,b' or one class 'a' (against the rest)")
    try:
        a = int(parts[0])
        b = None if parts[1] in (None, "rest") else int(parts[1])
    except ValueError:
        raise TheorycheckError(f"classes {text!r}: class indices are integers 0..9 (or 'rest')") from None
    if not 0 <= a <= 9 or (b is not None and (not 0 <= b <= 9 or b == a)):
        raise TheorycheckError(f"classes {text!r}: two different class indices in 0..9")
    return (a, b)


def _rows(y: np.ndarray, classes: tuple, n: int | None, seed: int) -> np.ndarray:
    """Rows of the two classes (or a vs rest), a class-balanced seeded subset of n when asked,
    returned ascending (the split's own order)."""
    a, b = classes
    pos = np.flatnonzero(y == a)
    neg = np.flatnonzero(y != a) if b is None else np.flatnonzero(y == b)
    if n is None or n >= pos.size + neg.size:
        return np.sort(np.concatenate([pos, neg]))
    if n < 2:
        raise TheorycheckError(f"a subset needs at least 2 images (one per class), got {n}")
    rng = np.random.default_rng(seed)
    k = min(n // 2, pos.size)
    take = np.concatenate([rng.choice(pos, k, replace=False), rng.choice(neg, min(n - k, neg.size), replace=False)])
    return np.sort(take)


def pixel_task(dataset: str, classes, *, n_train: int | None = None, n_test: int | None = None,
               preprocess: str = "raw", data_dir=None, seed: int = 0, images: D.ImageSet | None = None) -> PixelTask:
    """The binary task ``classes`` of ``dataset`` ("mnist" or "cifar10"; see :mod:`theorycheck.imagedata`
    for where the files come from). ``n_train`` / ``n_test``: a class-balanced seeded subset
    (None: every image of the classes). ``images``: an already loaded set (tests)."""
    if dataset not in ("mnist", "cifar10"):
        raise TheorycheckError(f"dataset {dataset!r}: choose mnist or cifar10")
    if preprocess not in PREPROCESSING:
        raise TheorycheckError(f"preprocess {preprocess!r}: choose one of {', '.join(PREPROCESSING)}")
    classes = parse_classes(classes)
    S = images if images is not None else D.load(dataset, data_dir)
    tr = _rows(S.y_train, classes, n_train, seed)
    te = _rows(S.y_test, classes, n_test, seed + 1)
    if tr.size < 2 or np.unique(S.y_train[tr] == classes[0]).size < 2:
        raise TheorycheckError(f"classes {classes}: the training split needs images of both sides")

    def flat(x):
        return x.reshape(x.shape[0], -1).astype(np.float64) / 255.0

    Xr, Xt = flat(S.x_train[tr]), flat(S.x_test[te])
    intensity = Xr.mean(axis=0)
    if preprocess == "centred":
        mu = intensity
        Xr, Xt = Xr - mu, Xt - mu
        Xr[:, np.all(S.x_train[tr].reshape(tr.size, -1) == S.x_train[tr][:1].reshape(1, -1), axis=0)] = 0.0
    lab = lambda yy: np.where(yy == classes[0], 1.0, -1.0)  # noqa: E731
    shape = tuple(int(v) for v in S.x_train.shape[1:])
    if dataset == "mnist":
        background = intensity < D.MNIST_BACKGROUND_THRESHOLD
    else:
        ring = D.background_mask("cifar10", S.x_train[:1])[0]  # (H, W)
        background = np.repeat(ring[:, :, None], shape[2], axis=2).reshape(-1)
    return PixelTask(dataset=dataset, classes=classes, preprocess=preprocess, X=Xr, y=lab(S.y_train[tr]),
                     train_indices=tr, X_test=Xt, y_test=lab(S.y_test[te]), test_indices=te,
                     background=np.asarray(background, bool), intensity=intensity, shape=shape, source=S.source)
