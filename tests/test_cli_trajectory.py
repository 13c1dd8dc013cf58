"""End-to-end: ``theorycheck trajectory`` and ``theorycheck maxmargin`` (JSON interface)."""

import json
import math

import numpy as np
import pytest

from theorycheck.cli.main import main
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE

KEYS = ("final_index", "collapsed", "collapse_time", "blowup_time", "switches", "direction", "time_kind",
        "stopped_because")


def run_json(capsys, *args):
    assert main(["trajectory", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_linf_zero_times_and_closed_form(capsys):
    z, rho, alpha = [0.7, 1.3, 2.2], 0.4, [0.3, 0.9, 0.35]
    out = run_json(capsys, "--z", "0.7,1.3,2.2", "--optimizer", "sam-linf", "--rho", "0.4",
                   "--alpha", "0.3,0.9,0.35", "--t-max", "7")
    for k in KEYS:
        assert k in out
    zero = C.lambdify((cf.z_j, cf.alpha_j, sy.rho), TE.linf_l2_zero_time())
    slides = {e["index"]: e["time"] for e in out["events"] if e["kind"] == "slide"}
    for j in (1, 3):
        assert slides[j] == pytest.approx(zero(z[j - 1], alpha[j - 1], rho), rel=1e-9)
    u = C.lambdify((cf.z_j, cf.alpha_j, sy.rho, sy.tau), TE.linf_l2_solution())
    assert out["log_abs_beta"][1] == pytest.approx(2 * math.log(u(z[1], alpha[1], rho, 7.0)), rel=1e-10)
    assert out["log_abs_beta"][0] is None and out["log_abs_beta"][2] is None  # slid to exactly 0
    assert out["final_index"] == 2 and out["direction"] == [0.0, 1.0, 0.0]
    assert out["time_kind"] == "rescaled" and out["stopped_because"] == "t_max" and not out["collapsed"]


@pytest.mark.parametrize("opt,rho", [("sam-linf", 0.3), ("gd", 0.0)])
def test_blowup_time_closed_form(capsys, opt, rho):
    out = run_json(capsys, "--z", "1.7,0.9", "--optimizer", opt, "--rho", str(rho), "--alpha", "1.1,1.6",
                   "--depth", "4")
    expr = TE.linf_blowup_time(4) if opt == "sam-linf" else TE.gd_blowup_time(4)
    f = C.lambdify((cf.z_j, cf.alpha_j, sy.rho), expr)
    times = f(np.array([1.7, 0.9]), np.array([1.1, 1.6]), rho)
    assert out["stopped_because"] == "blowup"
    assert out["blowup_time"] == pytest.approx(np.min(times), rel=1e-9)
    assert out["final_index"] == int(np.argmin(times)) + 1


def test_gd_closed_form_with_mpmath(capsys):
    out = run_json(capsys, "--z", "0.6,1.4", "--optimizer", "gd", "--rho", "0", "--alpha", "0.8,0.2",
                   "--t-max", "1e4", "--digits", "30")
    u = C.lambdify((cf.z_j, cf.alpha_j, sy.tau), TE.gd_l2_solution(), "mpmath")
    import mpmath

    with mpmath.workdps(30):
        exp = [2 * float(mpmath.log(u(z, a, 10**4))) for z, a in ((0.6, 0.8), (1.4, 0.2))]
    assert out["log_abs_beta"] == pytest.approx(exp, rel=1e-15)
    assert out["digits"] == 30 and out["method"] == "mpmath"
    (w,) = out["switches"]
    assert (w["from"], w["to"]) == (1, 2) and w["time"] == pytest.approx(math.log(4) / 0.8, rel=1e-12)


def test_collapse_reports_zero(capsys):
    out = run_json(capsys, "--z", "1,2,3", "--optimizer", "sam-l2", "--rho", "1", "--alpha", "0.05")
    assert out["collapsed"] and out["final_index"] == 0 and out["stopped_because"] == "collapse"
    assert out["switches"][-1]["to"] == 0 and out["switches"][-1]["time"] == out["collapse_time"]
    assert out["direction"] == [0.0, 0.0, 0.0] and out["angle_l1_deg"] is None


def test_reduced_method_matches(capsys):
    a = run_json(capsys, "--z", "0.5,1,1.6,2.3", "--optimizer", "sam-l2", "--alpha", "0.4", "--t-max", "15")
    b = run_json(capsys, "--z", "0.5,1,1.6,2.3", "--optimizer", "sam-l2", "--alpha", "0.4", "--t-max", "15",
                 "--method", "reduced")
    assert [(w["from"], w["to"]) for w in a["switches"]] == [(w["from"], w["to"]) for w in b["switches"]]
    for x, y in zip(a["switches"], b["switches"]):
        assert x["time"] == pytest.approx(y["time"], rel=1e-9)


def test_several_examples_real_time(capsys, tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("x1,x2,y\n1,2,1\n2,-1,1\n-1,-1,-1\n")
    out = run_json(capsys, "--data", str(f), "--optimizer", "sam-l2", "--rho", "0.2", "--alpha", "0.5",
                   "--t-max", "100")
    assert out["time_kind"] == "real" and out["n_examples"] == 3
    assert out["final_margin"] > 0 and 0 < out["final_loss"] < math.log(2)
    assert 0 < out["final_normalized_margin"]


def test_discrete(capsys):
    out = run_json(capsys, "--z", "1,2", "--optimizer", "sam-l2", "--rho", "0.1", "--alpha", "0.5",
                   "--discrete", "--eta", "0.05", "--steps", "200")
    assert out["method"] == "discrete" and out["steps"] == 200 and out["eta"] == 0.05
    assert out["stopped_because"] == "steps" and out["t_end"] == pytest.approx(10.0)


def test_plot_and_text_summary(capsys, tmp_path):
    png = tmp_path / "t.png"
    assert main(["trajectory", "--z", "1,2,3", "--optimizer", "sam-l2", "--alpha", "0.6", "--t-max", "10",
                 "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "final j† = 3" in text and "switches of j†" in text
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


@pytest.mark.parametrize("args", [
    ["--z", "1,2", "--digits", "5"],
    ["--z", "1,2", "--discrete"],
    ["--z", "1,2", "--eta", "0.1"],
    ["--z", "1,2", "--method", "reduced", "--optimizer", "gd"],
    ["--z", "1,2", "--rho", "-1"],
    ["--z", "1,2", "--plot", "x.txt"],
])
def test_bad_input_is_one_line_exit_2(capsys, args):
    assert main(["trajectory", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("theorycheck trajectory: error:") and err.count("\n") == 1


def test_argparse_rejects_nonpositive_t_max(capsys):
    with pytest.raises(SystemExit) as e:
        main(["trajectory", "--z", "1,2", "--t-max", "-1"])
    assert e.value.code == 2


@pytest.mark.parametrize("args", [
    ["--optimizer", "sam-linf", "--rho", "1", "--alpha", "1"],  # α = ρ exactly
    ["--optimizer", "sam-l2", "--rho", "1", "--alpha", "1e-30"],
    ["--optimizer", "sam-l2", "--rho", "1", "--alpha", "1e30", "--depth", "3"],
    ["--optimizer", "gd", "--rho", "0", "--alpha", "1e-300", "--depth", "5"],
    ["--optimizer", "sam-linf", "--rho", "1e30", "--alpha", "1", "--depth", "1"],
])
def test_no_nan_on_extreme_inputs(capsys, args):
    out = run_json(capsys, "--z", "1,2,2", "--t-max", "1e4", *args)  # emit_json refuses NaN
    assert out["stopped_because"] in ("t_max", "collapse", "blowup", "stationary")


def test_maxmargin_json(capsys, tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("1,2,1\n2,-1,1\n-1,-1,-1\n")
    for norm in (1, 2):
        assert main(["maxmargin", "--data", str(f), "--norm", str(norm), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        Z = np.array([[1.0, 2.0], [2.0, -1.0], [1.0, 1.0]])
        assert np.min(Z @ np.array(out["beta"])) == pytest.approx(1.0, abs=1e-12)
        assert out["margin"] == pytest.approx(1 / np.linalg.norm(out["beta"], ord=norm), rel=1e-12)
        assert out["norm"] == norm and out["support"]


def test_maxmargin_text(capsys):
    assert main(["maxmargin", "--z", "1,2,3", "--norm", "1"]) == 0
    assert "max margin γ = 1/‖β‖_1 = 3" in capsys.readouterr().out
