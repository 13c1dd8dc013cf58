"""The products with the data that a pixel run spends its time in, and the array operations of a device.

Products. m = β Zᵀ and G = w Z/n are the whole cost at full size (MNIST 0 vs 1: 2–4 products of
a (members × 617) by (617 × 12,665) shape per field evaluation, > 90 % of the time).
:class:`Products` picks, per call, between dense BLAS (numpy or torch, float64, CPU or CUDA)
and, on numpy, a CSR copy of Z (MNIST pixels are ≈ 78 % zeros): scipy's CSR product for one row,
torch's CSR kernel (MKL on x86 CPUs) for several rows when torch is installed. A dense product
of a narrow batch is bound by reading all of Z; the CSR products read a third of the bytes.
Both are float64 sums of the same terms in another order: a member's numbers can differ in
the last bits from a run of that member alone (BLAS blocking, the other summation order);
tests/test_pixels.py bounds the difference.
"""

from __future__ import annotations

import warnings

import numpy as np

from theorycheck.batched.ops import get_ops
from theorycheck.errors import TheorycheckError

__all__ = ["PRODUCT_KINDS", "Products", "SPARSE_MAX_DENSITY", "SPARSE_MAX_ROWS", "SPARSE_MAX_ROWS_SCIPY",
           "SPARSE_MIN_NONZEROS", "device_ops"]

#: how the products with Z are computed: "auto" (per call, below), "dense" (BLAS), "sparse" (CSR)
PRODUCT_KINDS = ("auto", "dense", "sparse")
#: "auto" uses CSR when at most this fraction of Z's active entries is nonzero (MNIST 0 vs 1: 0.22) ...
SPARSE_MAX_DENSITY = 0.35
#: ... for products of at most this many rows (members) when torch's CSR kernel (MKL on x86
#: CPUs) is there, of at most SPARSE_MAX_ROWS_SCIPY rows with scipy's alone; one row always goes
#: through scipy's matrix-vector product. benchmarks/bench_pixels.py measures every kind at
#: several widths (MNIST 0 vs 1, one thread: for 1 row scipy's CSR is 2× dense BLAS; for 2–16
#: rows torch's CSR 1.6–2.6×; from 24 rows on about even with dense BLAS or slower; scipy's CSR for several rows
#: is about even with dense)
SPARSE_MAX_ROWS = 16
SPARSE_MAX_ROWS_SCIPY = 12
#: ... and when Z has at least this many nonzeros: on small data a product costs microseconds and
#: a CSR call's fixed cost (torch's dispatch, its intra-op threads waking) would dominate
SPARSE_MIN_NONZEROS = 100_000


