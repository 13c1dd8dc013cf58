"""What the batched engine integrates: many members of one flow (an α-grid, an (α, ρ)-grid,
seeds) as one vectorised system (all fields compiled from the symbolic layer).

- :class:`BalancedLog` — one example, balanced, θ = ln u: GD and ℓ∞-SAM (any L ≥ 2),
  ℓ2-SAM (L = 2), per-coordinate α. ℓ∞ sliding at u_j = 0 (the coordinate is frozen at 0:
  Filippov) and α_j = ρ exactly (an equilibrium, frozen) are handled explicitly.
- :class:`MultiExample` — several examples, real time t, balanced, θ = ln u.
- :class:`PixelFlow` — an L-layer diagonal network on pixel data at full size (the doubled input (x, −x)),
  real or rescaled time, the products with the data dense or sparse.

Units: a one-example system integrates the data ẑ = z/2^k, 2^k ≤ max|z_j| < 2^(k+1), in the time
τ̂ = 2^k τ (C4's reduction also in Î = 2^(2k) I; θ = ln u is unchanged): the one-example flows are
exactly invariant under z → cz, τ → τ/c (I → I/c²), and powers of two are exact in floating point.
So nothing in a field over- or underflows at |z| ~ 1e±300 (ln z_j², 2ρ z_j² I did), the absolute
tolerance means the same at every scale, and the engine maps every time, I and ln N back
(:meth:`BatchSystem.to_physical`). ``data_log2_scale`` (k) is in the metadata.

Clocks: a member integrates in its own clock s, with the physical time τ (or t) as the
first state component, ``dτ/ds = κ``. κ = 1 far from singularities and → 0 near one
(ℓ2 collapse N → 0, an ℓ∞ coordinate reaching u_j = 0, an L ≥ 3 blow-up), so that the
log-coordinate fields, whose rates diverge there, become bounded in s and every member
reaches its event in a bounded number of steps.
"""

from __future__ import annotations

from theorycheck.batched.systems.balanced import BalancedLog
from theorycheck.batched.systems.base import (
    EVENT_LOG,
    BatchSystem,
    _ClockedTheta,
    _leader,
    _top_gap,
    log2_unit,
    log_square_summand,
    product_optimizers,
)
from theorycheck.batched.systems.multi import MultiExample
from theorycheck.batched.systems.pixel_flow import PixelFlow

__all__ = ["EVENT_LOG", "BatchSystem", "BalancedLog", "MultiExample", "PixelFlow", "log2_unit", "log_square_summand",
           "product_optimizers", "_ClockedTheta", "_leader", "_top_gap"]
