"""The tiny pack: what theorycheck finds through the entry point ``theorycheck.packs``."""

from theorycheck.packs import Pack

PACK = Pack(
    name="tiny",
    title="Gradient flow on the signed depth-2 model interpolates",
    reference="theorycheck tutorial (docs/writing-a-pack.md)",
    proofs="tiny_pack.theory",  # defines theorems() and claims()
    theory="tiny_pack:THEORY.md",
)
