"""A theory's reduction of a flow: the hook through which a pack hands the engine a smaller system that a theorem
of its paper proves equivalent to the flow (the first paper's C4: ℓ2-SAM at L = 2 from one example and a uniform α
reduces to one scalar ODE, ``proofs/minor_first/reduced``).

The engine never builds one itself: :func:`theorycheck.solvers.integrate.solve` (``method="reduced"``) and the
sweeps (:func:`theorycheck.sweep.heatmap`, ``method="auto"`` or ``"reduced"``) take ``reductions``, a sequence of
objects of the :class:`Reduction` protocol, and use the first that applies; the API passes the installed packs'
(:func:`theorycheck.packs.reductions`). A reduction is picklable (a sweep's chunks carry it to other processes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from theorycheck.errors import TheorycheckError

__all__ = ["Reduction", "for_batch", "for_flow"]


@runtime_checkable
class Reduction(Protocol):
    """What a pack's reduction offers. ``refusal``: the sentence that says
    what it needs, for the error when it is asked for and does not apply; ``kernel``: a compiled integrator of its
    batch system (an object with ``available()``, ``thread_limit(n)``, ``integrate(system, grid, *, rtol, atol,
    max_steps, progress, notice)`` and ``covers(options)``), or None."""

    refusal: str
    kernel: Any

    def applies_to_batch(self, optimizer: str, depth: int, uniform: bool) -> bool:
        """Whether a one-example batch of ``optimizer`` at ``depth`` (uniform α or not) reduces."""

    def batch_system(self, data, alpha, rho, *, ops, **options):
        """The batch system (:class:`theorycheck.batched.systems.BatchSystem`) of the reduced flow."""

    def flow_system(self, setting, bk, thr, *, rescaled: bool, u0):
        """The flow system (:class:`theorycheck.solvers.systems.FlowSystem`) of the reduced flow for ``setting``
        (``u0`` the tied first layer, or None); a :class:`~theorycheck.errors.TheorycheckError` that says what is
        missing when the setting does not reduce."""


def for_batch(reductions: Sequence | None, optimizer: str, depth: int, uniform: bool, *, forced: bool):
    """The first of ``reductions`` that applies to a one-example batch, or None. ``forced`` (``method="reduced"``):
    none applying is an error, with the first reduction's refusal (or, when none is given, where one comes from)."""
    reductions = tuple(reductions or ())
    for r in reductions:
        if r.applies_to_batch(optimizer, depth, uniform):
            return r
    if forced:
        raise TheorycheckError(reductions[0].refusal if reductions else _NONE)
    return None


def for_flow(reductions: Sequence | None, setting, bk, thr, *, rescaled: bool, u0):
    """The flow system of the first of ``reductions`` that reduces ``setting`` (``method="reduced"``: one must)."""
    reductions = tuple(reductions or ())
    first = None
    for r in reductions:
        try:
            return r.flow_system(setting, bk, thr, rescaled=rescaled, u0=u0)
        except TheorycheckError as exc:  # this one does not reduce the setting: the next may
            first = first or exc
    raise first if first is not None else TheorycheckError(_NONE)


_NONE = ("method 'reduced' needs a theory's reduction, and none was given: pass reductions= (the installed packs' "
         "are theorycheck.packs.reductions(); the API passes them itself)")
