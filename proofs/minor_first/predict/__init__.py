"""What the first paper says for an input, in floating point: the closed-form thresholds and the α_c search
(:mod:`.thresholds`, :mod:`.collapse`), predicted indices, limits and regimes (:mod:`.regimes`), the depth-L
thresholds (:mod:`.depth`, :mod:`.blowup`), the thresholds of a dataset and of images (:mod:`.dataset`,
:mod:`.pixels`), and grids of them on the batched engine (:mod:`.grids`)."""
