"""Run kernels as saved machine code: loaded with llvmlite alone, without numba's compiler.

Loading a kernel from numba's own cache starts numba's compiler in the process (its typing and
lowering registries, about 0.3-0.45 s here), which was the largest part of a warm
``tumble simulate``. Each entry kernel of :mod:`.runs` is therefore also compiled, once, into a
C-callable function (a numba ``cfunc`` that wraps the arrays' pointers and calls the kernel:
the same compiled code), and its machine code is saved beside numba's cache. A later process
maps that object file into memory with llvmlite's MCJIT, as numba does with its own cache, and
calls it through ctypes: about 10 ms.

The file's name carries a key of everything the machine code depends on (this module's,
:mod:`.runs`' and :mod:`.kernels`' sources, the numba, llvmlite and Python versions, the CPU and
its features), and its body a SHA-256 of the code: a stale, foreign or damaged file is never
loaded. Every external symbol the code names is looked up before it is mapped (an unresolved
one would abort the process inside LLVM); if one is missing, :func:`load` returns None and the
caller uses numba's cache. Only ELF objects (Linux) are mapped; elsewhere :func:`load` returns
None and numba's cache serves as before.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import hashlib
import os
import struct
import sys
import threading
from pathlib import Path

import numpy as np

from . import kernels, runs

MAGIC = b"tumble-native 1\n"
SUFFIX = ".native"
#: the C arguments of every saved entry and their kinds: the run kernel's arguments
#: (:data:`.runs.RUN_SIGNATURE`) as pointers and sizes, then a pointer to the three int64 results
_C_ARGS = (("ys", "f64*"), ("n", "i64"), ("width", "i64"), ("h", "f64"), ("n_out", "i64"), ("every", "i64"),
           ("params", "f64*"), ("n_params", "i64"), ("points", "f64*"), ("n_points", "i64"),
           ("wforces", "f64*"), ("n_wforces", "i64"), ("order", "i64*"), ("n_order", "i64"), ("out", "f64*"),
           ("options", "f64*"), ("n_options", "i64"), ("result", "i64*"))

_lock = threading.Lock()
_engines: list = []  # every mapped object's execution engine, kept for the life of the process
_state: dict = {}


class NativeKernel:
    """An entry kernel of :mod:`.runs` as saved machine code: called with exactly the arguments
    (types, shapes, C order) of :data:`.runs.RUN_SIGNATURE`, it returns the kernel's
    ``(status, body, step)``. Thread: any (the call releases the GIL, as the ``nogil`` kernel)."""

    def __init__(self, name: str, address: int):
        self.name = name
        kinds = {"f64": ctypes.c_double, "i64": ctypes.c_int64, "f64*": ctypes.c_void_p, "i64*": ctypes.c_void_p}
        self._function = ctypes.CFUNCTYPE(None, *(kinds[kind] for _, kind in _C_ARGS))(address)

    def __repr__(self) -> str:
        return f"<native kernel {self.name}>"

    def __call__(self, ys, h, n_out, every, params, points, wforces, order, out, options):
        _array("ys", ys, np.float64, 2, writeable=True)
        for field, value in (("params", params), ("options", options)):
            _array(field, value, np.float64, 1)
        for field, value in (("points", points), ("wforces", wforces)):
            _array(field, value, np.float64, 2)
            if value.shape[1] != 3:
                raise ValueError(f"{field} must have 3 columns, got shape {value.shape}")
        _array("order", order, np.int64, 1)
        _array("out", out, np.float64, 3, writeable=True)
        n_out, every = int(n_out), int(every)
        n, width = ys.shape
        if out.shape != (n_out, n, width):
            raise ValueError(f"out must have shape {(n_out, n, width)}, got {out.shape}")
        result = np.zeros(3, dtype=np.int64)
        self._function(ys.ctypes.data, n, width, float(h), n_out, every, params.ctypes.data, len(params),
                       points.ctypes.data, len(points), wforces.ctypes.data, len(wforces), order.ctypes.data,
                       len(order), out.ctypes.data, options.ctypes.data, len(options), result.ctypes.data)
        return int(result[0]), int(result[1]), int(result[2])


def _array(field, value, dtype, ndim, writeable=False) -> None:
    if not (isinstance(value, np.ndarray) and value.dtype == dtype and value.ndim == ndim
            and value.flags.c_contiguous and (value.flags.writeable or not writeable)):
        raise TypeError(f"{field} must be a C-contiguous {ndim}-d {np.dtype(dtype).name} array"
                        f"{' (writeable)' if writeable else ''}, got {type(value).__name__}")


def load(name: str) -> NativeKernel | None:
    """The saved machine code of the entry kernel ``name`` (a run kernel of :mod:`.runs`), or
    None if none is saved for this code and this machine, or it cannot be mapped here."""
    path = path_of(name)
    if path is None:
        return None
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    parsed = _parse(blob)
    if parsed is None:
        return None
    symbol, code = parsed
    with _lock:
        llvm = _llvm()
        if not _resolvable(llvm, code):
            return None
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _state["machine"])
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        engine.finalize_object()
        address = engine.get_function_address(symbol)
        if not address:
            return None
        _engines.append(engine)
    return NativeKernel(name, address)


def saved(name: str) -> bool:
    """True if a file for ``name`` is there (machine code, or the mark that none can be made)."""
    path = path_of(name)
    return path is not None and path.exists()


def save(name: str) -> bool:
    """Compile the C-callable entry of the run kernel ``name`` and save its machine code (with
    numba's compiler: run where the kernel is compiled anyway). Where the code could not be
    mapped back (not ELF, or naming a symbol this process cannot resolve), an empty file marks
    that none is made, so that no later run tries again. Returns True if code was saved."""
    path = path_of(name)
    if path is None:
        return False
    from numba.core.errors import NumbaError

    try:
        entry = _c_entry(getattr(runs, name))
        library = entry._library  # numba's code library of the entry, its kernel linked in
        code = library._codegen._tm.emit_object(library._final_module)
    except (AttributeError, TypeError, NumbaError):  # another numba's internals: its cache serves
        _write(path, b"")
        return False
    with _lock:
        llvm = _llvm()
        usable = _resolvable(llvm, code)
    blob = MAGIC + entry.native_name.encode() + b"\n" + hashlib.sha256(code).hexdigest().encode() + b"\n" + code
    _write(path, blob if usable else b"")
    for stale in path.parent.glob(f"runs.{name}.*{SUFFIX}"):  # older code's files: no key maps them again
        if stale != path:
            with contextlib.suppress(OSError):
                stale.unlink()
    return usable


def path_of(name: str) -> Path | None:
    """Where the machine code of ``name`` is saved: numba's cache folder of the kernel (beside
    :mod:`.runs`, or the user's cache, or ``NUMBA_CACHE_DIR``), under a key of everything the
    code depends on. None where numba keeps no cache or the platform maps no ELF objects."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        folder = Path(getattr(runs, name)._cache._cache_path)
    except AttributeError:
        return None
    return folder / f"runs.{name}.{_key()}{SUFFIX}"


# ------------------------------------------------------------------ internals


def _key() -> str:
    if "key" not in _state:
        import llvmlite
        import numba

        llvm = _llvm()
        parts = [Path(m.__file__).read_bytes() for m in (sys.modules[__name__], runs, kernels)]
        parts += [numba.__version__.encode(), llvmlite.__version__.encode(), sys.version.encode(),
                  llvm.get_process_triple().encode(), llvm.get_host_cpu_name().encode(),
                  llvm.get_host_cpu_features().flatten().encode()]
        _state["key"] = hashlib.sha256(b"\0".join(parts)).hexdigest()[:24]
    return _state["key"]


def _llvm():
    """llvmlite's binding with a target machine for this CPU, or None if llvmlite cannot give
    one. The symbols numba's code calls and no library exports (numba's C helpers, its runtime's,
    Python's exceptions) are gathered in ``_state["helpers"]``, and registered only as an object
    names them (each registration is a call into LLVM)."""
    if "llvm" not in _state:
        try:
            import llvmlite.binding as llvm
            from numba import _dynfunc, _helperlib
            from numba.core.runtime import _nrt_python

            helpers = {"_Py_NoneStruct": id(None)}
            for table in (_helperlib.c_helpers, _dynfunc.c_helpers):
                helpers.update(("numba_" + py_name, address) for py_name, address in table.items())
            helpers.update((py_name if py_name.startswith("_") else "NRT_" + py_name, address)
                           for py_name, address in _nrt_python.c_helpers.items())
            helpers.update((f"PyExc_{value.__name__}", id(value)) for value in vars(builtins).values()
                           if isinstance(value, type) and issubclass(value, BaseException))
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            target = llvm.Target.from_triple(llvm.get_process_triple())
            _state["machine"] = target.create_target_machine(
                cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
                reloc="static", codemodel="jitdefault")
            _state["helpers"] = helpers
            _state["llvm"] = llvm
        except (ImportError, AttributeError, RuntimeError):
            _state["llvm"] = None
    return _state["llvm"]


def _parse(blob: bytes) -> tuple[str, bytes] | None:
    """(symbol, machine code) of a saved file, or None if it is empty, not ours or damaged."""
    if not blob.startswith(MAGIC):
        return None
    head, _, rest = blob[len(MAGIC):].partition(b"\n")
    digest, _, code = rest.partition(b"\n")
    if not head or hashlib.sha256(code).hexdigest().encode() != digest:
        return None
    return head.decode("ascii", "replace"), code


def _resolvable(llvm, code: bytes) -> bool:
    """True if ``code`` is an object this process can map: ELF64, and every symbol it names
    either one of numba's helpers (then registered with LLVM, as numba registers them) or found
    by LLVM in the process (libc, libm, Python's C API)."""
    names = _undefined_symbols(code)
    if llvm is None or names is None:
        return False
    helpers = _state["helpers"]
    if not all(name in helpers or llvm.address_of_symbol(name) for name in names):
        return False
    for name in names:
        if name in helpers:
            llvm.add_symbol(name, helpers[name])
    return True


def _undefined_symbols(code: bytes) -> list[str] | None:
    """The external symbols an ELF64 little-endian object names; None if it is not one."""
    try:
        if code[:4] != b"\x7fELF" or code[4] != 2 or code[5] != 1:
            return None
        shoff, = struct.unpack_from("<Q", code, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", code, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", code, shoff + i * shentsize) for i in range(shnum)]
        names = []
        for sh_type, sh_offset, sh_size, sh_link, sh_entsize in (
                (s[1], s[4], s[5], s[6], s[9]) for s in sections):
            if sh_type != 2:  # SHT_SYMTAB
                continue
            strtab = sections[sh_link]
            strings = code[strtab[4]:strtab[4] + strtab[5]]
            for at in range(sh_offset + sh_entsize, sh_offset + sh_size, sh_entsize):  # entry 0 is null
                st_name, st_info, _, st_shndx = struct.unpack_from("<IBBH", code, at)
                if st_shndx == 0 and st_name:  # SHN_UNDEF
                    names.append(strings[st_name:strings.index(b"\0", st_name)].decode("ascii"))
        return names
    except (struct.error, IndexError, ValueError, UnicodeDecodeError):
        return None


