"""Data exports: the trajectory at the frame times (CSV/NPZ), the scenario (TOML), a view (PNG).

The table has the ``tumble simulate`` columns (:mod:`app.simulation.table`), one row per
frame of the animation the same settings would make, so a clip and its numbers line up.
Every file is written atomically.
"""

from __future__ import annotations

from pathlib import Path

from ..atomic import atomic_path
from ..simulation.table import check_finite, trajectory_table, write_table
from .settings import ExportSettings, plan_export


def export_data(scenario, settings: ExportSettings, progress=None) -> tuple[Path, int]:
    """Write ``settings.out`` (.csv, .npz or .toml); returns (path, rows written).

    ``progress(fraction)`` is called as the run is simulated (see
    :func:`~app.export.timeline.simulate_timeline`); nothing is written before it ends.

    Raises :class:`~app.physics.errors.ParameterError` for bad settings and
    :class:`~app.physics.errors.DivergenceError` if the run diverges.
    """
    plan = plan_export(scenario, settings)
    if plan.format == "toml":
        from ..scenario import save

        save(scenario, plan.out)
        return plan.out, 0
    if plan.format not in ("csv", "npz"):
        raise ValueError(f"export_data writes .csv, .npz or .toml, not {plan.out.suffix}")
    from .timeline import simulate_timeline

    frames = simulate_timeline(scenario, plan, progress=progress).frames()
    table = trajectory_table(scenario, frames)
    check_finite(table)
    write_table(plan.out, table)
    return plan.out, len(frames)


def export_view_png(plotter, path) -> Path:
    """Save what ``plotter`` shows now as a PNG, atomically. Thread: the plotter's (GUI) thread."""
    import imageio.v3 as iio

    image = plotter.screenshot(return_img=True)
    path = Path(path)
    with atomic_path(path) as tmp:
        iio.imwrite(tmp, image, extension=".png")
    return path
