"""The solid a triangle mesh bounds: welded edges, closed parts, winding, cavities, and the union of parts.

Call tree::

    solid(vertices, faces, where) -> (vertices, faces) of one closed solid, wound outwards
      weld                 one vertex per position, collapsed faces dropped, coincident faces cancelled
      _topology            half-edges grouped by edge: open, paired, or paired around the edge
        _pair_around_edges where parts touch along an edge (4, 6, ... faces): the faces that
                           bound the same wedge of solid are neighbours
      trimesh.repair.fill_holes   holes of 3 or 4 edges, when a mesh has only a few open edges
      _wind_consistently   per part; a part keeps the winding most of its faces had
      _cavities            an inward-wound part inside another part is its cavity; one inside
                           no part is an inside-out part and is turned
      _union               manifold3d's Boolean union of the parts whose boxes touch or overlap
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..physics.errors import ParameterError

#: the fewest faces a closed triangle surface can have (a tetrahedron)
MIN_FACES = 4
#: a part whose volume is below this fraction of its bounding box's encloses none (flat)
MIN_VOLUME_FRACTION = 1e-9
#: hole filling (trimesh's: holes of 3 or 4 edges) is tried only on meshes with at most this
#: many open edges; its cycle search is slow on more (a triangle soup is refused as open at once)
MAX_FILL_EDGES = 10_000
#: faces around an edge closer in angle than this (rad) are coincident: two parts touching
#: there, with no solid between them
COINCIDENT_ANGLE = 1e-9
#: points of an inward-wound part whose winding numbers say which part holds it as a cavity
CAVITY_PROBES = 7
#: with more parts than this, the pairwise test of their bounding boxes is skipped and all are
#: united (manifold3d sorts them itself)
MAX_BOX_PAIRS_PARTS = 2000


@dataclass(frozen=True)
class Where:
    """How refusals name the mesh (``name``, the value they show) and its points (in ``unit``,
    ``metres_per_unit`` metres each)."""

    name: str = "mesh"
    unit: str = "m"
    metres_per_unit: float = 1.0

    def point(self, p) -> str:
        return "(" + ", ".join(f"{x / self.metres_per_unit:.6g}" for x in p) + f") {self.unit}"

    def refuse(self, rule: str) -> ParameterError:
        return ParameterError("mesh", self.name, rule)


@dataclass(frozen=True)
class _Topology:
    """Faces that are neighbours across an edge, ``pairs`` (P, 2), with ``same_direction``
    where both run the edge the same way (inconsistent winding); half-edges on one face only,
    ``open_half_edges``; the part of each face, ``labels`` (parts numbered by first face)."""

    pairs: np.ndarray
    same_direction: np.ndarray
    open_half_edges: np.ndarray
    labels: np.ndarray
    n_parts: int


def solid(vertices, faces, where: Where = Where()) -> tuple[np.ndarray, np.ndarray]:
    """The closed solid a mesh bounds: its vertices (V, 3) and faces (F, 3), wound outwards.

    A CAD assembly is exported as several closed parts that touch or overlap. Each part is a
    closed, consistently wound surface (the edges say which faces belong together); the solid
    is the union of the parts, each with its cavities, computed by manifold3d in double
    precision (``Mesh64``), so touching or overlapping boxes measure exactly, to round-off.
    A single closed part, or parts apart, come back welded (a clean mesh keeps its own
    arrays); parts that touch or overlap come back as their union.

    Raises
    ------
    ParameterError
        For ``mesh``: too few faces, an open surface hole filling cannot close, a
        non-manifold edge, a part that cannot be wound consistently or encloses no volume;
        the message says which part or edge.
    """
    v, f = weld(vertices, faces)
    if not np.all(np.isfinite(v)):
        raise where.refuse("have finite vertex coordinates")
    if len(f) < MIN_FACES:
        left = "" if len(f) == len(faces) else f" of its {len(faces)} once collapsed and coincident faces go"
        raise where.refuse(f"have at least {MIN_FACES} non-degenerate faces (a closed surface), it has {len(f)}{left}")
    top = _topology(v, f, where)
    if len(top.open_half_edges):
        _refuse_open(v, f, top, where, fillable=True)
        import trimesh

        mesh = trimesh.Trimesh(v, f, process=False)
        trimesh.repair.fill_holes(mesh)
        f = np.asarray(mesh.faces, dtype=np.int64)
        top = _topology(v, f, where)
        if len(top.open_half_edges):
            _refuse_open(v, f, top, where, fillable=False)
    if top.same_direction.any():
        f = _wind_consistently(f, top, where)
    tri = v[f]
    volumes = _part_volumes(tri, top)
    if volumes.sum() < 0:  # inside out as a whole (a cavity is inward-wound only inside a part)
        f, volumes = f[:, ::-1].copy(), -volumes
    lo, hi = _part_boxes(tri, top)
    _refuse_flat(top, volumes, lo, hi, where)
    if top.n_parts == 1:
        return v, f
    f, owner = _cavities(v, f, top, volumes, lo, hi)
    solids, solid_of_part = np.unique(owner, return_inverse=True)
    if len(solids) == 1 or not _boxes_meet(lo[solids], hi[solids]):
        return v, f  # one part with its cavities, or parts apart: the solid is their sum, exactly
    return _union(v, f, _faces_of(solid_of_part[top.labels], len(solids)), where)


def _faces_of(labels: np.ndarray, n: int) -> list:
    """The faces with each label 0 .. n - 1, as n index arrays."""
    order = np.argsort(labels, kind="stable")
    return np.split(order, np.searchsorted(labels[order], np.arange(1, n)))


def weld(vertices, faces) -> tuple[np.ndarray, np.ndarray]:
    """One vertex per position (exact coordinates), unused vertices dropped, faces that
    collapse onto an edge dropped, and coincident faces cancelled: a face and its reverse (the
    wall between two touching parts) both go, repeats of a face count once.

    Vertices keep their order, so a clean mesh comes back unchanged.
    """
    v = np.asarray(vertices, dtype=np.float64) + 0.0  # -0.0 becomes 0.0
    group, first = _same_rows(v)
    f = group[np.asarray(faces, dtype=np.int64)]
    f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])]
    f = _cancel_coincident(f)
    used = np.zeros(len(first), dtype=bool)
    used[f.ravel()] = True
    kept = np.flatnonzero(used)
    kept = kept[np.argsort(first[kept])]  # in the order of the rows they come from
    new_index = np.empty(len(first), dtype=np.int64)
    new_index[kept] = np.arange(len(kept))
    return v[first[kept]], new_index[f]


def _splitmix(z: np.ndarray) -> np.ndarray:
    """The finalizer of Steele, Lea and Flood's SplitMix64 (OOPSLA 2014): every input bit
    stirs every output bit."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _hash_rows(bits: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of three 64-bit words."""
    return _splitmix(_splitmix(_splitmix(bits[:, 0]) ^ bits[:, 1]) ^ bits[:, 2])