def _torch_csr(S):
    """``S`` (scipy CSR) as a torch CSR tensor on the CPU (sharing S's arrays), or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "sparse CSR support is in beta"
        return torch.sparse_csr_tensor(torch.from_numpy(S.indptr.astype(np.int64)),
                                       torch.from_numpy(S.indices.astype(np.int64)),
                                       torch.from_numpy(S.data), size=S.shape, dtype=torch.float64)


class Products:
    """m = β Zᵀ (:meth:`margins`) and Σ_i w_i z_i (:meth:`weighted_sum`) for ``Za`` (n × d, the
    active pixels) on ``ops``. ``kind``: "dense" (BLAS on ``ops``), "sparse" (a CSR copy of Za;
    numpy only: scipy's product for one row, torch's CSR kernel for several when torch is
    installed, scipy's otherwise) or "auto" (CSR when Za's density is at most
    :data:`SPARSE_MAX_DENSITY`, it has at least :data:`SPARSE_MIN_NONZEROS` nonzeros and the
    product has at most :data:`SPARSE_MAX_ROWS` rows — :data:`SPARSE_MAX_ROWS_SCIPY` without
    torch —, dense otherwise). torch's kernel runs on torch's intra-op threads
    (``OMP_NUM_THREADS``, ``torch.set_num_threads``): on a busy host one thread is faster.
    ``calls`` counts the products of each kind ("dense", "csr-scipy", "csr-torch")."""

    def __init__(self, Za: np.ndarray, ops, kind: str = "auto"):
        if kind not in PRODUCT_KINDS:
            raise TheorycheckError(f"products {kind!r}: choose one of {', '.join(PRODUCT_KINDS)}")
        self.ops = ops
        self._Za = Za
        self._dense = None  # (Z, Zᵀ) on ops, built at the first dense product
        nnz = int(np.count_nonzero(Za))
        self.density = nnz / max(Za.size, 1)
        want = kind == "sparse" or (kind == "auto" and self.density <= SPARSE_MAX_DENSITY
                                    and nnz >= SPARSE_MIN_NONZEROS)
        if want and ops.name != "numpy":
            if kind == "sparse":
                raise TheorycheckError("products 'sparse' needs array_backend 'numpy' (a CSR copy of Z on the CPU)")
            want = False
        self.kind = kind
        self.S = self.ST = self.tS = self.tST = None
        if want:
            import scipy.sparse as sp

            self.S = sp.csr_matrix(Za)
            self.ST = self.S.T.tocsr()
            self.tS, self.tST = _torch_csr(self.S), _torch_csr(self.ST)
        self.calls = {"dense": 0, "csr-scipy": 0, "csr-torch": 0}

    def _route(self, rows: int) -> str:
        if self.S is None:
            return "dense"
        if rows == 1:
            return "csr-scipy"
        if self.tS is not None:
            return "csr-torch" if self.kind == "sparse" or rows <= SPARSE_MAX_ROWS else "dense"
        return "csr-scipy" if self.kind == "sparse" or rows <= SPARSE_MAX_ROWS_SCIPY else "dense"

    def _csr(self, route: str, S, tS, X):
        """S Xᵀ, transposed back: (rows × S.shape[0])."""
        if route == "csr-scipy":
            return (S @ X.T).T
        import torch

        return (tS @ torch.from_numpy(np.ascontiguousarray(X.T))).numpy().T

    def margins(self, beta):
        """β Zᵀ, (rows × n)."""
        route = self._route(beta.shape[0])
        self.calls[route] += 1
        if route == "dense":
            return beta @ self.dense()[1]
        return self._csr(route, self.S, self.tS, beta)

    def weighted_sum(self, w):
        """w Z = (Σ_i w_bi z_i)_b, (rows × d)."""
        route = self._route(w.shape[0])
        self.calls[route] += 1
        if route == "dense":
            return w @ self.dense()[0]
        return self._csr(route, self.ST, self.tST, w)

    def columns(self, p):
        """The columns z_·p of Za for the pixel indices ``p`` (one per row), as a (len(p) × n) array on ``ops``."""
        return self.ops.asarray(np.ascontiguousarray(self._Za[:, np.asarray(p, dtype=int)].T))

    def dense(self):
        """(Z, Zᵀ) as dense arrays on ``ops`` (C-contiguous)."""
        if self._dense is None:
            o = self.ops
            self._dense = (o.asarray(self._Za), o.asarray(np.ascontiguousarray(self._Za.T)))
        return self._dense


def device_ops(array_backend: str = "numpy", device: str | None = None):
    """The array operations for ``array_backend`` ("numpy" or "torch") on ``device`` ("cpu",
    "cuda" or None: CUDA when torch sees one). ``device="cuda"`` without a CUDA device is a
    one-line error (never a silent CPU run)."""
    if device not in (None, "cpu", "cuda"):
        raise TheorycheckError(f"device {device!r}: choose cpu or cuda")
    if array_backend == "numpy":
        if device == "cuda":
            raise TheorycheckError("device 'cuda' needs array_backend 'torch'")
        return get_ops("numpy")
    if array_backend != "torch":
        raise TheorycheckError(f"unknown array backend {array_backend!r}: choose numpy or torch")
    try:
        import torch
    except ImportError:
        raise TheorycheckError("array backend 'torch' needs torch: pip install 'torch==2.13.0'") from None
    if device == "cuda" and not torch.cuda.is_available():
        raise TheorycheckError("device 'cuda': torch sees no CUDA device here; use device 'cpu'")
    return get_ops("torch", device or ("cuda" if torch.cuda.is_available() else "cpu"))
