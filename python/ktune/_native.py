"""The kernel library's C interface (ktune/kernels.h) through ctypes: loading libktune_kernels,
one Context per device, and the library's error codes as Python exceptions.

The library is found, in order, at $KTUNE_LIBRARY (a path to libktune_kernels.so), inside this
package (where `pip install` put it), then wherever the dynamic loader finds it (an installed
CMake package). Nothing here imports torch: ktune.ops and ktune.nn add PyTorch on top.
"""
import ctypes
import ctypes.util
import json
import os
import threading

_KTUNE_OK = 0


class KtuneError(RuntimeError):
    """A call into the kernel library failed; the message names the argument or the cause."""


class BadArgument(KtuneError, ValueError):
    """An unknown family, tensor, dim or precision, a missing buffer or a malformed config (2)."""


class NoDevice(KtuneError):
    """The backend asked for is not built into the library or has no device (3)."""


class Unsupported(KtuneError):
    """A shape, precision, backend or config the family cannot run (4)."""


class BackendFailure(KtuneError):
    """The driver failed: out of memory, a lost device, ... (5)."""


_ERRORS = {2: BadArgument, 3: NoDevice, 4: Unsupported, 5: BackendFailure}


class _Tensor(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_void_p)]


class _Dim(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_int64)]


def _candidates():
    if os.environ.get("KTUNE_LIBRARY"):
        yield os.environ["KTUNE_LIBRARY"]
        return
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib")
    if os.path.isdir(here):
        for name in sorted(os.listdir(here)):
            if name.startswith("libktune_kernels.so"):
                yield os.path.join(here, name)
    found = ctypes.util.find_library("ktune_kernels")
    if found:
        yield found


def _declare(lib):
    c_ctx = ctypes.c_void_p
    signatures = {
        "ktune_context_create": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(c_ctx)]),
        "ktune_context_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(c_ctx)]),
        "ktune_context_destroy": (None, [c_ctx]),
        "ktune_context_backend": (ctypes.c_char_p, [c_ctx]),
        "ktune_context_device": (ctypes.c_char_p, [c_ctx]),
        "ktune_synchronize": (ctypes.c_int, [c_ctx]),
        "ktune_tensor_bytes": (ctypes.c_int, [c_ctx, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_Dim),
                                              ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t)]),
        "ktune_run": (ctypes.c_int, [c_ctx, ctypes.c_char_p, ctypes.POINTER(_Tensor), ctypes.c_size_t,
                                     ctypes.POINTER(_Dim), ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p]),
        "ktune_choose": (ctypes.c_int, [c_ctx, ctypes.c_char_p, ctypes.POINTER(_Dim), ctypes.c_size_t,
                                        ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]),
        "ktune_use_config": (ctypes.c_int, [c_ctx, ctypes.c_char_p, ctypes.POINTER(_Dim), ctypes.c_size_t,
                                            ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]),
        "ktune_families_json": (ctypes.c_int, [ctypes.POINTER(ctypes.c_char_p)]),
        "ktune_stages_json": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_Dim), ctypes.c_size_t, ctypes.c_char_p,
                                             ctypes.POINTER(ctypes.c_char_p)]),
        "ktune_last_error": (ctypes.c_char_p, []),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


_lib = None
_lib_lock = threading.Lock()


def library():
    """The loaded libktune_kernels (ctypes.CDLL); NoDevice naming the places tried if none."""
    global _lib
    with _lib_lock:
        if _lib is None:
            tried = []
            for path in _candidates():
                try:
                    _lib = _declare(ctypes.CDLL(path))
                    break
                except (OSError, AttributeError) as e:
                    tried.append(f"{path}: {e}")
            if _lib is None:
                raise NoDevice("ktune: libktune_kernels was not found (" + ("; ".join(tried) or "set KTUNE_LIBRARY to "
                               "its path, or pip install the package from the repository's python/ folder") + ")")
        return _lib


def library_path():
    """Where the loaded library came from."""
    lib = library()
    return lib._name


