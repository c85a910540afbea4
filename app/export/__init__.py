"""Export: movies, GIFs, frame sequences and data, re-simulated offscreen.

Animations never record the screen: :func:`export_animation` re-simulates the scenario
from its start at exactly the frame times and renders each frame off screen with the
window's own scene (:mod:`app.scene`), so the same scenario and settings give the same
frames. Modules: :mod:`.settings` (choices, checks, frame plan), :mod:`.timeline` (the
run), :mod:`.canvas` (the view's panes and overlays off screen), :mod:`.panels` and
:mod:`.plots` (plot panel), :mod:`.encode` (ffmpeg), :mod:`.exporter` (the one frame loop,
:func:`~.exporter.export`, for any view of :mod:`app.views`, and atomic output), :mod:`.data` (trajectory, scenario, view);
the run as glTF 2.0: :mod:`.gltf` (the .glb), :mod:`.keys` (its keyframes), :mod:`.page` (the page that plays it).

Importing this package is light (no VTK, no matplotlib): settings can be checked and
previewed before anything heavy loads.
"""

from .errors import EncodeError, ExportCancelled  # noqa: F401
from .settings import (  # noqa: F401
    DATA_FORMATS,
    FORMATS,
    ExportPlan,
    ExportSettings,
    Overlay,
    estimate_bytes,
    parse_size,
    plan_export,
    sequence_paths,
)


def export_animation(scenario, settings, progress=None, cancel=None):
    """Write an animation; see :func:`app.export.exporter.export_animation`."""
    from .exporter import export_animation as run

    return run(scenario, settings, progress=progress, cancel=cancel)


def export_data(scenario, settings, progress=None):
    """Write the trajectory (CSV/NPZ) or the scenario (TOML); see :func:`app.export.data.export_data`."""
    from .data import export_data as run

    return run(scenario, settings, progress=progress)
