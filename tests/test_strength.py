"""The one Strength type: its words, its order, and that a proved answer cannot rest on less."""

import pytest

from theorycheck.strength import Kind, Strength, float_check, holds_on, not_decided, proved


def test_words_and_json():
    assert proved().text == "proved" and proved().as_dict() == {"kind": "proved", "text": "proved"}
    assert float_check().text == "a floating-point check (float64)"
    assert float_check(30).as_dict() == {"kind": "floating-point check", "text": "a floating-point check (30 digits)",
                                         "digits": 30}
    assert holds_on(1).text == "holds on 1 input" and holds_on(12).text == "holds on 12 inputs"
    assert not_decided("max_steps").text == "not decided (max_steps)"
    s = proved([("P1", proved()), ("C4", proved())])
    assert Strength.from_dict(s.as_dict()) == s


def test_weakest_wins():
    assert Strength.weakest([proved(), holds_on(3), float_check()]).kind is Kind.HOLDS_ON_INPUTS
    assert Strength.weakest([float_check(30), float_check()]) == float_check()
    assert Strength.weakest([proved(), not_decided("t_max")]).kind is Kind.NOT_DECIDED


def test_proved_cannot_rest_on_a_weaker_lemma():
    with pytest.raises(ValueError, match="P5"):
        proved([("P1", proved()), ("P5", float_check(30))])
    with pytest.raises(ValueError):
        Strength(Kind.HOLDS_ON_INPUTS)
