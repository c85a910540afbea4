"""The Qt widgets' and pyqtgraph's theme, from the colour scheme in use (:mod:`app.scene.palette`).

:func:`apply_theme` sets the application's palette and style sheet; called again after
:func:`app.scene.palette.use`, it re-colours every open widget in place.
"""

from __future__ import annotations

from PyQt5.QtGui import QColor, QFont, QPalette
from PyQt5.QtWidgets import QApplication

from ...scene.palette import DARK, Role, current

#: the dark scheme's colours of these roles, formatting as the scheme in use (``f"color: {MUTED_TEXT}"``)
WINDOW = Role(DARK.window)
BASE = Role(DARK.base)
BUTTON = Role(DARK.button)
HIGHLIGHT = Role(DARK.highlight)
MUTED_TEXT = Role(DARK.muted_text)
ERROR_TEXT = Role(DARK.error_text)
OK_TEXT = Role(DARK.ok_text)
#: point size of the UI font
FONT_POINTS = 9



def style_sheet() -> str:
    """The application's style sheet in the scheme in use."""
    p = current()
    return f"""
QGroupBox {{ font-weight: bold; border: 1px solid {p.frame}; border-radius: 4px; margin-top: 10px;
             padding: 6px 4px 4px 4px; }}
QGroupBox::title {{ subcontrol-origin: margin; left: 8px; padding: 0 3px; color: {p.text}; }}
QLabel#hint {{ color: {p.muted_text}; }}
QLabel#error {{ color: {p.error_text}; }}
QLabel#moments {{ color: {p.text}; font-family: monospace; }}
QStatusBar QLabel {{ padding: 0 6px; }}
QToolBar {{ spacing: 4px; border: none; }}
QLineEdit[invalid="true"] {{ border: 1px solid {p.error_text}; }}
QDockWidget::title {{ padding-left: 6px; }}
"""


#: the dark scheme's style sheet (what :func:`style_sheet` gives with the default scheme)
STYLE_SHEET = style_sheet()


def apply_theme(app: QApplication) -> None:
    """Fusion style with the scheme's palette, and pyqtgraph's colours to match. Called again
    after a change of scheme, it re-colours the open widgets (the open windows: :mod:`app.gui.common.colours`)."""
    app.setStyle("Fusion")
    app.setPalette(widget_palette())
    font = QFont(app.font())
    font.setPointSize(FONT_POINTS)
    app.setFont(font)
    app.setStyleSheet(style_sheet())
    configure_pyqtgraph()


def widget_palette() -> QPalette:
    """The widgets' palette in the scheme in use: light text on dark grey, or dark text on white."""
    p = current()
    pal = QPalette()
    colors = {
        QPalette.Window: p.window, QPalette.WindowText: p.text, QPalette.Base: p.base,
        QPalette.AlternateBase: p.window, QPalette.ToolTipBase: p.base, QPalette.ToolTipText: p.text,
        QPalette.Text: p.text, QPalette.Button: p.button, QPalette.ButtonText: p.text,
        QPalette.BrightText: p.error_text, QPalette.Highlight: p.highlight, QPalette.HighlightedText: "#ffffff",
        QPalette.Link: p.highlight, QPalette.PlaceholderText: p.muted_text,
    }
    for role, color in colors.items():
        pal.setColor(role, QColor(color))
    for role in (QPalette.Text, QPalette.ButtonText, QPalette.WindowText):
        pal.setColor(QPalette.Disabled, role, QColor(p.muted_text))
    # Fusion etches a disabled menu entry's text with the Light colour 1 px down and right: on a
    # dark background that read as the text doubled (View > Parameters)
    pal.setColor(QPalette.Disabled, QPalette.Light, QColor(0, 0, 0, 0))
    return pal


def configure_pyqtgraph() -> None:
    import pyqtgraph as pg

    p = current()
    pg.setConfigOptions(background=p.background, foreground=p.text, antialias=False)


#: the dark scheme's palette (older name)
def dark_palette() -> QPalette:
    """:func:`widget_palette` (the name from before there were two schemes)."""
    return widget_palette()
