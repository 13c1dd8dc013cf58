"""Numbers as typed: decimals are the rationals they denote, floats their binary values, balls contain them."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from theorycheck.arith.exact import decimal_text, exact, exact_vector
from theorycheck.errors import SettingError


def test_decimals_are_rationals_and_floats_are_binary():
    assert exact("0.1").value == Fraction(1, 10) and not exact("0.1").binary
    assert exact("1e-3").value == Fraction(1, 1000) and exact("-2.50").text == "-2.5"
    assert exact("1/3").value == Fraction(1, 3) and exact("1/3").text == "1/3"
    assert exact(Decimal("0.52")).value == Fraction(13, 25) and exact(7).value == 7
    f = exact(0.1)
    assert f.binary and f.value == Fraction(0.1) and f.text == "0.1000000000000000055511151231257827021181583404541015625"
    assert exact(np.float64(0.5)).value == Fraction(1, 2) and exact(np.int64(3)).value == 3
    assert [x.text for x in exact_vector("0.52, 0.91,1.77")] == ["0.52", "0.91", "1.77"]
    assert [x.value for x in exact_vector(np.array([1.0, 2.0]))] == [1, 2]


def test_the_ball_contains_the_typed_number_and_not_its_float():
    from flint import ctx, fmpq

    old = ctx.prec
    try:
        ctx.prec = 200
        b = exact("0.1").ball()
        assert b.contains(fmpq(1, 10)) and not b.contains(fmpq(*Fraction(0.1).as_integer_ratio()))
        assert exact(0.1).ball().contains(fmpq(*Fraction(0.1).as_integer_ratio()))
    finally:
        ctx.prec = old


def test_decimal_text_terminates_exactly_or_says_p_over_q():
    assert decimal_text(Fraction(1, 8)) == "0.125" and decimal_text(Fraction(-3, 40)) == "-0.075"
    assert decimal_text(Fraction(2, 3)) == "2/3" and decimal_text(Fraction(5)) == "5"


@pytest.mark.parametrize("bad", ["", "abc", "1..2", "nan", "inf", "1/0", "1e99999", float("nan"), True])
def test_bad_numbers_are_one_line_errors(bad):
    with pytest.raises(SettingError):
        exact(bad, "rho")


# ---------------------------------------------------------------- a Setting keeps the numbers as typed
def test_setting_keeps_the_typed_numbers_beside_its_floats():
    from theorycheck.setting import Setting, exact_inputs

    s = Setting.from_z("0.52,0.91,1.77", rho="0.29", alpha="0.1", depth=4)
    assert s.rho == 0.29 and list(s.z) == [0.52, 0.91, 1.77]  # the floats for floating-point work
    inp = exact_inputs(s)
    assert inp.zq == (Fraction(13, 25), Fraction(91, 100), Fraction(177, 100))
    assert inp.rho.value == Fraction(29, 100) and inp.alpha.value == Fraction(1, 10) and inp.depth == 4
    assert inp.as_dict() == {"z": ["0.52", "0.91", "1.77"], "rho": "0.29", "alpha": "0.1", "depth": 4,
                             "from_float": False, "float_inputs": []}
    assert exact_inputs(s, alpha=False).alpha is None
    assert exact_inputs(s.replace(depth=2)).rho.value == Fraction(29, 100)  # replace keeps them exact
    f = exact_inputs(Setting.from_z([1.0, 0.1], rho=1))
    assert f.from_float and f.float_inputs == ["z"] and f.zq[1] == Fraction(0.1)
    assert "from a float" in f.text and "rho" not in f.float_inputs


def test_setting_refuses_numbers_that_float64_cannot_hold():
    from theorycheck.setting import Setting

    for kw in (dict(z="1e-400,1"), dict(z="1,2", rho="1e400"), dict(z="1,2", alpha="1e-999")):
        z = kw.pop("z")
        with pytest.raises(SettingError, match="beyond float64"):
            Setting.from_z(z, **kw)


def test_exact_range():
    from theorycheck.arith.exact import exact_range

    a, b = exact_range("0.4:0.44")
    assert (a.value, b.value) == (Fraction(2, 5), Fraction(11, 25))
    for bad in ("0.44:0.4", "0:1", "1", "a:b", "1:2:3"):
        with pytest.raises(SettingError):
            exact_range(bad)
