"""The views: one module per view, its runs, scenes, plots and overlays, without Qt."""