def _check(status):
    if status != _KTUNE_OK:
        message = library().ktune_last_error().decode(errors="replace")
        raise _ERRORS.get(status, KtuneError)(message)


def _dims(dims):
    items = list(dims.items())
    array = (_Dim * max(len(items), 1))(*[_Dim(name.encode(), int(value)) for name, value in items])
    return array, len(items)


def families():
    """Every family of the library: name, summary, tensors, dims, precisions and backends."""
    out = ctypes.c_char_p()
    _check(library().ktune_families_json(ctypes.byref(out)))
    return json.loads(out.value.decode())


def stages(family, dims, precision):
    """The stages a call of a composed family (attention_block) at these dims runs: [{"family", "dims"}],
    empty for a family with kernels of its own."""
    out = ctypes.c_char_p()
    dim_array, dim_count = _dims(dims)
    _check(library().ktune_stages_json(family.encode(), dim_array, dim_count, precision.encode(), ctypes.byref(out)))
    return json.loads(out.value.decode())


class Context:
    """One device of one backend ("cuda", "hip", "vulkan", "cpu"; None: the first with a device)."""

    def __init__(self, backend=None, device=0):
        lib = library()
        handle = ctypes.c_void_p()
        if backend is None and device == 0:
            _check(lib.ktune_context_create(None, ctypes.byref(handle)))
        elif backend is None:
            raise BadArgument(f"ktune.Context: device={device} needs a backend")
        else:
            _check(lib.ktune_context_open(backend.encode(), int(device), ctypes.byref(handle)))
        self._handle = handle
        self._lib = lib
        self.index = int(device)
        self.backend = lib.ktune_context_backend(handle).decode()
        self.device = lib.ktune_context_device(handle).decode()

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            self._lib.ktune_context_destroy(handle)
            self._handle = None

    def __repr__(self):
        return f"ktune.Context(backend={self.backend!r}, device={self.device!r})"

    def run(self, family, tensors, dims, precision, stream=None):
        """Runs `family` on named device pointers (ints), named dims and a precision."""
        items = list(tensors.items())
        named = (_Tensor * len(items))(*[_Tensor(name.encode(), ctypes.c_void_p(int(ptr))) for name, ptr in items])
        dim_array, dim_count = _dims(dims)
        _check(self._lib.ktune_run(self._handle, family.encode(), named, len(items), dim_array, dim_count,
                                   precision.encode(), ctypes.c_void_p(stream) if stream else None))

    def tensor_bytes(self, family, tensor, dims, precision):
        out = ctypes.c_size_t()
        dim_array, dim_count = _dims(dims)
        _check(self._lib.ktune_tensor_bytes(self._handle, family.encode(), tensor.encode(), dim_array, dim_count,
                                            precision.encode(), ctypes.byref(out)))
        return out.value

    def choose(self, family, dims, precision):
        """The config run() takes here: {"source", "level", "config", "description", ...}."""
        out = ctypes.c_char_p()
        dim_array, dim_count = _dims(dims)
        _check(self._lib.ktune_choose(self._handle, family.encode(), dim_array, dim_count, precision.encode(),
                                      ctypes.byref(out)))
        return json.loads(out.value.decode())

    def use_config(self, family, dims, precision, config):
        """Runs `config` (a dict of the family's parameters) for these dims and precision from now on."""
        out = ctypes.c_char_p()
        dim_array, dim_count = _dims(dims)
        _check(self._lib.ktune_use_config(self._handle, family.encode(), dim_array, dim_count, precision.encode(),
                                          json.dumps(config).encode(), ctypes.byref(out)))
        return json.loads(out.value.decode())

    def synchronize(self):
        _check(self._lib.ktune_synchronize(self._handle))


_shared = {}
_shared_lock = threading.Lock()


def shared_context(backend, device=0):
    """The process's one Context for this backend and device (made on first use): what ktune's
    ops and tuning use, so each device's chosen configs live in one place."""
    key = (backend, int(device))
    with _shared_lock:
        if key not in _shared:
            _shared[key] = Context(backend, device)
        return _shared[key]
