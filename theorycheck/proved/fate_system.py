"""The protocol every proved-fate system implements: one α's path enclosed by validated integration until a
persisting lemma decides its fate, and the data a certificate of it holds.

A :class:`FateSystem` is the flow of ℓ2-SAM (one example z > 0, balanced init α·1) at one depth L, in the
coordinates its proof works in, for one (z, ρ) and one working accuracy. It brings:

- its **forms**: the system compiled for ball arithmetic (:meth:`FateSystem.start` builds the first state of α
  from the exact inputs);
- its **validated step**: :meth:`FateSystem.segment` encloses the path over one call of the validated
  integrator (:func:`theorycheck.proved.validated.integrate`), stopping as soon as the fate test holds;
- its **fate test**: :meth:`FateSystem.fate_test`, the persisting lemma that holds for every point of an
  enclosure (a collapse lemma or a growth lemma), or None;
- the **bracket** to prove (:meth:`FateSystem.ends`), the lemmas the bracket rests on (``LEMMAS``), the
  ``method`` it reports;
- the **certificate** data (:meth:`FateSystem.certificate_system`, :meth:`FateSystem.run_data`) in its own
  ``FORMAT``, with the names of the lemmas a run may end in (``LEMMA_NAMES``) — what the checker of that format
  (:mod:`theorycheck.proofs.minor_first.proved.checker`) re-checks with its own code.

:meth:`FateSystem.run` is the one loop: start, fate test, validated segments until the test holds or a budget
ends the run. The one prover, :func:`theorycheck.proofs.minor_first.proved.alpha_c.prove_alpha_c`, picks the system by L
(:mod:`theorycheck.proofs.minor_first.proved.reduced_l2` at L = 2, :mod:`theorycheck.proofs.minor_first.proved.ratio_blowup` at even L ≥ 4).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from theorycheck.proved.bracket import FateProof

__all__ = ["Ends", "FateSystem", "Segment"]


@dataclass(frozen=True)
class Ends:
    """The bracket to prove: its ends (decimal strings), the digits aimed at, a note (why fewer digits than asked,
    or how the ends were found when not by integration)."""

    lower: str
    upper: str
    digits: int
    note: str = ""


@dataclass
class Segment:
    """One call of the validated integrator: its flowpipe ``fp``, the state at its end, the lemma that holds there
    (None when none does), whether the run may go on with another segment, and the frame it ran in (for the
    certificate; None when the system has none)."""

    fp: object
    state: object
    lemma: str | None
    more: bool
    frame: object = None


class FateSystem:
    """The protocol (see the module docstring). Subclasses set the class attributes and implement the methods
    that raise :class:`NotImplementedError`."""

    #: the depth L of the flow
    depth: int
    #: the certificate format this system writes
    FORMAT: str
    #: the lemmas a bracket of this system rests on (names in the pack's :class:`theorycheck.proved.lemmas.LemmaBook`)
    LEMMAS: tuple
    #: the lemmas a run may end in, by fate (what :meth:`fate_test` returns)
    LEMMA_NAMES: dict
    #: what a certificate of this system states
    STATEMENT: str
    #: whether a wall-clock deadline may end a run (False: only step and evaluation budgets end it)
    TIMED = True
    #: whether a recorded run takes at least one step when the fate test holds at the start (a certificate of
    #: such a run then has a step whose start set the checker checks)
    STEP_WHEN_RECORDED = False

    # ------------------------------------------------------------------ what each system implements
    @classmethod
    def working_digits(cls, digits: int) -> int:
        """The working accuracy the system is built at for a bracket of ``digits`` digits (a one-line error when
        ``digits`` is outside what the system proves)."""
        raise NotImplementedError

    def start(self, alpha_text: str):
        """The first state of α's path (an exact decimal string, read exactly), at the current precision."""
        raise NotImplementedError

    def fate_test(self, state) -> str | None:
        """The name of a lemma (:attr:`LEMMA_NAMES`) that holds for every point of ``state``, or None."""
        raise NotImplementedError

    def segment(self, state, *, deadline: float | None, record: bool) -> Segment:
        """One call of the validated integrator from ``state``, stopping when :meth:`fate_test` holds."""
        raise NotImplementedError

    def clock(self, state) -> list:
        """The time of ``state`` in the problem's own clock, as a ball [mid, rad] of decimal strings."""
        raise NotImplementedError

    def ends(self, digits: int, *, deadline: float, guess=None) -> Ends:
        """The bracket of ``digits`` digits to prove (``guess``: a starting α when the system uses one)."""
        raise NotImplementedError

    @property
    def method(self) -> str:
        raise NotImplementedError

    def statement(self) -> str:
        """What a certificate of this system states."""
        return self.STATEMENT

    def certificate_system(self) -> tuple:
        """(name, states, params, fields, extra keys) of the system a certificate names."""
        raise NotImplementedError

    def run_data(self, proof: FateProof) -> dict:
        """The certificate's record of one run made with ``record=True``."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the one loop
    def run(self, alpha_text: str, *, deadline: float | None = None, record: bool = False) -> FateProof:
        """Enclose α's path until the fate test holds for every point of the enclosure, a budget runs out, or
        the integration stops (``record``: keep every step, for a certificate)."""
        from theorycheck.arith.balls import arb_context

        t0 = time.perf_counter()
        steps = segments = 0
        pipes: list = []

        def undecided(why: str) -> FateProof:
            return FateProof(alpha_text, None, None, None, steps, segments, time.perf_counter() - t0, why,
                             pipes=pipes)

        with arb_context(prec=self.prec):
            state = self.start(alpha_text)
            lemma = self.fate_test(state)
            while lemma is None or (record and self.STEP_WHEN_RECORDED and segments == 0):
                if deadline is not None and time.perf_counter() > deadline:
                    return undecided("time budget ran out")
                seg = self.segment(state, deadline=deadline, record=record)
                segments += 1
                steps += seg.fp.n_steps
                if record:
                    pipes.append((seg.frame, seg.fp))
                if seg.lemma is None and not seg.more:
                    return undecided(f"integration stopped: {seg.fp.status} ({seg.fp.message})")
                state, lemma = seg.state, seg.lemma
            fate = "collapse" if lemma in self.LEMMA_NAMES["collapse"] else "growth"
            return FateProof(alpha_text, fate, lemma, self.clock(state), steps, segments, time.perf_counter() - t0,
                             pipes=pipes)
