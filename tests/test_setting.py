"""Setting: every bad input is a one-line SettingError naming the problem and the fix."""

import math

import numpy as np
import pytest

from theorycheck import NotSeparableError, Setting, SettingError
from theorycheck.setting import check_separable, parse_floats, read_csv


def test_single_example_and_views():
    s = Setting.from_z("1,2,3", depth=3, optimizer="sam-l2", rho=0.5, alpha=0.25)
    assert s.single and s.n == 1 and s.d == 3 and s.depth == 3
    np.testing.assert_array_equal(s.z, [1, 2, 3])
    np.testing.assert_array_equal(s.layers0, np.full((3, 3), 0.25))
    assert s.balanced and s.init.kind == "scalar"


def test_labels_sign_the_examples():
    s = Setting([[1.0, 2.0], [-1.0, 1.0]], [1, -1])
    np.testing.assert_array_equal(s.Z, [[1, 2], [1, -1]])


def test_vector_and_layer_inits():
    s = Setting.from_z([1, 2], alpha=[0.1, 0.2], depth=2)
    assert s.init.kind == "vector" and s.balanced
    np.testing.assert_array_equal(s.layers0, [[0.1, 0.2], [0.1, 0.2]])
    s = Setting.from_z([1, 2], alpha=np.array([[0.1, 0.2], [0.3, -0.4]]), depth=2)
    assert s.init.kind == "layers" and not s.balanced


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(X=[[1.0, 0.0], [-1.0, 0.0]], y=[1, 1]), "not linearly separable: examples 1, 2"),
        (dict(X=[[0.0, 0.0]], y=[1]), "example 1 is the zero vector"),
        (dict(X=[[1.0, 2.0]], y=[2]), "labels must be +1 or -1"),
        (dict(X=[[1.0, 2.0]], y=[1, 1]), "1 examples but 2 labels"),
        (dict(X=np.zeros((0, 3))), "data are empty"),
        (dict(X=[[1.0, np.nan]]), "non-finite value (nan) at index (1, 2)"),
        (dict(X=[[1.0, np.inf]]), "non-finite"),
        (dict(X=[[1.0]], rho=-0.1), "ρ must be ≥ 0"),
        (dict(X=[[1.0]], rho=float("nan")), "finite number"),
        (dict(X=[[1.0]], depth=0), "depth L must be an integer ≥ 1"),
        (dict(X=[[1.0]], depth=1.5), "depth L must be an integer ≥ 1"),
        (dict(X=[[1.0]], alpha=0.0), "must be > 0"),
        (dict(X=[[1.0]], alpha=-1.0), "must be > 0"),
        (dict(X=[[1.0, 2.0]], alpha=[0.1, -0.1]), "alpha_2 = -0.1"),
        (dict(X=[[1.0, 2.0]], alpha=[0.1, 0.2, 0.3]), "alpha has 3 entries"),
        (dict(X=[[1.0, 2.0]], alpha=np.ones((3, 2))), "shape 3×2"),
        (dict(X=[[1.0]], optimizer="adam"), "unknown optimizer"),
        (dict(X=[[1.0]], loss="hinge"), "unknown loss"),
    ],
)
def test_bad_inputs(kwargs, fragment):
    with pytest.raises(SettingError) as exc:
        Setting(**kwargs)
    msg = str(exc.value)
    assert fragment in msg
    assert "\n" not in msg


def test_separability_certificate_is_a_real_certificate():
    # three examples whose signed versions positively combine to 0: 1·z1 + 1·z2 + 2·z3 = 0
    X = np.array([[1.0, 1.0], [1.0, -1.0], [1.0, 0.0]])
    y = np.array([1, 1, -1])
    with pytest.raises(NotSeparableError) as exc:
        Setting(X, y)
    Z = y[:, None] * X
    lam = np.zeros(3)
    lam[np.array(exc.value.examples) - 1] = exc.value.weights
    assert np.all(lam >= 0) and lam.sum() == pytest.approx(1)
    np.testing.assert_allclose(Z.T @ lam, 0, atol=1e-9)


def test_separable_data_get_a_witness():
    Z = np.array([[1.0, 2.0], [2.0, -0.5], [0.5, 0.5]])
    beta = check_separable(Z)
    assert np.all(Z @ beta >= 1 - 1e-9)


def test_nearly_degenerate_but_separable():
    # separable only through a tiny margin: must not be declared non-separable
    Z = np.array([[1.0, 1e-6], [-1.0, 1e-6]])
    beta = check_separable(Z)
    assert np.all(Z @ beta > 0)


def test_parse_floats():
    np.testing.assert_array_equal(parse_floats("1, 2.5,-3", "z"), [1, 2.5, -3])
    for bad in ["", "1,,2", "a,b", "1;2"]:
        with pytest.raises(SettingError):
            parse_floats(bad, "z")


