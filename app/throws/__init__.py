"""Gyroscope recordings of real throws: read them, find the free flights, fit the body's inertia ratios and drag.

No Qt here: the command line (``tumble fit``) and the window's import dialog share it.
"""
