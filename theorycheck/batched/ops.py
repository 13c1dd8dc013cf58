"""The few array operations the batched engine needs, on numpy or torch (float64)."""

from __future__ import annotations

import numpy as np

from theorycheck.errors import TheorycheckError


class NumpyOps:
    """The few array operations the engine needs, on numpy (float64)."""

    name = "numpy"
    float = np.float64

    def asarray(self, x, dtype=None):
        return np.asarray(x, dtype=dtype if dtype is not None else np.float64)

    def zeros(self, shape, dtype=None):
        return np.zeros(shape, dtype=dtype if dtype is not None else np.float64)

    def full(self, shape, value, dtype=None):
        return np.full(shape, value, dtype=dtype if dtype is not None else np.float64)

    def arange(self, n):
        return np.arange(n)

    def cat(self, xs, axis=0):
        return np.concatenate(xs, axis=axis)

    def stack(self, xs, axis=0):
        return np.stack(xs, axis=axis)

    def sum(self, x, axis):
        return np.sum(x, axis=axis)

    def amax(self, x, axis):
        return np.max(x, axis=axis)

    def argmax(self, x, axis):
        return np.argmax(x, axis=axis)

    def logsumexp(self, x, axis):
        m = np.max(x, axis=axis, keepdims=True)
        if not np.all(np.isfinite(m)):
            m = np.where(np.isfinite(m), m, 0.0)
        with np.errstate(divide="ignore"):
            return np.log(np.sum(np.exp(x - m), axis=axis)) + np.squeeze(m, axis)

    def nonzero(self, mask):
        return np.flatnonzero(mask)

    def any(self, x) -> bool:
        return bool(np.any(x))

    def all(self, x, axis=None):
        return np.all(x, axis=axis)

    def to_numpy(self, x) -> np.ndarray:
        return np.asarray(x)

    def errstate(self):
        return np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore")

    def __getattr__(self, name):  # exp, log, sqrt, abs, where, maximum, minimum, isfinite, sign, ...
        return getattr(np, name)


class TorchOps:
    """The same operations on torch (float64), on ``device`` (default: CUDA when present)."""

    name = "torch"

    def __init__(self, device: str | None = None):
        import torch

        self.torch = torch
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.float = torch.float64

    def _dtype(self, dtype):
        t = self.torch
        if dtype is None or dtype in (float, np.float64):
            return t.float64
        if dtype in (int, np.int64):
            return t.int64
        if dtype in (bool, np.bool_):
            return t.bool
        return dtype

    def asarray(self, x, dtype=None):
        if isinstance(x, self.torch.Tensor):
            return x.to(device=self.device, dtype=self._dtype(dtype))
        return self.torch.as_tensor(np.asarray(x), dtype=self._dtype(dtype), device=self.device)

    def zeros(self, shape, dtype=None):
        return self.torch.zeros(shape, dtype=self._dtype(dtype), device=self.device)

    def full(self, shape, value, dtype=None):
        return self.torch.full(shape if isinstance(shape, tuple) else (shape,), value, dtype=self._dtype(dtype),
                               device=self.device)

    def arange(self, n):
        return self.torch.arange(n, device=self.device)

    def cat(self, xs, axis=0):
        return self.torch.cat(xs, dim=axis)

    def stack(self, xs, axis=0):
        return self.torch.stack(xs, dim=axis)

    def sum(self, x, axis):
        return self.torch.sum(x, dim=axis)

    def amax(self, x, axis):
        return self.torch.amax(x, dim=axis)

    def argmax(self, x, axis):
        return self.torch.argmax(x, dim=axis)

    def logsumexp(self, x, axis):
        return self.torch.logsumexp(x, dim=axis)

    def nonzero(self, mask):
        return self.torch.nonzero(mask).reshape(-1)

    def any(self, x) -> bool:
        return bool(self.torch.any(x))

    def all(self, x, axis=None):
        return self.torch.all(x) if axis is None else self.torch.all(x, dim=axis)

    def to_numpy(self, x) -> np.ndarray:
        return x.detach().cpu().numpy() if isinstance(x, self.torch.Tensor) else np.asarray(x)

    def errstate(self):
        import contextlib

        return contextlib.nullcontext()

    def where(self, c, a, b):
        t = self.torch
        if not isinstance(a, t.Tensor):
            a = t.as_tensor(a, dtype=t.float64, device=self.device)
        if not isinstance(b, t.Tensor):
            b = t.as_tensor(b, dtype=t.float64, device=self.device)
        return t.where(c, a, b)

    def _bound(self, a, b, side: str, both):
        """max/min of a and b where either may be a number: clamp on ``side``, else ``both``."""
        t = self.torch
        if not isinstance(b, t.Tensor):
            return t.clamp(a, **{side: float(b)})
        if not isinstance(a, t.Tensor):
            return t.clamp(b, **{side: float(a)})
        return both(a, b)

    def maximum(self, a, b):
        return self._bound(a, b, "min", self.torch.maximum)

    def minimum(self, a, b):
        return self._bound(a, b, "max", self.torch.minimum)

    def __getattr__(self, name):
        return getattr(self.torch, name)


def get_ops(array_backend: str = "numpy", device: str | None = None):
    """``"numpy"`` or ``"torch"`` (CUDA when present unless ``device`` says otherwise)."""
    if array_backend == "numpy":
        return NumpyOps()
    if array_backend == "torch":
        try:
            return TorchOps(device)
        except ImportError:
            raise TheorycheckError("array backend 'torch' needs torch: pip install 'torch==2.13.0'") from None
    raise TheorycheckError(f"unknown array backend {array_backend!r}: choose numpy or torch")
