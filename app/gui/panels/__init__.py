"""The panels beside the scene: the parameter panel with its fields and editors, and the theory panel.
Widgets that edit or explain a scenario; no window here."""
