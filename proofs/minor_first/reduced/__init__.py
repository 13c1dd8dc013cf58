"""C4's reduction of the ℓ2-SAM flow (THEORY.md, C4): at L = 2, from one example and a uniform α, the balanced
flow closes on one scalar, dI/dτ = 1/N(τ, I), with θ_j(τ) = ln α + z_j τ − ρ z_j² I(τ). The engine takes it as a
reduction (:class:`theorycheck.solvers.reduction.Reduction`): :data:`REDUCTION`, listed in the pack's manifest and
passed by the API to ``solve(method="reduced")`` and to the sweeps, which integrate it for every
``method="auto"`` heatmap it applies to.

- :mod:`.flow`: the scalar system for one trajectory (float64 or mpmath; its clock s near a collapse);
- :mod:`.batch`: a whole (α, ρ) grid as a vector of scalar ODEs (the batched engine), with C5's collapse and
  no-collapse certificates;
- :mod:`.kernel`: the same batch compiled member by member (numba, optional).
"""

from __future__ import annotations

import numpy as np

from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import get as get_optimizer

__all__ = ["REDUCTION", "C4Reduction"]


class _Kernel:
    """The compiled integrator of the batch (:mod:`.kernel`), imported when first asked for."""

    @staticmethod
    def _module():
        from theorycheck.proofs.minor_first.reduced import kernel

        return kernel

    def available(self) -> bool:
        return self._module().available()

    def thread_limit(self, n):
        return self._module().thread_limit(n)

    def covers(self, options: dict) -> bool:
        """The kernel observes j† by C4's switch levels only."""
        return options.get("observe", "levels") == "levels"

    def integrate(self, system, grid, **kw):
        return self._module().integrate_reduced(system, grid, **kw)


class C4Reduction:
    """C4's reduction as the engine's :class:`~theorycheck.solvers.reduction.Reduction`."""

    refusal = "the reduced ODE of C4 needs ℓ2-SAM, L = 2, one example and a uniform α"
    kernel = _Kernel()

    def __reduce__(self):  # one object: a pickled reduction (a sweep's chunk) is this module's REDUCTION
        return (_the_reduction, ())

    def applies_to_batch(self, optimizer: str, depth: int, uniform: bool) -> bool:
        return bool(get_optimizer(optimizer).normalised) and depth == 2 and uniform

    def batch_system(self, data, alpha, rho, *, ops, **options):
        from theorycheck.proofs.minor_first.reduced.batch import ReducedL2

        return ReducedL2(data, alpha, rho, ops=ops, **options)

    def flow_system(self, setting, bk, thr, *, rescaled: bool, u0):
        from theorycheck.proofs.minor_first.reduced.flow import ReducedL2System

        opt = get_optimizer(setting.optimizer)
        if not (rescaled and opt.normalised and not opt.weighted and setting.depth == 2 and u0 is not None
                and np.all(u0 == u0[0]) and u0[0] > 0):
            raise TheorycheckError("the reduced ODE of C4 needs ℓ2-SAM, L = 2, one example and a uniform α > 0 "
                                   f"(got {opt}, L = {setting.depth}, n = {setting.n}, alpha {setting.init.kind})")
        return ReducedL2System(bk, setting.z, float(u0[0]), setting.rho, thr)

    def __repr__(self) -> str:
        return "C4Reduction()"


def _the_reduction() -> C4Reduction:
    return REDUCTION


#: the pack's one reduction (the manifest's ``reductions``)
REDUCTION = C4Reduction()
#: what the manifest lists
REDUCTIONS = (REDUCTION,)
