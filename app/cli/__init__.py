"""The command line: the parser and ``main`` (core), and one module per group of commands (export, live, throws).
Each reads its flags strictly, calls the API and turns its errors into one line and an exit status."""

from .core import main  # noqa: F401  (the ``tumble`` command: tumble.cli:main)
