"""Certificates of the depth-L α_c proof (minor_first/proved/ratio_blowup.py, written by proved/certificate.py, checked by proved/check.py): what the prover writes, the independent
checker accepts; a changed number is rejected (by the digest, and by an inclusion when the digest is redone)."""

import copy
import json
from types import SimpleNamespace

import mpmath as mp
import pytest
from theorycheck.proofs.minor_first.proved.checker import check_certificate
from theorycheck.proofs.minor_first.proved.ratio_blowup import RatioBlowup

from theorycheck.proved.certificate import certificate_of
from theorycheck.proved.check import digest as _digest


@pytest.fixture(scope="module")
def wide_certificate():
    """A wide but true bracket of α_c(4) = 0.3554… for z = (1, 2), ρ = 1: α = 0.25 collapses (12 steps), α = 0.45
    grows (one step)."""
    pr = RatioBlowup([1.0, 2.0], 1.0, 3, depth=4)
    lo, hi = pr.run("0.25", record=True), pr.run("0.45", record=True)
    assert (lo.fate, hi.fate) == ("collapse", "growth")
    res = SimpleNamespace(collapses=lo, grows=hi, lower="0.25", upper="0.45")
    return certificate_of(res, pr)


def _redigest(c):
    c["digest"] = _digest(c)
    return c


def test_depth_certificate_accepted_and_tampering_rejected(wide_certificate):
    ok = check_certificate(copy.deepcopy(wide_certificate))
    assert ok.ok and ok.digest_ok and ok.steps == sum(len(r["steps"]) for r in wide_certificate["runs"])
    shifted = copy.deepcopy(wide_certificate)
    end = shifted["runs"][0]["steps"][0]["end"]
    end["c"][0][0] = str(float(end["c"][0][0]) * (1 + 1e-6))
    bad = check_certificate(shifted, stop_at_first=True)
    assert not bad.ok and not bad.digest_ok  # the digest catches any change
    bad = check_certificate(_redigest(shifted), stop_at_first=True)
    assert not bad.ok and bad.digest_ok and any("Taylor enclosure" in f for f in bad.failures)
    swapped = _redigest(copy.deepcopy(wide_certificate))
    swapped["runs"][0]["alpha"] = "0.24"
    assert not check_certificate(_redigest(swapped), stop_at_first=True).ok  # the run is not of the bracket's α


@pytest.mark.slow
def test_thresholds_depth4_certificate_round_trip(tmp_path):
    from theorycheck.api import thresholds
    from theorycheck.setting import Setting

    path = tmp_path / "cert.json"
    r = thresholds(Setting.from_z([1.0, 2.0], depth=4, rho=1.0), prove=True, digits=3, certificate=str(path)).as_dict()
    proof = r["alpha_collapse"]["proof"]
    assert proof["status"] == "proved" and proof["certificate"] == str(path)
    res = check_certificate(str(path))
    assert res.ok and (res.lower, res.upper) == (proof["lower"], proof["upper"])
    cert = json.loads(path.read_text())
    step = cert["runs"][1]["steps"][len(cert["runs"][1]["steps"]) // 2]
    step["end"]["R"][0][1] = str(float(step["end"]["R"][0][1]) / 4)  # a radius shrunk: the enclosure no longer fits
    bad = check_certificate(_redigest(cert), stop_at_first=True)
    assert not bad.ok and bad.digest_ok


@pytest.fixture(scope="module")
def depth4_12_digits(tmp_path_factory):
    """The bracket of α_c(4) for z = (0.5, 1, 2, 4), ρ = 1, to 12 digits, with its certificate: the ends lie about
    1e-13 from α_c, where the path lingers near the saddle of the blow-up longest."""
    from theorycheck.api import thresholds
    from theorycheck.setting import Setting

    path = tmp_path_factory.mktemp("depth4") / "cert.json"
    r = thresholds(Setting.from_z(["0.5", "1", "2", "4"], depth=4, rho="1"), prove=True, digits=12,
                   certificate=str(path)).as_dict()
    return r["alpha_collapse"]["proof"], path


@pytest.mark.slow
def test_depth4_twelve_digits_proved_and_certificate_accepted(depth4_12_digits):
    proof, path = depth4_12_digits
    assert proof["status"] == "proved" and proof["digits"] >= 12, proof.get("note")
    with mp.workdps(30):  # the float64 bisection of the blown-up system: α_c(4) = 0.26133744480330…
        assert mp.mpf(proof["lower"]) < mp.mpf("0.2613374448033") < mp.mpf(proof["upper"])
    res = check_certificate(str(path))
    assert res.ok and (res.lower, res.upper) == (proof["lower"], proof["upper"]), res.failures[:3]


@pytest.mark.slow
def test_depth4_forged_bracket_end_rejected(depth4_12_digits):
    proof, path = depth4_12_digits
    cert = json.loads(path.read_text())
    narrower = str(mp.mpf(proof["lower"]) + mp.mpf("1e-14"))
    forged = copy.deepcopy(cert)
    forged["lower"] = narrower  # the bracket's end moved: its run starts elsewhere
    bad = check_certificate(_redigest(forged), stop_at_first=True)
    assert not bad.ok and bad.digest_ok and any("not at the bracket's lower end" in f for f in bad.failures)
    forged["runs"][0]["alpha"] = narrower  # and the run said to start there: its start set misses the new start
    bad = check_certificate(_redigest(forged), stop_at_first=True)
    assert not bad.ok and bad.digest_ok and any("does not contain the start" in f for f in bad.failures)


@pytest.mark.slow
def test_depth6_twelve_digits_proved():
    from theorycheck.proofs.minor_first.proved.alpha_c import prove_alpha_c

    r = prove_alpha_c(["1", "2", "3"], "1", depth=6, digits=12)
    assert r.status == "proved" and r.digits >= 12, r.note
