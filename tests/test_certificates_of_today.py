"""Certificates written before the prover and the checker became one (saved under tests/data/certificates/) are still
accepted by the one checker (minor_first/proved/checker.py), and a tampered copy of each is rejected.

The files were written by theorycheck at commit e9b781f (the code before one prover served every depth):

- l2_z123_d6.json: ``theorycheck thresholds --z 1,2,3 --rho 1 --prove --digits 6 --certificate FILE`` (L = 2);
- l2_decimals_d4.json: ``theorycheck thresholds --z 0.52,0.91,1.77 --rho 0.29 --prove --digits 4 --certificate FILE``
  (L = 2, exact decimal inputs whose balls have radii);
- depth4_z12_wide.json: the depth-4 prover of that commit run at α = 0.25 and 0.45 for z = (1, 2), ρ = 1 (3 working
  digits, ``record=True``) and written by its depth-L writer (a wide but true bracket, a few steps);
- depth4_z12_d1.json.gz: ``theorycheck thresholds --z 1,2 --rho 1 --depth 4 --prove --digits 1 --certificate FILE``
  (gzipped; its check takes about a minute: slow).
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest
from theorycheck.proofs.minor_first.proved.checker import check_certificate

from theorycheck.proved.check import digest

DATA = Path(__file__).parent / "data" / "certificates"
FILES = ["l2_z123_d6.json", "l2_decimals_d4.json", "depth4_z12_wide.json"]


def _steps(cert: dict) -> int:
    runs = cert["runs"]
    if "segments" in runs[0]:  # L = 2: segments of the moving frame
        return sum(len(s["steps"]) for r in runs for s in r["segments"])
    return sum(len(r["steps"]) for r in runs)


def _first_end_midpoint(cert: dict, run: int = 0) -> list:
    """The ball [mid, rad] of the first coordinate at the end of the second step of run ``run`` (its first step when
    it has one)."""
    r = cert["runs"][run]
    if "segments" in r:
        steps = r["segments"][0]["steps"]
        return steps[min(1, len(steps) - 1)]["end"][0]
    return r["steps"][min(1, len(r["steps"]) - 1)]["end"]["c"][0]


def _changed_digit(ball: list) -> None:
    """The fifth significant digit of the midpoint changed (far outside the ball's radius)."""
    mid = ball[0]
    i = next(k for k, ch in enumerate(mid) if ch in "123456789") + 4
    while not mid[i].isdigit():
        i += 1
    ball[0] = mid[:i] + ("1" if mid[i] != "1" else "2") + mid[i + 1:]


def _accepted(path: Path) -> None:
    cert = json.loads(path.read_text(encoding="utf-8"))
    res = check_certificate(str(path))
    assert res.ok and res.digest_ok and res.failures == [], res.failures[:5]
    assert res.steps == _steps(cert) > 0
    assert (res.lower, res.upper) == (cert["lower"], cert["upper"])
    assert res.inputs == {k: cert["inputs"][k] for k in ("z", "rho", "depth")}
    assert res.strength is not None and res.strength.proved


@pytest.mark.parametrize("name", FILES)
def test_a_certificate_of_today_is_accepted(name):
    _accepted(DATA / name)


@pytest.mark.parametrize("name", FILES)
def test_a_tampered_copy_is_rejected(name):
    cert = json.loads((DATA / name).read_text(encoding="utf-8"))
    for run in (0, 1):
        forged = copy.deepcopy(cert)
        _changed_digit(_first_end_midpoint(forged, run))
        res = check_certificate(copy.deepcopy(forged), stop_at_first=True)
        assert not res.ok and not res.digest_ok  # the digest notices any change
        forged["digest"] = digest(forged)  # ... but it is no evidence: redone, the inclusion still fails
        res = check_certificate(forged, stop_at_first=True)
        assert not res.ok and res.digest_ok and res.strength is None
        assert any(f.startswith(f"run {run + 1}") for f in res.failures), res.failures[:3]
    moved = copy.deepcopy(cert)
    moved["lower"] = moved["runs"][0]["alpha"] = str(float(cert["lower"]) * 0.999)  # a bracket end moved with its run
    moved["digest"] = digest(moved)
    assert not check_certificate(moved, stop_at_first=True).ok


@pytest.mark.slow
def test_the_depth4_certificate_thresholds_wrote_is_accepted(tmp_path):
    path = tmp_path / "depth4_z12_d1.json"
    path.write_bytes(gzip.decompress((DATA / "depth4_z12_d1.json.gz").read_bytes()))
    _accepted(path)
