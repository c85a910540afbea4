"""The windows: the shell every view shares, the main, compare, Poinsot and stability windows, and their parts
(actions, status, the exact ghost, the hosted view)."""
