"""Stage "proved": validated computations in ball arithmetic — the integrator (:mod:`.validated`), the proved
α_c brackets, regime maps, paths and trajectories, box statements, certificates and their independent checkers,
outward decimal output. Every answer here is about exact inputs and says what it rests on."""
