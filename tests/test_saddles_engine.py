"""The engine pieces the pack saddle-to-saddle added: exact sign-constrained least squares (against scipy's
NNLS and brute force), exact uniqueness, the ℓ1 interpolator LP and its exact duality check; the command
``theorycheck saddles`` (its JSON, its errors) and the pack's claims on their pinned inputs."""

from __future__ import annotations

import json
from fractions import Fraction as F

import numpy as np
import pytest

from theorycheck.cli.main import main
from theorycheck.errors import SettingError
from theorycheck.solvers.exact_lsq import exact_data, nonnegative_lsq, sign_constrained_lsq, solve_linear
from theorycheck.solvers.l1_interpolator import l1_certificate, l1_interpolator_lp


def _rand(seed, n, d):
    rng = np.random.default_rng(seed)
    return np.round(rng.standard_normal((n, d)), 2), np.round(rng.standard_normal(n), 2)


@pytest.mark.parametrize("seed", range(8))
def test_exact_nnls_matches_scipy(seed):
    from scipy.optimize import nnls

    A, b = _rand(seed, 5, 4)
    Xq, yq = exact_data([[f"{v:.2f}" for v in r] for r in A], [f"{v:.2f}" for v in b])
    z, P, _, status = nonnegative_lsq(Xq, yq)
    ref, _ = nnls(np.array(Xq, float), np.array(yq, float))
    assert status == "solved" and np.allclose([float(v) for v in z], ref, atol=1e-10)
    assert all(z[j] > 0 for j in P) and all(z[j] == 0 for j in range(4) if j not in P)


def test_sign_constraints_and_exact_kkt():
    X, y = exact_data([["1", "1"], ["0", "0.5"]], ["1", "2"])
    r = sign_constrained_lsq(X, y, {0: 1, 1: 1})
    assert r.beta == (0, F(8, 5)) and r.kkt and r.unique and r.gradient == (F(3, 10), 0)
    r = sign_constrained_lsq(X, y, {0: -1, 1: 1})
    assert r.beta == (-3, 4) and r.loss == 0 and r.kkt and r.unique
    r = sign_constrained_lsq(X, y, {})
    assert r.beta == (0, 0) and r.kkt


def test_uniqueness_decided_exactly():
    X, y = exact_data([["1", "1"]], ["1"])
    r = sign_constrained_lsq(X, y, {0: 1, 1: 1})
    assert r.unique is False and r.other is not None and sum(r.other) == 1 and all(v >= 0 for v in r.other)
    r = sign_constrained_lsq(X, y, {0: 1, 1: -1})  # (1 + c, −c) for c ≥ 0 all interpolate
    assert r.unique is False and r.other[0] > 1
    X, y = exact_data([["1", "1"]], ["-1"])
    r = sign_constrained_lsq(X, y, {0: 1, 1: 1})  # β = 0; the null direction (1, −1) leaves the orthant
    assert r.unique is True and r.beta == (0, 0) and r.loss == F(1, 2)


def test_solve_linear_singular_and_regular():
    assert solve_linear([[1, 2], [2, 4]], [1, 2]) is None
    assert solve_linear([[2, 1], [1, 2]], [1, 2]) == (0, 1)


def test_iteration_budget_is_reported():
    A, b = _rand(3, 6, 5)
    Xq, yq = exact_data(A.tolist(), b.tolist())
    r = sign_constrained_lsq(Xq, yq, dict.fromkeys(range(5), 1), max_iterations=1)
    assert r.status in ("solved", "iteration budget")
    assert sign_constrained_lsq(Xq, yq, dict.fromkeys(range(5), 1), max_iterations=0).status == "iteration budget"


@pytest.mark.parametrize("bad", [([["1", "x"]], ["1"]), ([["1", "2"], ["1"]], ["1", "2"]), ([], []),
                                 ([["nan"]], ["1"]), ([["1"]], ["1", "2"])])
def test_bad_data_is_a_one_line_error(bad):
    with pytest.raises(SettingError) as e:
        exact_data(*bad)
    assert "\n" not in str(e.value)


