"""The one checker of proved α_c certificates, at every depth: :func:`check_certificate` re-derives the claim from
the certificate's inputs alone (:func:`theorycheck.proved.check.claim_of`) and re-checks both runs with the run
checker of its format (:class:`theorycheck.proved.check.RunChecker`: :mod:`theorycheck.proofs.minor_first.proved.check_reduced_l2` at
L = 2, :mod:`theorycheck.proofs.minor_first.proved.check_ratio_blowup` at even L ≥ 4), code that shares nothing with the integrator but
the ball arithmetic.
"""

from __future__ import annotations

import time

from theorycheck.proofs.minor_first.lemmas import BOOK
from theorycheck.proofs.minor_first.proved.check_ratio_blowup import RatioBlowupChecker
from theorycheck.proofs.minor_first.proved.check_reduced_l2 import ReducedL2Checker

from theorycheck.proved.check import (
    CertificateCheck,
    CertificateClaim,
    CertificateError,
    RunChecker,
    answer,
    claim_of,
    precision,
    read_certificate,
    serious,
)

__all__ = ["check_certificate", "run_checker"]


def run_checker(fmt) -> RunChecker:
    """The run checker of a certificate's ``format`` (the depth-L family by its prefix; anything else goes to the
    L = 2 checker, whose claim check names the format it expects)."""
    if str(fmt or "").startswith(RatioBlowupChecker.FORMAT.rsplit("/", 1)[0]):
        return RatioBlowupChecker()
    return ReducedL2Checker()


def check_certificate(cert, *, stop_at_first: bool = False) -> CertificateCheck:
    """Re-check a certificate of any depth (a dict, or a path to its JSON file read with bounded size and depth):
    the claim from its inputs (:func:`claim_of`), then both runs with the run checker of its format, each at the
    run's precision + 64 bits. ``stop_at_first``: return at the first failed check (beside the digest)."""
    started = time.perf_counter()
    cert = read_certificate(cert)
    rc = run_checker(cert.get("format"))
    claim, fails = claim_of(cert, fmt=rc.FORMAT, depth_of=rc.depth_rule, fields_of=rc.fields, lemmas=rc.LEMMA_NAMES)
    steps = 0
    if claim is not None and not (stop_at_first and serious(fails)):
        runs = cert.get("runs") if isinstance(cert.get("runs"), list) else []
        for ri, run in enumerate(runs[:2]):
            steps += _check_run_safely(rc, claim, ri, run, fails, stop_at_first)
    return answer(claim, fails, steps, time.perf_counter() - started, cert, rc.LEMMAS, BOOK)


def _check_run_safely(rc: RunChecker, claim: CertificateClaim, ri: int, run, fails: list, stop: bool) -> int:
    """:meth:`RunChecker.check_run` at the run's precision + 64 bits; a malformed run is one failure line."""
    prec = run.get("prec") if isinstance(run, dict) else None
    if not isinstance(prec, int) or any(f.startswith(f"run {ri + 1}: precision") for f in fails):
        return 0
    with precision(prec + 64):
        try:
            return rc.check_run(claim, ri, run, fails, stop)
        except (CertificateError, ValueError, ArithmeticError, KeyError, TypeError, AttributeError) as exc:
            fails.append(f"run {ri + 1}: malformed ({str(exc)[:200]})")
            return 0
