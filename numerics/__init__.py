"""The packs' experiments, one subpackage per pack (installed as ``theorycheck.numerics``).

Each experiment module follows the one protocol of :mod:`theorycheck.experiments`
(``NAME``, ``TITLE``, ``compute``, ``draw``, ``summarize``); a pack's subpackage lists them in
``experiments()`` (name → module), which its manifest names."""
