"""Observables of a :class:`~theorycheck.trajectory.Trajectory`, in three modules:

- :mod:`~theorycheck.observe.index`: the direction β/‖β‖ and the dominant index j†(t) = argmax_j |β_j(t)|
  (one rule, :func:`next_index`, applied along the run by :func:`index_chain`), its switches located by
  root finding on the dense output;
- :mod:`~theorycheck.observe.lockin`: how strong the final index is (a lock-in condition at the last state);
- :mod:`~theorycheck.observe.summary`: margins, loss, the summary and the report a run prints.
"""

from __future__ import annotations

from theorycheck.observe.index import (
    TIE_RTOL,
    IndexChain,
    Switch,
    direction,
    direction_at_norm,
    dominant_index,
    final_index,
    index_chain,
    index_path,
    initial_index,
    log_norm,
    next_index,
    switches,
)
from theorycheck.observe.lockin import (
    FINAL_FLOAT_CHECK,
    FINAL_NOT_DECIDED,
    FINAL_PROVED,
    final_index_status,
    lockin_condition,
)
from theorycheck.observe.summary import attach, exact_texts, final_direction, margins_and_loss, report, summary

__all__ = ["Switch", "IndexChain", "TIE_RTOL", "direction", "dominant_index", "next_index", "index_chain",
           "index_path", "switches", "margins_and_loss", "final_direction", "final_index", "initial_index", "summary",
           "log_norm", "direction_at_norm", "final_index_status", "FINAL_PROVED",
           "FINAL_FLOAT_CHECK", "FINAL_NOT_DECIDED", "lockin_condition", "report", "attach", "exact_texts"]
