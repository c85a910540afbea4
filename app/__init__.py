"""Tumble: see and measure the free rotation of a rigid body."""

__version__ = "0.1.0"
