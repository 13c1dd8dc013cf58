"""α_c proved, at every depth that has one: a bracket [lower, upper] of the collapse threshold of ℓ2-SAM (one
example z > 0, balanced init α·1) whose lower end is *proved* to collapse and whose upper end is *proved* to grow,
by validated (ball-arithmetic) integration and persisting lemmas.

One prover for every depth: :func:`prove_alpha_c` builds the proved-fate system of the depth
(:func:`fate_system`: a :class:`~theorycheck.proved.fate_system.FateSystem` — C4's reduced ODE in a moving frame
at L = 2, :class:`~theorycheck.proofs.minor_first.proved.reduced_l2.ReducedL2`; the ratio reduction blown up at the degenerate
equilibrium at even L ≥ 4, :class:`~theorycheck.proofs.minor_first.proved.ratio_blowup.RatioBlowup`), asks it for the bracket to
prove, proves the fate of each end with it, and assembles the bracket
(:func:`theorycheck.proved.bracket.assemble`: proved when both fates are and every lemma the system rests on is
proved for (L, d)). The fate is monotone in α (P3), so collapse at ``lower`` and growth at ``upper`` put α_c in
[lower, upper]. :mod:`theorycheck.proved.certificate` writes the runs of a proof made with ``record=True``.
"""

from __future__ import annotations

import time

from theorycheck.proofs.minor_first.lemmas import BOOK

from theorycheck.errors import TheorycheckError
from theorycheck.proved.bracket import FateProof, ProvedAlphaC, assemble
from theorycheck.proved.fate_system import FateSystem

__all__ = ["FateProof", "ProvedAlphaC", "fate_system", "prove_alpha_c", "system_class"]


def system_class(depth: int) -> type[FateSystem]:
    """The proved-fate system of depth ``depth``: L = 2 or even L ≥ 4 (odd L has no collapse threshold)."""
    L = int(depth)
    if L == 2:
        from theorycheck.proofs.minor_first.proved.reduced_l2 import ReducedL2

        return ReducedL2
    if L >= 4 and L % 2 == 0:
        from theorycheck.proofs.minor_first.proved.ratio_blowup import RatioBlowup

        return RatioBlowup
    raise TheorycheckError(f"depth {L}: a proved α_c exists for L = 2 and even L ≥ 4 (odd L: no collapse)")


def fate_system(z, rho, depth: int, digits: int) -> FateSystem:
    """The system that proves fates for a bracket of ``digits`` digits at depth ``depth`` (built at the system's
    own working accuracy, :meth:`~theorycheck.proved.fate_system.FateSystem.working_digits`)."""
    cls = system_class(depth)
    D = cls.working_digits(digits)
    return cls(z, rho, D, depth=int(depth))


def prove_alpha_c(z, rho, *, depth: int = 2, digits: int = 12, max_seconds: float = 600.0, guess=None,
                  record: bool = False) -> ProvedAlphaC:
    """α_c ∈ [lower, upper] with ``lower`` proved to collapse and ``upper`` proved to grow (ℓ2-SAM, one example,
    z > 0, balanced init α·1, L = ``depth``: 2 or even ≥ 4), aiming at ``digits`` significant digits; ``status``
    "not proved" (with ``note``) when a budget runs out first (``max_seconds`` at L = 2; step budgets at every
    depth). ``z``, ``rho``: the exact inputs (decimal strings, Fractions, :class:`~theorycheck.arith.exact.Exact`, e.g.
    ``exact_inputs(setting).z``; a float is its binary value); the answer's ``inputs`` echo what the bracket is
    about. ``guess``: a starting α where the system starts from a floating-point α_c (L = 2; default: the
    floating-point α_c of the same exact inputs). ``record``: keep every step (for
    :func:`theorycheck.proved.certificate.certificate_of`; the answer's ``system`` writes them)."""
    t_start = time.perf_counter()
    digits = int(digits)
    system = fate_system(z, rho, depth, digits)
    deadline = t_start + max_seconds
    ends = system.ends(digits, deadline=deadline, guess=guess)
    run_deadline = deadline if system.TIMED else None
    fl = system.run(ends.lower, deadline=run_deadline, record=record)
    fh = system.run(ends.upper, deadline=run_deadline, record=record)
    proof = assemble(ends.lower, ends.upper, fl, fh, digits=ends.digits, digits_asked=digits, method=system.method,
                     lemmas=system.LEMMAS, book=BOOK, inputs=system.inputs, seconds=time.perf_counter() - t_start,
                     note=ends.note)
    proof.system = system
    return proof