def test_lp_and_exact_certificate_agree():
    from theorycheck.proofs.saddle_to_saddle.algorithm import jump_process

    X, y = [["0", "0", "-1"], ["-1", "-3", "1"]], ["3", "-2"]
    p = jump_process(X, y)
    c = l1_certificate(p.X, p.y, p.final, p.nu)
    lp = l1_interpolator_lp(p.X, p.y)
    assert c.ok and c.gap == 0 and c.l1_norm == F(10, 3) and abs(lp.l1_norm - 10 / 3) < 1e-12
    worse = l1_certificate(p.X, p.y, (-1, 0, -3), p.nu)  # interpolates, but ‖β‖₁ = 4 > ⟨ν, y⟩
    assert worse.interpolates and worse.gap > 0 and not worse.ok
    assert l1_interpolator_lp([[1.0], [1.0]], [1.0, 2.0]).status == "infeasible"


# ---------------------------------------------------------------------------- the command
def _run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_json_exact(capsys, tmp_path):
    f = tmp_path / "leave.csv"
    f.write_text("x1,x2,x3,y\n0,0,-1,3\n-1,-3,1,-2\n")
    rc, out, _ = _run(capsys, "saddles", "--data", str(f), "--json")
    res = json.loads(out)
    assert rc == 0 and [j["time_exact"] for j in res["jumps"]] == ["1/6", "2/9", "14/9"]
    assert [j["entered"] for j in res["jumps"]] == [[2], [3], [2]] and res["jumps"][1]["left"] == [2]
    assert res["jumps"][2]["support"] == {"2": -1, "3": -1} and res["final"]["l1_norm_exact"] == "10/3"
    assert res["final"]["l1_certificate"] is True and res["strength"]["kind"] == "proved"
    assert res["non_unique"] == [] and res["from_float"] is False


def test_cli_decimals_are_exact(capsys, tmp_path):
    f = tmp_path / "tenth.csv"
    f.write_text("0.1,0.3\n")  # no header: t̃₁ = 1/(2·0.03), exactly 50/3
    rc, out, _ = _run(capsys, "saddles", "--data", str(f), "--json")
    res = json.loads(out)
    assert rc == 0 and res["jumps"][0]["time_exact"] == "50/3" and res["final"]["beta_exact"] == ["3"]


def test_cli_text_and_non_unique(capsys, tmp_path):
    f = tmp_path / "tie.csv"
    f.write_text("x1,x2,y\n1,1,1\n")
    rc, out, _ = _run(capsys, "saddles", "--data", str(f))
    assert rc == 0 and "not unique at jump 1" in out and "strength: proved" in out


@pytest.mark.parametrize("text", ["x,y\n1,a\n", "x,y\n1,2\n1\n", "", "x,y\n1,nan\n", "x,y\n1,inf\n"])
def test_cli_bad_input_one_line(capsys, tmp_path, text):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    rc, out, err = _run(capsys, "saddles", "--data", str(f))
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_cli_jump_budget_not_decided(capsys, tmp_path):
    f = tmp_path / "leave.csv"
    f.write_text("x1,x2,x3,y\n0,0,-1,3\n-1,-3,1,-2\n")
    rc, out, _ = _run(capsys, "saddles", "--data", str(f), "--max-jumps", "1", "--json")
    res = json.loads(out)
    assert rc == 0 and res["status"] == "jump budget" and res["strength"]["kind"] == "not decided"


# ---------------------------------------------------------------------------- the claims' pinned inputs
def test_claims_on_their_pinned_inputs():
    from theorycheck.proofs.saddle_to_saddle import claims as C

    by_key = {c.key: c for c in C.CLAIMS}
    for key in ("SS.loss", "SS.l1", "SS.first"):
        assert all(by_key[key].check(x).ok for x in by_key[key].pinned), key
    assert by_key["SS.grows"].check(C.LEAVES).ok is False  # the explicit instance: a coordinate leaves
    assert by_key["SS.grows"].refined.check(C.LEAVES).ok is True
    assert by_key["SS.lsq"].check({"seed": 1, "n": 5, "d": 2}).ok is True
