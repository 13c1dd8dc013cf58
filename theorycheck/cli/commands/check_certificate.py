"""``theorycheck check-certificate FILE``: re-check a proof certificate written by ``thresholds --prove
--certificate FILE`` (L = 2 or even L ≥ 4). A thin shell over
:func:`theorycheck.proved.certificate_depth.check_any_certificate`."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from theorycheck.errors import TheorycheckError
    from theorycheck.jsonio import emit
    from theorycheck.proved.certificate_depth import check_any_certificate

    if not Path(args.file).is_file():
        raise TheorycheckError(f"check-certificate: no file {args.file!r}")
    try:
        res = check_any_certificate(args.file)
    except (ValueError, KeyError, TypeError) as e:
        raise TheorycheckError(f"check-certificate: {args.file} is not a readable certificate ({e})") from None
    if args.json:
        emit(res.as_dict())
    else:
        verdict = "ACCEPTED" if res.ok else "REJECTED"
        print(f"{verdict}: {res.steps} steps re-checked in {res.seconds:.1f} s; bracket [{res.lower}, {res.upper}]")
        for f in res.failures:
            print(f"  {f}")
    return 0 if res.ok else 1


def register(sub) -> None:
    p = sub.add_parser("check-certificate", help="re-check a proof certificate (thresholds --prove --certificate)",
                       description="Re-checks every inclusion of a certificate with code that shares nothing with "
                       "the integrator but the ball arithmetic; exit status 1 when it is rejected.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)
