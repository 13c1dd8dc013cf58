"""Pack ``sam-regression``: Andriushchenko & Flammarion, "Towards Understanding Sharpness-Aware
Minimization" (ICML 2022): the implicit bias of n-SAM and 1-SAM on two-layer diagonal linear networks
for sparse regression. THEORY.md beside this file.

Theorems (``prove``): SR1 the exact effective-scale identity along the SAM path, SR2 the mirror variable
in the row space (the limit is argmin φ with the scale read off the final state), SR3 the linearised
flow at the origin. Claims (``verify``): SR.identity, SR.gd, SR.sam-limit, SR.shrink, SR.one-vs-n,
SR.sparser, SR.generalises, SR.interpolates (found by the tool). ``predict`` is what ``theorycheck
predict --pack sam-regression`` prints.
"""

from __future__ import annotations

from theorycheck.packs import Pack

PACK = Pack(
    name="sam-regression",
    title="Towards Understanding Sharpness-Aware Minimization (diagonal linear networks, sparse regression)",
    reference="Andriushchenko & Flammarion, ICML 2022 (arXiv:2206.06232)",
    proofs=__name__,
    numerics="theorycheck.numerics.sam_regression",
    theory=f"{__name__}:THEORY.md",
    predict=f"{__name__}.predictions:predict",
)
