"""Stage "proved": the engine's validated computations in ball arithmetic — the integrator (:mod:`.validated`),
the proved-fate protocol a pack's system plugs into (:mod:`.fate_system`), brackets and box statements
(:mod:`.bracket`, :mod:`.boxes`), the balanced flow with an interval α (:mod:`.path`), certificates read, written
and re-checked step by step (:mod:`.check`, :mod:`.certificate`, :mod:`.tape`). A pack's proved quantities (the
first paper's α_c, regime maps and trajectories) live in the pack. Every answer here is about exact inputs and
says what it rests on."""
