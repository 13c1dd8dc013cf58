"""Every certificate `thresholds --prove --certificate FILE` writes is accepted by `check-certificate`: the README's
examples (L = 2 at several digits, depth 4) and exact decimal inputs, each written and checked; the certificate
echoes the exact inputs the proof is about, and the checker's answer is about them."""

from __future__ import annotations

import json

import pytest
from theorycheck.proofs.minor_first.proved.checker import check_certificate


def _write_and_check(tmp_path, z, rho="1", depth=2, digits=12):
    from theorycheck.api import thresholds
    from theorycheck.setting import Setting

    path = tmp_path / "cert.json"
    r = thresholds(Setting.from_z(z, depth=depth, rho=rho), prove=True, digits=digits, certificate=str(path)).as_dict()
    proof = r["alpha_collapse"]["proof"]
    assert proof["certificate"] == str(path), proof["note"]
    cert = json.loads(path.read_text())
    res = check_certificate(str(path))
    assert res.ok and res.failures == [], res.failures[:5]
    assert (res.lower, res.upper) == (proof["lower"], proof["upper"]) == (cert["lower"], cert["upper"])
    # the certificate is about the inputs the proof is about, and the checker's answer about the certificate's
    assert {k: cert["inputs"][k] for k in ("z", "rho", "depth")} == res.inputs
    if proof.get("inputs"):
        assert [str(v) for v in proof["inputs"]["z"]] == res.inputs["z"] and proof["inputs"]["rho"] == res.inputs["rho"]
    assert res.inputs["depth"] == depth and len(res.inputs["z"]) == cert["system"]["d"]
    return res, cert


@pytest.mark.parametrize("digits", [6, 12])
def test_readme_l2_certificates_are_accepted(tmp_path, digits):
    # theorycheck thresholds --z 1,2,3 --rho 1 --prove [--digits D] --certificate cert.json
    res, cert = _write_and_check(tmp_path, [1, 2, 3], digits=digits)
    assert res.inputs == {"z": ["1", "2", "3"], "rho": "1", "depth": 2} and res.strength.proved
    assert "apriori" not in cert["runs"][0]["segments"][0]["steps"][0]  # the checker bounds the range itself


@pytest.mark.slow
@pytest.mark.parametrize("digits", [20, 30])
def test_readme_l2_certificates_at_more_digits_are_accepted(tmp_path, digits):
    _write_and_check(tmp_path, [1, 2, 3], digits=digits)


@pytest.mark.slow
def test_readme_depth4_certificate_is_accepted(tmp_path):
    # theorycheck thresholds --z 1,2 --rho 1 --depth 4 --prove --digits 3 --certificate cert.json: the runs it
    # records, written and re-checked (whether the answer is called proved depends on the lemmas' strength at L = 4,
    # which the checker reports too)
    from theorycheck.proofs.minor_first.lemmas import strength
    from theorycheck.proofs.minor_first.proved.alpha_c import prove_alpha_c

    from theorycheck.proved.certificate import write_certificate

    r = prove_alpha_c([1.0, 2.0], 1.0, depth=4, digits=3, record=True)
    assert (r.collapses.fate, r.grows.fate) == ("collapse", "growth")
    path = tmp_path / "cert.json"
    write_certificate(path, r)
    res = check_certificate(str(path))
    assert res.ok and res.failures == [] and (res.lower, res.upper) == (r.lower, r.upper), res.failures[:5]
    assert res.inputs == {"z": ["1", "2"], "rho": "1", "depth": 4}
    weakest = [n for n in ("P3", "P4", "P5", "P6") if not strength(n, depth=4, dim=2).proved]
    assert res.strength.proved == (not weakest)


def test_exact_decimal_inputs_are_echoed_and_checked():
    # 0.52, 0.91, 1.77 and 0.29 are not binary numbers: their balls have radii, and the integrator carries them as
    # states; the certificate writes the decimals typed, and the checker uses its own balls of them
    from theorycheck.proofs.minor_first.proved.alpha_c import prove_alpha_c

    from theorycheck.proved.certificate import certificate_of

    r = prove_alpha_c("0.52,0.91,1.77", "0.29", digits=8, record=True)
    assert r.status == "proved"
    cert = certificate_of(r)
    assert cert["inputs"]["z"] == ["0.52", "0.91", "1.77"] and cert["inputs"]["rho"] == "0.29"
    res = check_certificate(cert)
    assert res.ok and res.inputs == {"z": ["0.52", "0.91", "1.77"], "rho": "0.29", "depth": 2}, res.failures[:3]
    cert["inputs"]["rho"] = "0.2900001"  # the float64 neighbourhood of 0.29 is another problem
    from theorycheck.proved.check import digest

    cert["digest"] = digest(cert)
    assert not check_certificate(cert, stop_at_first=True).ok
