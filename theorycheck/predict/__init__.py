"""What a theory says for an input: thresholds, predicted indices and limits, regimes."""
