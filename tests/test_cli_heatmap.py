"""``theorycheck heatmap``: JSON keys and values, figures, saved arrays, one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from theorycheck.cli.main import main
from theorycheck.sweep.result import SweepResult

KEYS = {"optimizer", "rho", "depth", "loss", "n", "d", "time_kind", "system", "alpha", "time", "jdag", "status",
        "collapse_time", "visits", "thresholds", "rtol", "atol", "run", "out", "saved", "strength"}


def run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_heatmap_json_and_figure(capsys, tmp_path):
    png = tmp_path / "h.png"
    rc, out, _ = run(capsys, "heatmap", "--z", "1,2,3,4,5,6", "--optimizer", "sam-l2", "--rho", "1",
                     "--alphas", "0.05:1.5:9", "--log", "--t-max", "12", "--nt", "30", "--out", str(png),
                     "--backend", "serial", "--json")
    assert rc == 0
    doc = json.loads(out)
    assert set(doc) == KEYS
    J = np.array(doc["jdag"])
    assert J.shape == (9, 30) and doc["time_kind"] == "rescaled" and doc["system"] == "reduced"
    assert doc["alpha"][0] == pytest.approx(0.05) and doc["alpha"][-1] == pytest.approx(1.5)
    assert doc["time"][-1] == pytest.approx(12.0) and doc["time"][0] == pytest.approx(0.4)
    assert doc["thresholds"]["alpha_all_shrink"] == pytest.approx(0.0741249, rel=1e-5)
    # the smallest α collapses (0 after the collapse time), the largest is GD-like (6 throughout)
    assert doc["status"][0] == "collapse" and doc["collapse_time"][0] > 0 and J[0, -1] == 0
    assert doc["status"][-1] == "done" and doc["collapse_time"][-1] is None and np.all(J[-1] == 6)
    assert doc["visits"][-1] == [6] and doc["visits"][0][-1] == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and doc["out"] == str(png)


def test_heatmap_several_examples_real_time_svg_and_save(capsys, tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("x1,x2,x3,y\n1,0.5,2,1\n-0.8,-1.2,-1.5,-1\n1.1,0.9,1.7,1\n")
    svg, prefix = tmp_path / "h.svg", tmp_path / "saved" / "run"
    rc, out, _ = run(capsys, "heatmap", "--data", str(data), "--optimizer", "gd", "--rho", "0",
                     "--alphas", "0.1:1:4", "--log", "--t-max", "1000", "--nt", "20", "--log-time",
                     "--out", str(svg), "--save", str(prefix), "--backend", "serial")
    assert rc == 0 and "t (real time)" in out and "wrote" in out
    assert svg.read_text().lstrip().startswith("<?xml")
    res = SweepResult.load(prefix)
    assert res["jdag"].shape == (4, 20) and res.meta["time_kind"] == "real" and res.meta["n"] == 3
    assert np.all(res["jdag"] > 0)


@pytest.mark.parametrize("argv,fragment", [
    (["--alphas", "0.1:1"], "LO:HI:N"),
    (["--alphas", "0:1:5", "--log"], "LO > 0"),
    (["--alphas", "0.1:1:5", "--out", "fig.txt"], ".png"),
    (["--alphas", "0.1:1:5", "--nt", "0"], "nt"),
    (["--alphas", "0.1:1:5", "--rtol", "0"], "rtol"),
])
def test_heatmap_bad_arguments_are_one_line_errors(capsys, tmp_path, argv, fragment):
    base = ["heatmap", "--z", "1,2", "--t-max", "5", "--backend", "serial"]
    if "--out" not in argv:
        argv = argv + ["--json"]
    rc, _, err = run(capsys, *base, *argv)
    assert rc == 2 and err.strip().count("\n") == 0 and fragment in err


def test_heatmap_needs_an_output(capsys):
    rc, _, err = run(capsys, "heatmap", "--z", "1,2", "--alphas", "0.1:1:3", "--t-max", "5")
    assert rc == 2 and "--out" in err
