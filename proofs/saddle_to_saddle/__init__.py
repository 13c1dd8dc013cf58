"""Pack ``saddle-to-saddle``: the α → 0 limit of gradient flow on a two-layer diagonal linear network
(β = w₊² − w₋², w±(0) = α·1, square loss) is a jump process from saddle to saddle, computed exactly by
Algorithm 1 of Pesme & Flammarion (NeurIPS 2023). THEORY.md beside this file.

Theorems: SS1 (the flow in log coordinates, the threshold |s_i| = 1), SS2 (each saddle's KKT conditions),
SS3 (the loss never increases across saddles), SS4 (the final saddle's ℓ1 certificate). Claims: claims.py
(the algorithm's) and flow_claims.py (the flows at tiny α against the algorithm).
"""

from __future__ import annotations

import importlib.util

from theorycheck.packs import Pack

#: the flows' experiments (numerics/saddle_to_saddle/), named once they are there
_NUMERICS = "theorycheck.numerics.saddle_to_saddle"

PACK = Pack(
    name="saddle-to-saddle",
    title="Saddle-to-Saddle Dynamics in Diagonal Linear Networks",
    reference="Pesme & Flammarion, NeurIPS 2023 (arXiv 2304.00488)",
    proofs=__name__,
    numerics=_NUMERICS if importlib.util.find_spec(_NUMERICS) is not None else None,
    theory=f"{__name__}:THEORY.md",
    predict=f"{__name__}.predictions:predict",
)
