"""E2 of the first paper on real data: diagonal linear networks on image pixels (:mod:`.linear_images`, over
class pairs :mod:`.linear_pairs`, figures :mod:`.linear_figures`: what ``theorycheck linear-images`` runs) and
small CNNs trained by GD and SAM from the same start, compared by Grad-CAM (:mod:`.cnn`, figures
:mod:`.cnn_figures`: what ``theorycheck cnn`` runs), on the engine's pixel flows, torch SAM step and Grad-CAM."""