def _c_entry(run):
    """A numba ``cfunc`` taking :data:`_C_ARGS` that calls the entry kernel ``run`` on the arrays
    they point at (the kernel's own compiled code is linked in)."""
    from numba import carray, cfunc, types

    kinds = {"f64": types.float64, "i64": types.int64, "f64*": types.CPointer(types.float64),
             "i64*": types.CPointer(types.int64)}

    def entry(ys_p, n, width, h, n_out, every, params_p, n_params, points_p, n_points, wforces_p, n_wforces,
              order_p, n_order, out_p, options_p, n_options, result_p):
        result = carray(result_p, (3,))
        status, body, step = run(carray(ys_p, (n, width)), h, n_out, every, carray(params_p, (n_params,)),
                                 carray(points_p, (n_points, 3)), carray(wforces_p, (n_wforces, 3)),
                                 carray(order_p, (n_order,)), carray(out_p, (n_out, n, width)),
                                 carray(options_p, (n_options,)))
        result[0] = status
        result[1] = body
        result[2] = step

    return cfunc(types.void(*(kinds[kind] for _, kind in _C_ARGS)), nopython=True)(entry)


def _write(path: Path, blob: bytes) -> None:
    """``blob`` to ``path`` through a temporary file renamed over it (a reader never sees half)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(blob)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