def _same_rows(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``v`` grouped by equality: each row's group, and each group's first row."""
    if len(v) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    h = _hash_rows(np.ascontiguousarray(v).view(np.uint64))  # sorts equal rows together
    order = np.argsort(h)
    hs = h[order]
    start = np.r_[True, hs[1:] != hs[:-1]]
    same_hash = np.flatnonzero(~start[1:])
    a, b = order[same_hash], order[same_hash + 1]
    if any(np.any(v[a, k] != v[b, k]) for k in range(3)):  # a hash collision: sort the rows themselves
        order = np.lexsort(v.T[::-1])
        vs = v[order]
        start = np.r_[True, np.any(vs[1:] != vs[:-1], axis=1)]
    group = np.empty(len(v), dtype=np.int64)
    group[order] = np.cumsum(start) - 1
    return group, np.minimum.reduceat(order, np.flatnonzero(start))


def _cancel_coincident(f: np.ndarray) -> np.ndarray:
    """Faces on the same three vertices: each counts +1 or -1 by its winding; their sum
    decides what is left (none, or one face wound by the sign). Face order is kept."""
    s = np.sort(f, axis=1)
    h = _hash_rows(s.astype(np.uint64))
    hs = np.sort(h)
    if np.all(hs[1:] != hs[:-1]):  # no two faces on the same vertices
        return f
    order = np.lexsort(s.T[::-1])
    ss = s[order]
    start = np.r_[True, np.any(ss[1:] != ss[:-1], axis=1)]
    m = np.argmin(f, axis=1)
    rows = np.arange(len(f))
    even = f[rows, (m + 1) % 3] < f[rows, (m + 2) % 3]  # (a, b, c) is a rotation of sorted
    group = np.cumsum(start) - 1
    net = np.bincount(group, np.where(even[order], 1, -1))
    first = order[start]
    keep = np.zeros(len(f), dtype=bool)
    keep[first[net != 0]] = True
    out = f.copy()
    flip_to = first[net != 0][(net[net != 0] > 0) != even[first[net != 0]]]
    out[flip_to] = out[flip_to][:, ::-1]
    return out[keep]


def _topology(v: np.ndarray, f: np.ndarray, where: Where) -> _Topology:
    """Neighbouring faces across every edge; half-edge ``3 * face + k`` runs from corner k to
    corner k + 1 of its face."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    a = f.ravel()
    b = f[:, [1, 2, 0]].ravel()
    forward = a < b
    key = np.minimum(a, b) * len(v) + np.maximum(a, b)
    order = np.argsort(key, kind="stable")
    ks = key[order]
    start = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    count = np.diff(np.r_[start, len(ks)])
    open_half_edges = np.sort(order[start[count == 1]])
    two = start[count == 2]
    he_pairs = [np.column_stack([order[two], order[two + 1]])]
    for c in np.unique(count[count > 2]):
        groups = order[start[count == c][:, None] + np.arange(c)]
        he_pairs.append(_pair_around_edges(v, f, groups, forward, where))
    he = np.concatenate(he_pairs)
    pairs = he // 3
    graph = coo_matrix((np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(len(f), len(f)))
    n_parts, labels = connected_components(graph, directed=False)
    return _Topology(pairs, forward[he[:, 0]] == forward[he[:, 1]], open_half_edges, labels, int(n_parts))


def _pair_around_edges(v, f, groups: np.ndarray, forward: np.ndarray, where: Where) -> np.ndarray:
    """Pairs of half-edges around edges shared by c > 2 faces (``groups``, (G, c)).

    Where closed parts touch along an edge, its faces alternate around it between faces with
    solid on their one side and faces with solid on the other. Each face is paired with the
    next face round the edge on its solid side: the two bound the same wedge of solid, so
    each part stays a closed surface of its own. A face with outward normal n = (b - a) x
    (r - a) that runs the edge from a to b has n pointing the way the angle about b - a
    grows, its solid on the side it shrinks. Coincident faces (parts touching face to face
    there) are put in the order that leaves no solid between them.
    """
    g, c = groups.shape
    face, k = groups // 3, groups % 3
    s = np.where(forward[groups], 1, -1)  # +1: the face runs the edge from its lower vertex
    a, b, r = f[face, k], f[face, (k + 1) % 3], f[face, (k + 2) % 3]
    if c % 2:
        _refuse_non_manifold(v, a[0, 0], b[0, 0], c, where)
    lo, hi = np.minimum(a[:, 0], b[:, 0]), np.maximum(a[:, 0], b[:, 0])
    e = v[hi] - v[lo]
    e /= np.linalg.norm(e, axis=1)[:, None]
    w = v[r] - v[lo][:, None, :]
    w -= np.einsum("gcj,gj->gc", w, e)[:, :, None] * e[:, None, :]  # across the edge, in each face
    across = np.linalg.norm(w, axis=2)
    flat = np.flatnonzero(np.any(across <= COINCIDENT_ANGLE * across.max(axis=1)[:, None], axis=1))
    if len(flat):  # a face with no width across the edge has no direction round it
        _refuse_non_manifold(v, lo[flat[0]], hi[flat[0]], c, where)
    u = w[:, 0] / across[:, :1]
    t = np.cross(e, u)
    theta = np.arctan2(np.einsum("gcj,gj->gc", w, t), np.einsum("gcj,gj->gc", w, u))
    # cut the circle in the middle of its widest gap, so that no face sits at the cut
    ts = np.sort(theta, axis=1)
    gaps = np.diff(np.concatenate([ts, ts[:, :1] + 2 * np.pi], axis=1), axis=1)
    rows = np.arange(g)
    widest = np.argmax(gaps, axis=1)
    cut = ts[rows, widest] + 0.5 * gaps[rows, widest]
    around = np.argsort(np.mod(theta - cut[:, None], 2 * np.pi) - s * COINCIDENT_ANGLE, axis=1)
    s_around = np.take_along_axis(s, around, axis=1)
    bad = np.flatnonzero(np.any(s_around == np.roll(s_around, -1, axis=1), axis=1))
    if len(bad):
        _refuse_non_manifold(v, lo[bad[0]], hi[bad[0]], c, where)
    he_around = np.take_along_axis(groups, around, axis=1)
    i = ((s_around[:, 0] == 1)[:, None] + 2 * np.arange(c // 2)) % c  # faces with solid ahead
    return np.column_stack([np.take_along_axis(he_around, i, axis=1).ravel(),
                            np.take_along_axis(he_around, (i + 1) % c, axis=1).ravel()])


def _refuse_non_manifold(v, a: int, b: int, c: int, where: Where):
    raise where.refuse(f"be the surface of a solid: {c} faces meet at the edge from {where.point(v[a])} to "
                       f"{where.point(v[b])} (a non-manifold edge)")


def _refuse_open(v, f, top: _Topology, where: Where, fillable: bool) -> None:
    """Refuse a mesh with open edges, unless ``fillable`` and hole filling may close it: few
    open edges, each on a part of at least a tetrahedron's faces (loose faces stay open)."""
    he = top.open_half_edges
    open_parts = np.unique(top.labels[he // 3])
    if fillable and len(he) <= MAX_FILL_EDGES and np.bincount(top.labels)[open_parts].min() >= MIN_FACES:
        return
    first = he[0]
    p, q = v[f[first // 3, first % 3]], v[f[first // 3, (first % 3 + 1) % 3]]
    raise where.refuse(f"be a closed (watertight) surface: {len(he)} edges belong to one face only, in "
                       f"{len(open_parts)} of its {top.n_parts} parts (part {top.labels[first // 3] + 1} at the "
                       f"edge from {where.point(p)} to {where.point(q)}); hole filling closes only holes of 3 or 4 "
                       "edges")


def _wind_consistently(f: np.ndarray, top: _Topology, where: Where) -> np.ndarray:
    """Re-wind each part so that neighbours run their shared edge in opposite directions.

    The face graph is doubled (each face kept or flipped) and its connected components say
    which faces to flip, in one scipy call: trimesh's ``fix_winding`` walks the same graph
    with networkx and took 39 s for a million faces. A part whose kept and flipped faces are
    connected is one-sided (not orientable). Each part keeps the winding most of its faces
    had, so an inward-wound cavity with a few faces the wrong way stays a cavity.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(f)
    a, b = top.pairs[:, 0], top.pairs[:, 1]
    other = np.where(top.same_direction, n, 0)  # same direction: one of the two must flip
    rows = np.concatenate([a, a + n])
    cols = np.concatenate([b + other, (b + n - other)])
    graph = coo_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(2 * n, 2 * n))
    _, lab = connected_components(graph, directed=False)
    one_sided = np.flatnonzero(lab[:n] == lab[n:])
    if len(one_sided):
        raise where.refuse(f"have its faces wound consistently (part {top.labels[one_sided[0]] + 1} of "
                           f"{top.n_parts} is one-sided, not orientable)")
    root = np.full(top.n_parts, -1)
    root[top.labels[::-1]] = np.arange(n)[::-1]  # the first face of each part
    flip = lab[:n] != lab[root[top.labels]]
    flipped = np.bincount(top.labels, flip, minlength=top.n_parts)
    flip ^= (2 * flipped > np.bincount(top.labels, minlength=top.n_parts))[top.labels]
    out = f.copy()
    out[flip] = out[flip][:, ::-1]
    return out


def _part_volumes(tri: np.ndarray, top: _Topology) -> np.ndarray:
    """Signed volume of each part (divergence theorem; negative: wound inwards)."""
    tri = tri - tri[0, 0]  # about a point of the mesh: less round-off far from the origin
    six = np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2]))
    if top.n_parts == 1:
        return np.array([six.sum() / 6.0])
    return np.bincount(top.labels, six, minlength=top.n_parts) / 6.0


def _part_boxes(tri: np.ndarray, top: _Topology) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper corners of each part's bounding box, (n_parts, 3) each."""
    lo, hi = tri.min(axis=1), tri.max(axis=1)
    if top.n_parts == 1:
        return lo.min(axis=0)[None], hi.max(axis=0)[None]
    order = np.argsort(top.labels, kind="stable")
    starts = np.searchsorted(top.labels[order], np.arange(top.n_parts))
    return np.minimum.reduceat(lo[order], starts), np.maximum.reduceat(hi[order], starts)


def _refuse_flat(top: _Topology, volumes: np.ndarray, lo: np.ndarray, hi: np.ndarray, where: Where) -> None:
    box = np.prod(hi - lo, axis=1)
    flat = np.flatnonzero(~(np.abs(volumes) > MIN_VOLUME_FRACTION * box) | (box == 0))
    if len(flat):
        k = flat[0]
        raise where.refuse(f"enclose a volume > 0 (part {k + 1} of {top.n_parts} is flat or degenerate: "
                           f"{abs(volumes[k]):.3g} m^3 in the box from {where.point(lo[k])} to {where.point(hi[k])})")


def _cavities(v, f, top: _Topology, volumes: np.ndarray, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """The part that owns each part: itself, or for an inward-wound part (a cavity) the
    smallest outward part around it. An inward-wound part inside no part is an outward part
    wound inside out, and is turned (returned faces)."""
    owner = np.arange(top.n_parts)
    inward = np.flatnonzero(volumes < 0)
    if len(inward) == 0:
        return f, owner
    outward = np.flatnonzero(volumes > 0)
    outward = outward[np.argsort(volumes[outward])]  # smallest first
    faces = _faces_of(top.labels, top.n_parts)
    turn = []
    for c in inward:
        probes = v[f[faces[c][np.linspace(0, len(faces[c]) - 1, CAVITY_PROBES).astype(int)], 0]]
        around = outward[np.all(lo[outward] <= lo[c], axis=1) & np.all(hi[c] <= hi[outward], axis=1)]
        for p in around:
            tri = v[f[faces[p]]]
            if np.median([winding_number(x, tri) for x in probes]) > 0.5:
                owner[c] = p
                break
        else:
            turn.append(c)
    if turn:
        f = f.copy()
        flip = np.isin(top.labels, turn)
        f[flip] = f[flip][:, ::-1]
    return f, owner


def winding_number(point, triangles) -> float:
    """How many times the closed surface ``triangles`` (F, 3, 3) winds around ``point``:
    1 inside an outward-wound surface, 0 outside. The solid angle of each triangle by Van
    Oosterom and Strackee, "The solid angle of a plane triangle", IEEE Trans. Biomed. Eng.
    30 (1983) 125, summed over 4 pi (Jacobson, Kavan and Sorkine-Hornung, "Robust inside-
    outside segmentation using generalized winding numbers", SIGGRAPH 2013)."""
    a, b, c = (triangles[:, i] - point for i in range(3))
    la, lb, lc = (np.linalg.norm(x, axis=1) for x in (a, b, c))
    num = np.einsum("ij,ij->i", a, np.cross(b, c))
    den = (la * lb * lc + np.einsum("ij,ij->i", a, b) * lc + np.einsum("ij,ij->i", a, c) * lb
           + np.einsum("ij,ij->i", b, c) * la)
    return float(np.sum(2.0 * np.arctan2(num, den)) / (4.0 * np.pi))


def _boxes_meet(lo: np.ndarray, hi: np.ndarray) -> bool:
    """Do any two of the boxes (corners ``lo``, ``hi``, (n, 3)) touch or overlap?"""
    if len(lo) > MAX_BOX_PAIRS_PARTS:
        return True
    meet = np.all((lo[:, None] <= hi[None, :]) & (lo[None, :] <= hi[:, None]), axis=2)
    return bool(np.any(np.triu(meet, 1)))


def _union(v, f, solids: list, where: Where) -> tuple[np.ndarray, np.ndarray]:
    """manifold3d's union of the solids (face-index arrays), in double precision."""
    import manifold3d

    parts = []
    for k, s in enumerate(solids):
        used, tri = np.unique(f[s], return_inverse=True)
        tri = np.ascontiguousarray(tri.reshape(-1, 3), dtype=np.uint64)
        part = manifold3d.Manifold(manifold3d.Mesh64(np.ascontiguousarray(v[used]), tri))
        if part.status() != manifold3d.Error.NoError:
            raise where.refuse(f"be the surface of a solid: part {k + 1} of {len(solids)} is not a closed "
                               f"2-manifold for manifold3d ({part.status().name})")
        parts.append(part)
    united = manifold3d.Manifold.batch_boolean(parts, manifold3d.OpType.Add)
    if united.status() != manifold3d.Error.NoError:  # pragma: no cover - manifold3d's own failure
        raise where.refuse(f"be a solid manifold3d can unite ({united.status().name})")
    out = united.to_mesh64()
    return np.array(out.vert_properties)[:, :3], np.array(out.tri_verts, dtype=np.int64)
