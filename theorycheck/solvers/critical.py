"""ℓ2-SAM's critical-point rule, one definition for the single-trajectory solver
(:class:`~theorycheck.solvers.systems.layers.LayersSystem`) and the batched engine
(:class:`~theorycheck.batched.systems.MultiExample`).

ε = ρ∇Lo/‖∇Lo‖ is undefined at a critical point of Lo, and the flow chatters there: no
integrator follows it further at a sane cost. A run is at a critical point once
``rel`` = ln(‖∇Lo(w)‖/‖dw/dt‖) and ``relg`` = ln(‖∇Lo(w)‖/Lo(w)) have both fallen by
:data:`SINGULAR_LOG` from their values at the start while ``ln‖w‖`` stayed above
:data:`AWAY_LOG` of its start. The first ratio alone also → −∞ on separable data (Lo → 0,
and w + ε has the smaller margins), where the relative gradient stays bounded below.
"""

from __future__ import annotations

import math

__all__ = ["AWAY_LOG", "SINGULAR_LOG", "away_from_zero", "below", "excess", "levels"]

#: ln of the factor by which both ratios must fall
SINGULAR_LOG = math.log(1e-4)
#: ln of the fraction of ‖w(0)‖ that ‖w‖ must keep (below it the run is on its way to a collapse)
AWAY_LOG = math.log(1e-2)


def levels(rel0, relg0):
    """The levels the two ratios must fall below, from their values at the start."""
    return rel0 + SINGULAR_LOG, relg0 + SINGULAR_LOG


def excess(rel: float, relg: float, level_rel: float, level_relg: float) -> float:
    """< 0 exactly when both ratios are below their levels (:func:`below`): the value of the
    single-trajectory solver's event function."""
    return max(rel - level_rel, relg - level_relg)


def below(rel, relg, level_rel, level_relg):
    """Both ratios below their levels, member by member (arrays of the batched engine; the
    same test as ``excess(...) < 0``: for floats a − b < 0 exactly when a < b)."""
    return (rel < level_rel) & (relg < level_relg)


def away_from_zero(ln_norm, ln_norm0):
    """‖w‖ kept more than :data:`AWAY_LOG` of its start (else: a collapse, not a critical point)."""
    return ln_norm - ln_norm0 > AWAY_LOG