def test_csv(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("x1,x2,y\n1,2,1\n-1,0.5,-1\n\n# comment\n")
    X, y = read_csv(p)
    np.testing.assert_array_equal(X, [[1, 2], [-1, 0.5]])
    np.testing.assert_array_equal(y, [1, -1])
    s = Setting.from_csv(p)
    assert s.n == 2


@pytest.mark.parametrize(
    "text, fragment",
    [("x1,y\n", "no data rows"), ("1,2,1\n1,2\n", "2 columns where earlier rows have 3"),
     ("1,2,1\n1,x,1\n", "not a number"), ("1\n", "at least two columns")],
)
def test_csv_errors(tmp_path, text, fragment):
    p = tmp_path / "d.csv"
    p.write_text(text)
    with pytest.raises(SettingError, match=fragment):
        read_csv(p)


def test_missing_csv():
    with pytest.raises(SettingError, match="not found"):
        Setting.from_csv("/nonexistent/file.csv")


def test_replace_revalidates():
    s = Setting.from_z([1, 2], rho=1.0)
    assert s.replace(rho=2.0).rho == 2.0
    with pytest.raises(SettingError):
        s.replace(rho=-1.0)


# ------------------------------------------------------------------ edges: encoding, limits, scale
def test_latin1_csv_reads_numbers_and_names_a_bad_cell(tmp_path):
    p = tmp_path / "h.csv"
    p.write_bytes("café,x2,y\n1,2,1\n-1,0.5,-1\n".encode("latin-1"))
    X, y = read_csv(p)
    np.testing.assert_array_equal(X, [[1, 2], [-1, 0.5]])
    p.write_bytes("1,2,1\n\xe9,1,1\n".encode("latin-1"))
    with pytest.raises(SettingError, match=r"h.csv:2: not a number") as e:
        read_csv(p)
    assert "\n" not in str(e.value)


def test_csv_size_limits_are_checked_before_reading(tmp_path):
    from theorycheck import setting as S

    big = tmp_path / "big.csv"
    with big.open("wb") as fh:  # sparse: 3 GB on paper, nothing on disk
        fh.truncate(3_000_000_000)
    with pytest.raises(SettingError, match="exceeds the limit of .* bytes"):
        read_csv(big)
    long = tmp_path / "long.csv"
    long.write_text("1," * (S.MAX_CSV_LINE // 2 + 10) + "1\n")
    with pytest.raises(SettingError, match="line longer than the limit"):
        read_csv(long)
    nul = tmp_path / "nul.csv"
    nul.write_bytes(b"1,2,1\n1,\x00,1\n")
    with pytest.raises(SettingError, match="NUL"):
        read_csv(nul)


@pytest.mark.parametrize("rows", [[[0.21], [1.399], [0.565]], [[1e-310, 2e-310]], [[3e300, -1e300], [1e300, 1e299]],
                                  [[1e-300, 1.0], [2e-300, -0.5]]])
def test_separator_has_min_margin_at_least_one(rows):
    Z = -np.array(rows)  # labels −1
    beta = check_separable(Z)
    m = Z @ beta
    if np.max(np.abs(Z)) < 1e-300:  # a margin-1 β would overflow: a direction with max entry 1
        assert np.max(np.abs(beta)) == 1.0 and np.all(m > 0)
    else:
        assert np.min(m) >= 1.0 and np.min(m) < 1 + 1e-6


def test_setting_json_separator_margin(tmp_path):
    from theorycheck.api import describe

    p = tmp_path / "d.csv"
    p.write_text("0.21,-1\n1.399,-1\n0.565,-1\n")
    info = describe(Setting.from_csv(p))
    assert info["separator_min_margin"] >= 1.0
    assert info["separator"][0] < 0


def test_defaults_are_the_command_lines():
    s = Setting.from_z([1, 2])
    assert (s.optimizer, s.rho, s.depth, s.loss, float(s.init.value)) == ("sam-l2", 1.0, 2, "logistic", 1.0)


# ------------------------------------------------------------------ the reachable cone
NEG = np.array([[-1.0, -0.5], [-0.5, -1.0], [-2.0, 0.3], [0.2, -1.5]])  # separable only with β < 0


def test_reachable_cone_signs():
    from theorycheck.setting import reachable_cone

    assert reachable_cone(np.ones((1, 3)))[0] == [None] * 3
    assert reachable_cone(np.ones((2, 3)))[0] == [1, 1, 1]
    assert reachable_cone(np.array([[-1.0, 2, 0], [-1.0, 2, 0], [-1.0, 2, 0]]))[0] == [-1, 1, 0]
    assert reachable_cone(np.array([[-1.0, 2], [-1.0, 2]]))[0] == [1, 1]
    assert reachable_cone(np.array([[1.0, 2], [1.0, 3]]))[0] is None


def test_not_separable_in_the_reachable_cone_has_a_certificate():
    s = Setting(NEG, np.ones(4), depth=2)  # separable (β = (−1, −1)), but not with β ≥ 0
    r = s.reachable()
    assert r.separable is False and r.signs == [1, 1]
    lam = np.zeros(4)
    lam[np.array(r.examples) - 1] = r.weights
    assert np.all(lam >= 0) and lam.sum() == pytest.approx(1)
    assert np.all(s.Z.T @ lam <= 1e-9)  # Σλ_i <β, z_i> ≤ 0 for every β ≥ 0
    assert r.loss_lower_bound == pytest.approx(np.log(2) / 4)
    assert Setting(NEG, np.ones(4), depth=1).reachable().separable is True
    assert Setting(NEG, np.ones(4), depth=3).reachable().separable is False
    # explicit balanced negative layers, odd L: β ≤ 0 reachable
    assert Setting(NEG, np.ones(4), depth=3, alpha=-np.ones((3, 2))).reachable().separable is True
    assert Setting(-NEG, np.ones(4), depth=2).reachable().separable is True


def test_reachable_agrees_with_a_flow_whose_loss_stays_positive():
    """GD from α = 1 on NEG (d = 2, L = 2): β stays ≥ 0 and the loss stays ≥ log 2 / n."""
    from theorycheck.solvers.discrete import run

    s = Setting(NEG, np.ones(4), depth=2, optimizer="gd", rho=0.0, alpha=0.5)
    tr = run(s, eta=0.1, steps=2000, max_seconds=math.inf)  # its 2000 steps decide, never the host's load
    B = tr.beta()
    assert np.all(B >= 0)  # the cone is kept
    losses = np.mean(np.log1p(np.exp(-(B @ s.Z.T))), axis=1)
    assert np.all(losses >= s.reachable().loss_lower_bound - 1e-12)
