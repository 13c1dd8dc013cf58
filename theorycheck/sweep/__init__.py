"""Sweeps: execution (:mod:`.run`), results (:mod:`.result`), grids (:mod:`.grid`) and
recipes (:mod:`.recipes`). The names below are the package's public surface."""

from theorycheck.sweep.grid import time_grid, visits
from theorycheck.sweep.recipes import AlphaBoundaries, depth_sweep, heatmap, seed_sweep
from theorycheck.sweep.result import SweepResult, versions
from theorycheck.sweep.run import (
                                   ARRAY_BACKENDS,
                                   BACKENDS,
                                   METHODS,
                                   RunOptions,
                                   SystemSpec,
                                   resolve_array_backend,
                                   run_spec,
                                   run_tasks,
)

__all__ = ["ARRAY_BACKENDS", "AlphaBoundaries", "BACKENDS", "METHODS", "RunOptions", "SweepResult", "SystemSpec",
           "depth_sweep", "heatmap", "resolve_array_backend", "run_spec", "run_tasks",
           "seed_sweep", "time_grid", "versions", "visits"]
