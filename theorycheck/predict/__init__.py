"""Stage "predict": what a theory says for an input (closed-form thresholds, predicted indices and
limits, the α_c search and its certificate, depth-L and dataset thresholds)."""
