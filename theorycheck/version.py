"""The version of theorycheck (stage 0: a word, no numerics)."""

__version__ = "0.1.0"
