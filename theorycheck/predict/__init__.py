"""predict: what a theory says for an input (closed-form thresholds, α_c search, its certificate and proof)."""
