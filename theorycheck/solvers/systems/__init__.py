"""What to solve: the GD / SAM flows as hybrid systems, each in the coordinates that suit
it, with the events that end a smooth segment.

- :class:`BalancedL2System` — ℓ2-SAM, one example, balanced, u > 0: θ = ln u, N carried
  as ln N (THEORY.md, Rescaled flows; C4/C5). Events: collapse (N → 0), blow-up (L ≥ 3).
- :class:`BranchSystem` — GD and ℓ∞-SAM, one example, balanced, L ≥ 2: per coordinate
  the sign in ε is locked to a branch σ, on which û_j = u_j − ρσ moves like GD, and the
  state is v_j = ln|û_j| (C2: v is linear in τ for L = 2). Events: u_j = 0 (Filippov:
  cross or slide, then the coordinate is frozen at 0), blow-up (C3).
- :class:`LayersSystem` — everything else: unbalanced layers, L = 1, several examples in
  real time; linear coordinates W (L×d; d when the layers are tied). ℓ∞ switching
  surfaces (a weight or ∂Lo/∂β_j crossing 0) are handled with Filippov's convention.

A theory's reduction of the flow to a smaller system (the first paper's C4 scalar ODE) is its pack's, handed in
through :mod:`theorycheck.solvers.reduction`.

All numbers go through a backend (float64 or mpmath) and every formula through
:mod:`theorycheck.symbolic.forms`. ``observe(t, y)`` maps a state to (ln|β|, sign β) as floats.
"""

from theorycheck.solvers.systems.balanced_l2 import BalancedL2System
from theorycheck.solvers.systems.base import (
    Backend,
    EventAction,
    EventFn,
    FlowSystem,
    Thresholds,
    extrapolate_singularity,
)
from theorycheck.solvers.systems.branch import BranchSystem
from theorycheck.solvers.systems.layers import LayersSystem

__all__ = ["Backend", "BalancedL2System", "BranchSystem", "EventAction", "EventFn", "FlowSystem", "LayersSystem",
           "Thresholds", "extrapolate_singularity"]
