"""``theorycheck check-certificate FILE``: re-check a proof certificate written by ``thresholds --prove
--certificate FILE`` (L = 2 or even L ≥ 4). A thin shell over
:func:`theorycheck.proved.checker.check_certificate`."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from theorycheck.errors import TheorycheckError
    from theorycheck.jsonio import emit
    from theorycheck.proved.check import read_certificate
    from theorycheck.proved.checker import check_certificate

    cert = read_certificate(args.file)  # bounded size and nesting: a one-line error otherwise
    try:
        res = check_certificate(cert)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise TheorycheckError(f"check-certificate: {args.file} is not a readable certificate ({e})") from None
    if args.json:
        emit(res.as_dict())
        return 0 if res.ok else 1
    verdict = "ACCEPTED" if res.ok else "REJECTED"
    print(f"{verdict}: {res.steps} steps re-checked in {res.seconds:.1f} s; bracket [{res.lower}, {res.upper}]")
    if res.inputs is not None:
        z = ", ".join(res.inputs["z"])
        print(f"  inputs (exact): z = ({z}), ρ = {res.inputs['rho']}, L = {res.inputs['depth']}")
    if res.ok:
        s = res.strength
        extra = f" ({s.because})" if s.because and s.kind in ("floating-point check", "holds on inputs") else ""
        print(f"  the bracket is {s.text}{extra}")
    for f in res.failures:
        print(f"  {f}")
    return 0 if res.ok else 1


def register(sub) -> None:
    p = sub.add_parser("check-certificate", help="re-check a proof certificate (thresholds --prove --certificate)",
                       description="Re-derives what the certificate claims from its exact inputs alone and "
                       "re-checks every inclusion with code that shares nothing with the integrator but the ball "
                       "arithmetic; exit status 1 when it is rejected, 2 when the file cannot be read.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)
