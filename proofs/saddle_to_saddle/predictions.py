"""What the pack ``saddle-to-saddle`` predicts for one input (``theorycheck predict --pack saddle-to-saddle``):
the α → 0 jump process, exactly (the JSON of ``theorycheck saddles``, docs/commands/saddles.md)."""

from __future__ import annotations


def predict(X, y, *, max_jumps: int = 1000, **_ignored) -> dict:
    """The saddles and jump times of the limit α → 0 (THEORY.md), exact on the numbers given (a float is its
    binary value): ``jumps``, ``final``, ``non_unique``, ``status``, ``kkt``, ``strength``."""
    from theorycheck.proofs.saddle_to_saddle.algorithm import jump_process

    from theorycheck.strength import not_decided, proved

    rows = [list(r) for r in (X.tolist() if hasattr(X, "tolist") else X)]
    ys = list(y.tolist() if hasattr(y, "tolist") else y)
    p = jump_process(rows, ys, max_jumps=int(max_jumps))
    ok = p.status == "stopped at a zero gradient" and p.kkt
    return {**p.as_dict(), "strength": (proved() if ok else not_decided(p.status)).as_dict()}
