"""The colour scheme of the open windows: chosen at start (the command line's ``--colours``, else
the remembered choice), switched live (View > Projector colours, P in presentation mode), remembered.

:func:`switch_scheme` re-colours everything open in place: the Qt palette and style sheets, each
3D view's actors (:func:`app.scene.recolour.recolour_plotter`), each pyqtgraph plot
(:func:`app.gui.common.plot_recolour.recolour_graphics`) and the rich text of labels (the colour keys).
The runs go on untouched. GUI thread only.
"""

from __future__ import annotations

from PyQt5.QtWidgets import QApplication, QLabel, QWidget

from ...scene import palette
from . import settings as keys


def remembered_scheme() -> str:
    """The scheme stored in the settings; the default (with a note for the status bar) if it is
    not a scheme's name."""
    stored = keys.open_settings()
    value = stored.value(keys.COLOURS, palette.DEFAULT_SCHEME, type=str)
    try:
        return palette.check_scheme(value)
    except ValueError:
        stored.note(keys.COLOURS, f"= {value!r} must be one of {', '.join(palette.SCHEME_NAMES)}; "
                                  f"using {palette.DEFAULT_SCHEME}")
        return palette.DEFAULT_SCHEME


def startup_scheme() -> str:
    """The scheme a new application starts in: the one chosen in this process (``--colours``), else
    the remembered one (made the one in use). Returns its name."""
    if not palette.chosen():
        palette.use(remembered_scheme())
    return palette.current().name


def remember_scheme(name: str) -> None:
    """Store ``name`` as the scheme of the next start."""
    keys.open_settings().setValue(keys.COLOURS, palette.check_scheme(name))


def recolour_widget(widget: QWidget, source: palette.Palette, target: palette.Palette) -> None:
    """Re-colour ``widget`` and its children from ``source``'s scheme to ``target``'s, in place."""
    from pyqtgraph import GraphicsView
    from pyvistaqt import QtInteractor

    from ...scene.recolour import recolour_plotter
    from .plot_recolour import recolour_graphics

    for child in [widget, *widget.findChildren(QWidget)]:
        sheet = child.styleSheet()
        if sheet:
            new = palette.translate_text(sheet, source, target)
            if new != sheet:
                child.setStyleSheet(new)
        if isinstance(child, QLabel) and "#" in child.text():
            text = palette.translate_text(child.text(), source, target)
            if text != child.text():
                child.setText(text)
        if isinstance(child, QtInteractor):
            recolour_plotter(child, source, target)
            child.render()
        elif isinstance(child, GraphicsView):
            recolour_graphics(child, source, target)
    hook = getattr(widget, "colours_changed", None)
    if callable(hook):
        hook(target)


def switch_scheme(name: str, remember: bool = True) -> bool:
    """Make ``name`` the scheme of every open window, in place; store it for the next start when
    ``remember``. Returns False when it was already in use (nothing to do)."""
    from .theme import apply_theme

    name = palette.check_scheme(name)
    source = palette.current()
    if source.name == name:
        return False
    palette.use(name)
    target = palette.current()
    app = QApplication.instance()
    if app is not None:
        apply_theme(app)
        for window in app.topLevelWidgets():
            recolour_widget(window, source, target)
    if remember:
        remember_scheme(name)
    return True
