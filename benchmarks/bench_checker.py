"""Benchmark: the certificate checker's field evaluation, the tape replay (``TreeEval``; ``TreeEvals``: a field's
components and its Jacobian on one tape, so that what they share is computed once) against the recursive tree
walk of each expression (``theorycheck.proved.tape._walk``), in one process, back to back, on the same
certificates.

Both evaluate the same operations on the same operands (tests/test_checker_tape.py holds them equal bit for bit),
so the verdicts agree and only the time differs. Reported per certificate: CPU seconds (``time.process_time``) of
``check_certificate`` with each evaluator, and their ratio. The host and its load average are written with
the numbers.

Run (from the repository root; one core: ``taskset -c 0`` where available):
``PYTHONPATH=. taskset -c 0 python benchmarks/bench_checker.py --write benchmarks/CHECKER.md``
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

#: (label, thresholds arguments): written once here, then checked with both evaluators
CASES = [("depth 4, z = (1, 2), ρ = 1, 6 digits", dict(z=["1", "2"], rho="1", depth=4, digits=6)),
         ("L = 2, z = (1, 2, 3), ρ = 1, 12 digits", dict(z=["1", "2", "3"], rho="1", depth=2, digits=12))]


def _certificate(case: dict, path: Path) -> dict:
    from theorycheck.api import thresholds
    from theorycheck.proved.check import read_certificate
    from theorycheck.setting import Setting

    s = Setting.from_z(case["z"], depth=case["depth"], rho=case["rho"])
    thresholds(s, prove=True, digits=case["digits"], certificate=str(path))
    return read_certificate(path)


def _cpu(cert: dict) -> tuple[float, bool]:
    from theorycheck.proofs.minor_first.proved.checker import check_certificate

    t = time.process_time()
    ok = check_certificate(cert).ok
    return time.process_time() - t, ok


def main() -> None:
    import theorycheck.proved.tape as chk

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", help="write the table (markdown) here")
    ap.add_argument("--tmp", default="/tmp", help="where the certificates are written")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    rows = []
    tape = chk.TreeEval.__call__, chk.TreeEvals.__call__
    walk = (lambda self, env: chk._walk(self.expr, env, {}),  # the baseline: the recursive walk, expression by
            lambda self, env: [chk._walk(e, env, {}) for e in self.exprs])  # expression
    for label, case in CASES:
        cert = _certificate(case, Path(args.tmp) / "bench_checker_cert.json")
        chk.TreeEval.__call__, chk.TreeEvals.__call__ = tape
        new, ok_new = _cpu(cert)
        chk.TreeEval.__call__, chk.TreeEvals.__call__ = walk
        old, ok_old = _cpu(cert)
        chk.TreeEval.__call__, chk.TreeEvals.__call__ = tape
        rows.append(f"| {label} | {old:.1f} | {new:.1f} | {old / new:.2f} | {ok_old} / {ok_new} |")
        print(rows[-1], flush=True)
    head = ["# The certificate checker: tape replay against the tree walk", "",
            f"Command: `PYTHONPATH=. taskset -c 0 python benchmarks/bench_checker.py --write benchmarks/CHECKER.md`; host "
            f"{platform.node() or '?'} ({platform.processor() or platform.machine()}, {os.cpu_count()} cores), Python "
            f"{platform.python_version()}, load average {load0:.2f} before, {os.getloadavg()[0]:.2f} after. CPU "
            "seconds of `check_certificate`, this process only.", "",
            "| certificate | tree walk CPU s | tape CPU s | ratio (walk / tape) | accepted (walk / tape) |",
            "|---|---|---|---|---|"]
    if args.write:
        Path(args.write).write_text("\n".join(head + rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
