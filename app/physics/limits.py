"""Limits the physics holds every run to, in a module light enough for the command line's parser
and the scenario's checks to import without starting numba (the compiled kernels import them)."""

#: |omega| (rad/s) past which a run counts as diverged
OMEGA_LIMIT = 1e6
