"""theorycheck.claims.strategies: draws are valid, arguments are checked eagerly."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis.errors import InvalidArgument

from theorycheck import Setting
from theorycheck.claims import strategies as tcs
from theorycheck.setting import check_separable


@given(tcs.separable_datasets(n=(1, 8), d=(1, 4), margin=0.2))
def test_datasets_are_separable_with_margin(data):
    X, y = data
    assert set(np.unique(y)) <= {-1.0, 1.0}
    beta = check_separable(y[:, None] * X)  # raises if not separable
    assert np.all((y[:, None] * X) @ beta > 0)


@given(tcs.single_examples(d=(2, 5), ties=True, sort=True))
def test_single_examples(z):
    assert np.all(z > 0) and np.all(np.diff(z) >= 0) and 2 <= z.size <= 5


@given(tcs.settings(optimizers=["sam-l2", "sam-linf"], depths=[2, 3], per_coordinate=True))
def test_settings_validate(s):
    assert isinstance(s, Setting) and s.single and s.depth in (2, 3)
    assert np.all(s.layers0 > 0)


@given(tcs.settings(single=False, optimizers=["gd"]))
def test_multi_example_settings(s):
    assert s.rho == 0.0 and s.optimizer == "gd"


@given(tcs.init_scales(1e-3, 1e3))
def test_init_scales(a):
    assert 1e-3 * (1 - 1e-12) <= a <= 1e3 * (1 + 1e-12)


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda: tcs.single_examples(d=0), "d must be an integer ≥ 1"),
        (lambda: tcs.single_examples(d=(4, 2)), "empty"),
        (lambda: tcs.single_examples(min_value=-1), "must be > 0"),
        (lambda: tcs.separable_datasets(margin=0), "margin must be > 0"),
        (lambda: tcs.init_scales(2, 1), "exceeds"),
        (lambda: tcs.settings(optimizers=["adam"]), "optimizers must be"),
        (lambda: tcs.settings(losses=[]), "losses must be"),
        (lambda: tcs.settings(depths=[0]), "depth must be"),
        (lambda: tcs.settings(rho=(-1.0, 1.0)), "rho lower bound"),
        (lambda: tcs.per_coordinate_inits(0), "d must be"),
    ],
)
def test_eager_argument_checks(call, fragment):
    with pytest.raises(InvalidArgument, match=fragment):
        call()
