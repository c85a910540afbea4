"""Rigid-body physics core: bodies, loads, integrators, exact solutions, diagnostics.

Conventions, used everywhere in this package and nowhere contradicted:

* Quaternions are scalar-first ``(w, x, y, z)`` and rotate the BODY frame into the
  WORLD frame: a body-frame vector ``b`` is ``R(q) @ b`` in the world.
* Angular velocity ``omega`` is expressed in the BODY frame.
* Position ``c`` and velocity ``v`` of the centre of mass are in the WORLD frame.
* Angular momentum ``L = R(q) I omega`` is in the WORLD frame, about the centre of mass.
* ``T = 1/2 m |v|^2 + 1/2 omega . I omega``, ``V = -m g . c``, ``E = T + V``.

Arrays may carry any number of leading batch axes; the last axis is the vector.
This package imports only numpy, scipy and (for the hot kernels) numba.
"""
