"""Member status codes of the batched engine (the ``status`` arrays of results hold them)."""

RUNNING, DONE, COLLAPSE, BLOWUP, SAFE, MAX_STEPS, STEP_UNDERFLOW, NONFINITE, SIGN_CHANGE = range(9)
#: member status code -> name (the ``status`` arrays of results hold the codes)
STATUS: dict[int, str] = {
    RUNNING: "running",
    DONE: "done",  # reached the end of the grid
    COLLAPSE: "collapse",  # β → 0 (ℓ2: N → 0; ℓ∞: every coordinate slid to 0)
    BLOWUP: "blowup",  # L ≥ 3: a coordinate blew up in finite rescaled time
    SAFE: "no-collapse",  # classification runs: the no-collapse certificate holds
    MAX_STEPS: "max_steps",  # the step budget ran out
    STEP_UNDERFLOW: "step_underflow",  # the step size fell below the float resolution
    NONFINITE: "nonfinite",  # the field returned inf/NaN where the step could not be shrunk
    SIGN_CHANGE: "sign_change",  # discrete runs: a step would take some u_j through 0 (overshoot)
}
#: statuses that end a member without a budget running out
FINISHED_OK = (DONE, COLLAPSE, BLOWUP, SAFE)
