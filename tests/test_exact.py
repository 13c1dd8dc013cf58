"""Numbers as typed: decimals are the rationals they denote, floats their binary values, balls contain them."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from theorycheck.errors import SettingError
from theorycheck.exact import decimal_text, exact, exact_vector


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
