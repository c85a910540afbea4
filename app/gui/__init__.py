"""The desktop app: Qt windows, the parameter panel, plots, and the bridge from the
simulation worker to the widgets. Entry points: :func:`app.gui.launch.run_gui` and
:func:`app.gui.bench.run_gui_bench` (this package imports nothing heavy on its own)."""
