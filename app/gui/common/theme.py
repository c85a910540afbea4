"""One dark theme for Qt widgets and pyqtgraph, matching the 3D scene's palette."""

from __future__ import annotations

from PyQt5.QtGui import QColor, QFont, QPalette
from PyQt5.QtWidgets import QApplication

from ...scene.style import BACKGROUND, TEXT_COLOR

WINDOW = "#20242b"
BASE = "#181b20"
BUTTON = "#2c323b"
HIGHLIGHT = "#3d7bd9"
MUTED_TEXT = "#8b949e"
ERROR_TEXT = "#ff7b72"
OK_TEXT = "#7ee787"
#: point size of the UI font
FONT_POINTS = 9

STYLE_SHEET = f"""
QGroupBox {{ font-weight: bold; border: 1px solid #39414c; border-radius: 4px; margin-top: 10px;
             padding: 6px 4px 4px 4px; }}
QGroupBox::title {{ subcontrol-origin: margin; left: 8px; padding: 0 3px; color: {TEXT_COLOR}; }}
QLabel#hint {{ color: {MUTED_TEXT}; }}
QLabel#error {{ color: {ERROR_TEXT}; }}
QLabel#moments {{ color: {TEXT_COLOR}; font-family: monospace; }}
QStatusBar QLabel {{ padding: 0 6px; }}
QToolBar {{ spacing: 4px; border: none; }}
QLineEdit[invalid="true"] {{ border: 1px solid {ERROR_TEXT}; }}
QDockWidget::title {{ padding-left: 6px; }}
"""


def apply_theme(app: QApplication) -> None:
    """Fusion style with a dark palette, and pyqtgraph's colours to match."""
    app.setStyle("Fusion")
    app.setPalette(dark_palette())
    font = QFont(app.font())
    font.setPointSize(FONT_POINTS)
    app.setFont(font)
    app.setStyleSheet(STYLE_SHEET)


def dark_palette() -> QPalette:
    """The widgets' palette: light text on dark grey."""
    pal = QPalette()
    colors = {
        QPalette.Window: WINDOW, QPalette.WindowText: TEXT_COLOR, QPalette.Base: BASE,
        QPalette.AlternateBase: WINDOW, QPalette.ToolTipBase: BASE, QPalette.ToolTipText: TEXT_COLOR,
        QPalette.Text: TEXT_COLOR, QPalette.Button: BUTTON, QPalette.ButtonText: TEXT_COLOR,
        QPalette.BrightText: ERROR_TEXT, QPalette.Highlight: HIGHLIGHT, QPalette.HighlightedText: "#ffffff",
        QPalette.Link: HIGHLIGHT, QPalette.PlaceholderText: MUTED_TEXT,
    }
    for role, color in colors.items():
        pal.setColor(role, QColor(color))
    for role in (QPalette.Text, QPalette.ButtonText, QPalette.WindowText):
        pal.setColor(QPalette.Disabled, role, QColor(MUTED_TEXT))
    # Fusion etches a disabled menu entry's text with the Light colour 1 px down and right: on a
    # dark background that read as the text doubled (View > Parameters)
    pal.setColor(QPalette.Disabled, QPalette.Light, QColor(0, 0, 0, 0))
    return pal


def configure_pyqtgraph() -> None:
    import pyqtgraph as pg

    pg.setConfigOptions(background=BACKGROUND, foreground=TEXT_COLOR, antialias=False)
