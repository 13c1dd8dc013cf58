"""The CLI's foundation commands: derive, prove, setting; exit codes and one-line errors."""

import json
import subprocess
import sys

import pytest

from theorycheck.cli.main import main


def run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_derive_l2_sam_depth_3_balanced(capsys):
    rc, out, _ = run(capsys, "derive", "--depth", "3", "--optimizer", "sam-l2", "--balanced", "--format", "json")
    assert rc == 0
    res = json.loads(out)
    assert res["equations"]["du_j/dtau"] == "z_j*(u_j - rho*u_j**2*z_j/N)**2"
    assert res["equations"]["N**2"] == "Sum(3*u_k**4*z_k**2, (k, 1, d))"
    assert res["time"] == "rescaled"


def test_derive_explicit_system(capsys):
    rc, out, _ = run(capsys, "derive", "-L", "3", "--optimizer", "sam-l2", "--dim", "2", "--format", "json")
    assert rc == 0
    doc = json.loads(out)
    system, defs = doc["system"], doc["definitions"]
    assert sorted(system) == [f"dw{k}_{j}/dtau" for k in (1, 2, 3) for j in (1, 2)]
    assert "what2_1" in system["dw1_1/dtau"] and "sqrt" in defs["S"] and "rho" in defs["what1_1"]


def test_derive_text_and_latex(capsys):
    rc, out, _ = run(capsys, "derive", "--optimizer", "sam-linf", "--balanced")
    assert rc == 0 and "sam-linf flow, L = 2" in out and "sign" in out
    rc, out, _ = run(capsys, "derive", "--optimizer", "gd", "--examples", "2", "--format", "latex")
    assert rc == 0 and "real time" in out


def test_derive_bad_arguments(capsys):
    rc, _, err = run(capsys, "derive", "--depth", "0")
    assert rc == 2 and err.strip().count("\n") == 0 and "depth" in err


def test_prove_json_single_theorem(capsys):
    rc, out, _ = run(capsys, "prove", "--only", "C4", "--json")
    res = json.loads(out)
    assert rc == 0 and res["refuted"] == []
    assert res["theorems"][0]["key"] == "C4" and res["theorems"][0]["status"] == "verified"


def test_prove_reports_refutation_with_exit_1(capsys):
    rc, out, _ = run(capsys, "prove", "--only", "c2")
    assert rc == 1
    assert "✗" in out and "counterexample" in out and "refuted as stated in THEORY.md: C2" in out


def test_prove_unknown_key(capsys):
    rc, _, err = run(capsys, "prove", "--only", "C9")
    assert rc == 2 and "unknown theorem" in err


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--z", "1,nan"], "non-finite"),
        (["--z", "1,2", "--rho", "-1"], "ρ must be ≥ 0"),
        (["--z", "1,2", "--depth", "0"], "depth"),
        (["--z", "1,2", "--alpha", "0"], "must be > 0"),
        (["--z", "1,2", "--alpha", "1,2,3"], "alpha has 3 entries"),
        (["--z", "1,x"], "comma-separated"),
        (["--data", "/nonexistent.csv"], "not found"),
    ],
)
def test_setting_errors_are_one_line(capsys, argv, fragment):
    rc, out, err = run(capsys, "setting", *argv)
    assert rc == 2 and out == ""
    assert fragment in err and err.count("\n") == 1 and "Traceback" not in err


def test_setting_non_separable_csv(capsys, tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("x1,x2,y\n1,0,1\n2,1,-1\n-1,-1,-1\n")  # z1 = (1,0), z2 = (-2,-1), z3 = (1,1)
    rc, _, err = run(capsys, "setting", "--data", str(p))
    assert rc == 2 and "not linearly separable" in err


def test_setting_json(capsys):
    rc, out, _ = run(capsys, "setting", "--z", "1,2", "--alpha", "0.1,0.2", "--json")
    res = json.loads(out)
    assert rc == 0 and res["init_kind"] == "vector" and res["layers0"] == [[0.1, 0.2], [0.1, 0.2]]
    assert res["separator_min_margin"] >= 1 - 1e-9


def test_entry_point_and_help():
    p = subprocess.run([sys.executable, "-m", "theorycheck", "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "prove" in p.stdout and "derive" in p.stdout
    p = subprocess.run([sys.executable, "-m", "theorycheck"], capture_output=True, text=True)
    assert p.returncode == 2
