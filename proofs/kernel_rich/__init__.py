"""Pack ``kernel-rich``: Woodworth, Gunasekar, Lee, Moroshko, Savarese, Golan, Soudry, Srebro,
"Kernel and Rich Regimes in Overparametrized Models" (COLT 2020). THEORY.md beside this file.

Theorems (``prove``): KR1 the solved flow, KR2 the mirror-descent invariant, KR3 the
potential, KR4 its α → ∞ and α → 0 limits. Claims (``verify``): KR.limit (flow = argmin Q_α),
KR.l1 (α → 0: min-ℓ1, refined to KR.l1.norm), KR.l2 (α → ∞: min-ℓ2). ``predict`` is what
``theorycheck predict --pack kernel-rich`` prints.
"""

from __future__ import annotations

from theorycheck.packs import Pack

PACK = Pack(
    name="kernel-rich",
    title="Kernel and Rich Regimes in Overparametrized Models",
    reference="Woodworth, Gunasekar, Lee, Moroshko, Savarese, Golan, Soudry, Srebro, COLT 2020",
    proofs=__name__,
    numerics="theorycheck.numerics.kernel_rich",
    theory=f"{__name__}:THEORY.md",
    predict=f"{__name__}.predictions:predict",
)

