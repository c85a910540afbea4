"""The tour notebook runs headless from top to bottom, and ``tumble.show`` in a notebook
gives the view inline (an image), as a user's Jupyter runs them (nbclient, ipykernel)."""

from __future__ import annotations

import nbformat
from conftest import ROOT
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

TOUR = ROOT / "resources" / "notebooks" / "tour.ipynb"
#: longest a cell may run (s): the fit and the map take seconds; a first run compiles kernels
CELL_TIMEOUT_S = 600


def run(nb, folder):
    """Execute ``nb`` in a fresh kernel in ``folder``; any cell's error fails (CellExecutionError)."""
    NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def outputs_of(cell) -> set:
    """The MIME types a code cell displayed."""
    return {mime for out in cell.get("outputs", []) for mime in out.get("data", {})}


def test_the_tour_runs_headless_without_an_error(tmp_path):
    nb = run(nbformat.read(TOUR, as_version=4), tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not any(o.get("output_type") == "error" for o in c.outputs) for c in code)
    shown = next(c for c in code if "tumble.show(" in c.source)
    assert "image/png" in outputs_of(shown)
    plots = [c for c in code if "plt.show()" in c.source]
    assert plots and all("image/png" in outputs_of(c) for c in plots)
    scenario = next(c for c in code if c.source.rstrip().endswith("\nsc"))
    assert "text/markdown" in outputs_of(scenario)


def test_show_in_a_notebook_gives_an_image(tmp_path):
    nb = new_notebook(cells=[new_code_cell('import tumble\nsc = tumble.load("book")\ntumble.show(sc)'),
                             new_code_cell('tumble.show(tumble.simulate(sc, duration=1.0), view="poinsot")')])
    run(nb, tmp_path)
    for cell in nb.cells:
        assert outputs_of(cell) & {"image/png", "text/html"}, cell.outputs
    png = next(o for o in nb.cells[0].outputs if "image/png" in o.get("data", {}))
    import base64

    assert base64.b64decode(png["data"]["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
