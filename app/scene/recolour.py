"""Re-colour a built scene in place from one colour scheme to another (View > Projector colours).

Every actor keeps its colour's role: :func:`recolour_plotter` reads each actor's colour (its
property, its text, a per-cell "rgb" array such as the body axes' lines), finds the role it has in the
scheme it was drawn in and sets that role's colour in the new one. A colour of no role (the
body's shaded faces) stays. GUI thread only (or the thread owning an off-screen plotter).
"""

from __future__ import annotations

import numpy as np

from .palette import Palette, hex_of, rgb01, role_of


def _swap(rgb, source: Palette, target: Palette):
    """RGB 0-1 ``rgb`` in ``target``'s scheme, or None when it has no role in ``source``'s."""
    role = role_of(hex_of(rgb), source)
    return None if role is None else rgb01(target.roles[role])


def _recolour_array(data, source: Palette, target: Palette) -> bool:
    """Map the rows of a uint8 "rgb" array of ``data`` (cell or point data); True if any changed."""
    if "rgb" not in data.keys():
        return False
    rgb = np.asarray(data["rgb"])
    if rgb.dtype != np.uint8 or rgb.ndim != 2 or rgb.shape[1] != 3:
        return False
    new = rgb.copy()
    for i, row in enumerate(rgb):
        swapped = _swap(row / 255.0, source, target)
        if swapped is not None:
            new[i] = np.round(np.asarray(swapped) * 255)
    if np.array_equal(new, rgb):
        return False
    data["rgb"] = new
    return True


def _drawn_data(mapper):
    """(the algorithm feeding ``mapper``, the polydata it reads: pyvista puts an active-scalars
    filter between the mesh and the mapper), or (None, None)."""
    import pyvista as pv

    if mapper is None or not hasattr(mapper, "GetNumberOfInputConnections") or not mapper.GetNumberOfInputConnections(0):
        return None, None
    producer = mapper.GetInputConnection(0, 0).GetProducer()
    if producer.GetNumberOfInputPorts() and producer.GetNumberOfInputConnections(0):
        data = producer.GetInputDataObject(0, 0)
    else:
        data = producer.GetOutputDataObject(0)
    return (producer, pv.wrap(data)) if data is not None and data.IsA("vtkPolyData") else (None, None)


def recolour_plotter(plotter, source: Palette, target: Palette) -> None:
    """Re-colour every renderer of ``plotter`` (background, actors, texts) from ``source``'s scheme
    to ``target``'s, without rebuilding anything."""
    for renderer in plotter.renderers:
        for get, put in ((renderer.GetBackground, renderer.SetBackground),
                         (renderer.GetBackground2, renderer.SetBackground2)):
            swapped = _swap(get(), source, target)
            if swapped is not None:
                put(*swapped)
        marker = getattr(renderer, "axes_actor", None)  # the orientation axes' x, y, z labels
        if marker is not None and hasattr(marker, "GetXAxisCaptionActor2D"):
            for caption in (marker.GetXAxisCaptionActor2D(), marker.GetYAxisCaptionActor2D(),
                            marker.GetZAxisCaptionActor2D()):
                text = caption.GetCaptionTextProperty()
                swapped = _swap(text.GetColor(), source, target)
                if swapped is not None:
                    text.SetColor(*swapped)
        props = renderer.GetViewProps()
        props.InitTraversal()
        for _ in range(props.GetNumberOfItems()):
            prop = props.GetNextProp()
            if prop is None:
                break
            if hasattr(prop, "GetTextProperty"):
                text = prop.GetTextProperty()
                for get, put in ((text.GetColor, text.SetColor), (text.GetBackgroundColor, text.SetBackgroundColor)):
                    swapped = _swap(get(), source, target)
                    if swapped is not None:
                        put(*swapped)
            if hasattr(prop, "GetProperty") and hasattr(prop.GetProperty(), "GetColor"):
                p = prop.GetProperty()
                swapped = _swap(p.GetColor(), source, target)
                if swapped is not None:
                    p.SetColor(*swapped)
            mapper = prop.GetMapper() if hasattr(prop, "GetMapper") else None
            producer, data = _drawn_data(mapper)
            # lines coloured by cell (the body axes); a surface's colours are the body's own
            if data is not None and data.GetNumberOfPolys() == 0:
                if _recolour_array(data.cell_data, source, target) | _recolour_array(data.point_data, source, target):
                    data.Modified()
                    producer.Modified()
