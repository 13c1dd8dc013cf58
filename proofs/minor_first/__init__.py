"""Pack ``minor-first``: Moon, Si, Yun, "Minor First, Major Last: A Depth-Induced Implicit Bias of
Sharpness-Aware Minimization" (arXiv 2603.08290). THEORY.md beside this file.

Theorems (``prove``): one module per statement of THEORY.md (``rescaled``, ``c1`` … ``c6``, the
persisting lemmas P and the lock-in lemma LOCK), listed in :mod:`.theorems`. Claims (``verify``):
C1–C6, E1, E2 with their refinements, listed in :mod:`.claims`; each claim lives beside its
derivation. ``predict`` (:mod:`.predictions`) is what ``theorycheck predict --pack minor-first``
prints.
"""

from __future__ import annotations

from theorycheck.packs import Pack

PACK = Pack(
    name="minor-first",
    title="Minor First, Major Last: A Depth-Induced Implicit Bias of Sharpness-Aware Minimization",
    reference="Moon, Si, Yun, arXiv 2603.08290",
    proofs=__name__,
    numerics="theorycheck.numerics.minor_first",
    theory=f"{__name__}:THEORY.md",
    predict=f"{__name__}.predictions:predict",
    reductions=f"{__name__}.reduced:REDUCTIONS",
)

