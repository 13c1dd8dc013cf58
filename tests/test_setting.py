"""Setting: every bad input is a one-line SettingError naming the problem and the fix."""

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
