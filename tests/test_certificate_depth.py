"""Certificates of the depth-L α_c proof (proved/certificate_depth.py): what the prover writes, the independent
checker accepts; a changed number is rejected (by the digest, and by an inclusion when the digest is redone)."""

import copy
import json
from types import SimpleNamespace

import pytest

from theorycheck.proved.alpha_c_depth import DepthProver
from theorycheck.proved.certificate_depth import certificate_of_depth, check_any_certificate, check_certificate_depth
from theorycheck.proved.check import digest as _digest


@pytest.fixture(scope="module")
def wide_certificate():
    """A wide but true bracket of α_c(4) = 0.3554… for z = (1, 2), ρ = 1: α = 0.25 collapses (12 steps), α = 0.45
    grows (one step)."""
    pr = DepthProver([1.0, 2.0], 1.0, 4, 3)
    lo, hi = pr.run("0.25", record=True), pr.run("0.45", record=True)
    assert (lo.fate, hi.fate) == ("collapse", "growth")
    res = SimpleNamespace(collapses=lo, grows=hi, lower="0.25", upper="0.45")
    return certificate_of_depth(res, [1.0, 2.0], 1.0, 4)


def _redigest(c):
    c["digest"] = _digest(c)
    return c


def test_depth_certificate_accepted_and_tampering_rejected(wide_certificate):
    ok = check_any_certificate(copy.deepcopy(wide_certificate))
    assert ok.ok and ok.digest_ok and ok.steps == sum(len(r["steps"]) for r in wide_certificate["runs"])
    shifted = copy.deepcopy(wide_certificate)
    end = shifted["runs"][0]["steps"][0]["end"]
    end["c"][0][0] = str(float(end["c"][0][0]) * (1 + 1e-6))
    bad = check_certificate_depth(shifted, stop_at_first=True)
    assert not bad.ok and not bad.digest_ok  # the digest catches any change
    bad = check_certificate_depth(_redigest(shifted), stop_at_first=True)
    assert not bad.ok and bad.digest_ok and any("Taylor enclosure" in f for f in bad.failures)
    swapped = _redigest(copy.deepcopy(wide_certificate))
    swapped["runs"][0]["alpha"] = "0.24"
    assert not check_certificate_depth(_redigest(swapped), stop_at_first=True).ok  # the run is not of the bracket's α


@pytest.mark.slow
def test_thresholds_depth4_certificate_round_trip(tmp_path):
    from theorycheck.api import thresholds
    from theorycheck.setting import Setting

    path = tmp_path / "cert.json"
    r = thresholds(Setting.from_z([1.0, 2.0], depth=4, rho=1.0), prove=True, digits=3, certificate=str(path)).as_dict()
    proof = r["alpha_collapse"]["proof"]
    assert proof["status"] == "proved" and proof["certificate"] == str(path)
    res = check_any_certificate(str(path))
    assert res.ok and (res.lower, res.upper) == (proof["lower"], proof["upper"])
    cert = json.loads(path.read_text())
    step = cert["runs"][1]["steps"][len(cert["runs"][1]["steps"]) // 2]
    step["end"]["R"][0][1] = str(float(step["end"]["R"][0][1]) / 4)  # a radius shrunk: the enclosure no longer fits
    bad = check_certificate_depth(_redigest(cert), stop_at_first=True)
    assert not bad.ok and bad.digest_ok
