"""The first paper's proved quantities in ball arithmetic, on the engine's validated integrator
(:mod:`theorycheck.proved.validated`) and proved-fate protocol (:mod:`theorycheck.proved.fate_system`): α_c at
L = 2 (C4's reduced ODE, :mod:`.reduced_l2`) and at even L ≥ 4 (:mod:`.ratio_blowup`), both behind
:mod:`.alpha_c`; their certificates' independent checkers (:mod:`.checker`); the proved regime maps in α
(:mod:`.regime_map`) and proved trajectories (:mod:`.trajectory`)."""
