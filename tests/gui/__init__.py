"""The GUI tests: real windows under Xvfb (a package, so that its conftest is ``gui.conftest`` and
``tests/conftest.py`` alone is importable as ``conftest``)."""
