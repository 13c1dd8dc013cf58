"""Pack ``lp-margin``: depth-L diagonal networks trained by gradient descent (flow) on separable
data with the exponential or logistic loss converge in direction to a KKT point of
min ‖β‖_{2/L} s.t. y_i⟨x_i, β⟩ ≥ 1 (Gunasekar, Lee, Soudry, Srebro, NeurIPS 2018; Lyu & Li,
ICLR 2020). THEORY.md beside this file.

Theorems: LM1 (a positive balanced start stays positive and balanced), LM2 (KKT in the
layers ⇔ KKT of the ℓ_{2/L} problem on the support). Claims: LM.kkt (as the issue states it,
refined to LM.kkt.orthant) and LM.l1 (L = 2: the ℓ1 max margin over the reachable orthant).
"""

from __future__ import annotations

from theorycheck.packs import Pack

PACK = Pack(
    name="lp-margin",
    title="Implicit Bias of Gradient Descent on Linear Convolutional Networks (diagonal case)",
    reference="Gunasekar, Lee, Soudry, Srebro, NeurIPS 2018; Lyu & Li, ICLR 2020",
    proofs=__name__,
    numerics="theorycheck.numerics.lp_margin",
    theory=f"{__name__}:THEORY.md",
    predict=f"{__name__}.predictions:predict",
)

