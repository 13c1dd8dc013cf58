"""The command line at its edges: negative number lists, output paths checked before a run,
scheduler addresses, grid limits and checks, worker caps, saved sweeps that hold pickles."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from theorycheck.cli.checks import check_scheduler, join_negative_values
from theorycheck.cli.main import build_parser, main
from theorycheck.errors import TheorycheckError


def run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("argv, joined", [
    (["setting", "--z", "-1,2"], ["setting", "--z=-1,2"]),
    (["setting", "--z", "-1e-3,2", "--alpha", "-0.5"], ["setting", "--z=-1e-3,2", "--alpha=-0.5"]),
    (["heatmap", "--alphas", "-3:-1:5"], ["heatmap", "--alphas=-3:-1:5"]),
    (["setting", "--z", "1,2", "--json"], ["setting", "--z", "1,2", "--json"]),
    (["setting", "--z", "--json"], ["setting", "--z", "--json"]),  # not a number: left to argparse
    (["setting", "--json", "-1,2"], ["setting", "--json", "-1,2"]),  # a flag takes no value
])
def test_join_negative_values(argv, joined):
    assert join_negative_values(argv, build_parser()) == joined


def test_negative_z_as_the_readme_writes_it(capsys):
    rc, out, err = run(["setting", "--z", "-1,2", "--json"], capsys)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["d"] == 2 and doc["separator_min_margin"] >= 1.0
    assert doc["reachable_separable"] is True  # z_2 > 0 alone separates


@pytest.mark.parametrize("argv, fragment", [
    (["trajectory", "--z", "1,2", "--plot", "."], "--plot .: is a folder; give a file name in it, e.g. ./result.png"),
    (["trajectory", "--z", "1,2", "--plot", "x.txt"], "end the name with .png, .svg, .pdf"),
    (["verify", "--claims", "C1", "--json", "nodir/"], "--json nodir/: is a folder; give a file name in it"),
    (["heatmap", "--z", "1,2", "--alphas", "0.1:1:3", "--t-max", "1", "--out", "nodir/"], "is a folder"),
    (["heatmap", "--z", "1,2", "--alphas", "0.1:1:3", "--t-max", "1", "--save", "results/"],
     "--save results/: names a folder, not a prefix; give a prefix in it, e.g. results/run"),
    (["heatmap", "--z", "1,2", "--alphas", "0.1:1:3", "--t-max", "1", "--json", "--scheduler", "not-an-address"],
     "not a scheduler address"),
    (["heatmap", "--z", "1,2", "--alphas", "0.1:1:1000000000", "--t-max", "1", "--json"], "exceeds the limit"),
    (["heatmap", "--z", "1,2", "--alphas", "0.1:1:100000", "--t-max", "1", "--nt", "100000", "--json"],
     "exceeds the limit"),
    (["heatmap", "--z", "1,2", "--alphas", "0.1:1:3", "--t-max", "10", "--t-min", "0", "--json"], "0 < t_min"),
    (["heatmap", "--z", "1,2", "--alphas", "0.1:1:3", "--t-max", "10", "--nt", "1", "--t-min", "20", "--json"],
     "0 < t_min < t_max"),
])
def test_refused_before_the_run(argv, fragment, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(argv, capsys)
    assert rc == 2
    assert fragment in err and err.count("\n") == 1 and out == ""


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:8786", "127.0.0.1:8786", "tls://host.example:1",
                                     "tcp://[::1]:8786"])
def test_scheduler_addresses_that_parse(address):
    check_scheduler(address)


@pytest.mark.parametrize("address", ["not-an-address", "tcp://h:0", "tcp://h:99999", "a b", ""])
def test_scheduler_addresses_refused(address):
    with pytest.raises(TheorycheckError):
        check_scheduler(address)


def test_time_grid_lies_in_zero_tmax():
    from theorycheck.sweep.grid import time_grid

    assert time_grid(10.0, 1).tolist() == [10.0]
    assert time_grid(10.0, 1, t_min=10.0).tolist() == [10.0]
    g = time_grid(10.0, 5, t_min=1.0)
    assert g[0] == 1.0 and g[-1] == 10.0
    g = time_grid(10.0, 4, log=True)
    assert g[0] > 0 and g[-1] == 10.0
    for bad in [dict(t_min=0.0), dict(t_min=-1.0), dict(t_min=20.0), dict(t_min=float("nan"))]:
        with pytest.raises(TheorycheckError):
            time_grid(10.0, 5, **bad)


def test_workers_capped_at_members_and_cores():
    from theorycheck.sweep.run import _auto_workers

    cores = os.cpu_count() or 1
    assert _auto_workers(2, 40) == min(2, cores)
    assert _auto_workers(10_000, 40) == min(40, cores)
    assert _auto_workers(1, None) == 1


def test_saved_sweep_with_a_pickle_is_refused_with_our_error(tmp_path):
    from theorycheck.sweep.result import SweepResult

    np.savez(tmp_path / "s.npz", jdag=np.array([object()], dtype=object))
    (tmp_path / "s.json").write_text("{}")
    with pytest.raises(TheorycheckError, match="not a plain array file"):
        SweepResult.load(tmp_path / "s")


def test_real_time_text_says_t(capsys):
    rc, out, err = run(["trajectory", "--data", _two_examples(), "--t-max", "5", "--max-seconds", "20"], capsys)
    assert rc == 0, err
    line = next(x for x in out.splitlines() if x.startswith("stopped because"))
    assert " at t = " in line


def _two_examples() -> str:
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".csv")
    with os.fdopen(fd, "w") as fh:
        fh.write("1,2,1\n2,1,1\n")
    return path


def test_trajectory_warns_when_the_reachable_cone_cannot_separate(capsys, tmp_path):
    p = tmp_path / "neg.csv"
    p.write_text("1,0.5,-1\n0.5,1,-1\n2,-0.3,-1\n-0.2,1.5,-1\n")  # separable only with β < 0
    rc, out, err = run(["trajectory", "--data", str(p), "--t-max", "2", "--max-seconds", "20"], capsys)
    assert rc == 0
    assert "not separable by any β this initialisation can reach" in err and "examples 3, 4" in err
    rc, out, err = run(["setting", "--data", str(p), "--json"], capsys)
    doc = json.loads(out)
    assert doc["reachable_separable"] is False and doc["reachable_certificate"] == [3, 4]
    assert doc["loss_lower_bound"] == pytest.approx(np.log(2) / 4)
