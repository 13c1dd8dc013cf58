"""The packs: one subpackage per paper (installed as ``theorycheck.proofs``), each of one shape — its
THEORY text (``THEORY.md``), its manifest ``PACK`` with ``theorems()`` and ``claims()`` (``__init__.py``),
``theorems.py``, ``claims.py`` and ``predictions.py``; its experiments are ``numerics/<pack>/``."""
