"""External physics engines audited against Tumble's exact solution: one adapter module per engine
(``*_adapter.py``, found by :mod:`.registry`), the scoring, and the check of other engines' trajectory files."""
