"""The compiled-kernel machinery: numba kernels of the run loops, the runs over them, saved machine code.
Imports nothing else of physics; the integrators and the simulation call into it."""
