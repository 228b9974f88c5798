"""Tuning from Python, into the user's own results database.

- `ktune.tune(...)` runs the `ktune tune` command for shapes a model uses (given, or recorded with
  `ktune.recording()`), into a database; the calls of this process then run the tuned configs.
- `ktune.use_database(path)` makes calls run what a database already holds for this device,
  shape and precision (nothing is tuned).
- `ktune.autotune(db=...)` (or KTUNE_AUTOTUNE=1 with KTUNE_DB) also tunes on first use, as
  Triton's autotuner does: the first call of a shape that the database lacks tunes it for
  `seconds`, then runs the winner; the result stays in the database, so later processes start
  tuned. Tune before capturing CUDA graphs: a first use inside a capture would launch the tuner.

A shape the database lacks runs what the library's compiled tables choose. The `ktune` command
is found at $KTUNE_BIN, else on PATH.
"""
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import warnings

from . import _native

_lock = threading.RLock()
_settings = {
    "db": os.environ.get("KTUNE_DB") or None,
    "autotune": os.environ.get("KTUNE_AUTOTUNE", "0") == "1",
    "seconds": float(os.environ.get("KTUNE_AUTOTUNE_SECONDS", "10")),
}
_resolved = {}  # (context id, family, dims, precision) -> the choice made, or None
_exports = {}  # (db, backend, family) -> (db's mtime, entries)
_recorders = []


class TuneFailed(_native.KtuneError):
    """`ktune tune` failed or could not be started; the message holds its output."""


def use_database(path):
    """Calls run the configs `path` (a ktune results database) holds for their device and shape."""
    with _lock:
        _settings["db"] = os.path.abspath(os.path.expanduser(path)) if path else None
        _resolved.clear()


def autotune(enabled=True, db=None, seconds=None):
    """Tune on first use: a call whose shape `db` lacks tunes it (for `seconds`) before it runs."""
    with _lock:
        if db is not None:
            use_database(db)
        if enabled and not _settings["db"]:
            raise _native.BadArgument("ktune.autotune: give db=PATH, the database the results go to")
        _settings["autotune"] = bool(enabled)
        if seconds is not None:
            _settings["seconds"] = float(seconds)
        _resolved.clear()


def settings():
    """The database, whether tuning on first use is on, and its seconds per shape."""
    return dict(_settings)


@contextlib.contextmanager
def recording():
    """Collects the calls made inside the block: [{"family", "backend", "dims", "precision"}, ...],
    each (family, dims, precision, backend) once; hand the list to ktune.tune()."""
    calls = []
    with _lock:
        _recorders.append(calls)
    try:
        yield calls
    finally:
        with _lock:
            _recorders.remove(calls)


def record(context, family, dims, precision):
    if not _recorders:
        return
    call = {"family": family, "backend": context.backend, "device": context.index, "dims": dict(dims),
            "precision": precision}
    with _lock:
        for calls in _recorders:
            if call not in calls:
                calls.append(call)


def _binary():
    path = os.environ.get("KTUNE_BIN") or shutil.which("ktune")
    if not path:
        raise TuneFailed("ktune: tuning needs the `ktune` command: put it on PATH or set KTUNE_BIN "
                         "(it is built with the repository: cmake --preset release && cmake --build --preset release)")
    return path


def _shape_text(dims):
    return ",".join(f"{name}={value}" for name, value in dims.items())


def _full_dims(family, dims):
    """The dims with the family's option dims (those left out of a call) at their defaults."""
    for info in _native.families():
        if info["name"] == family:
            full = {d["name"]: d["default"] for d in info["dims"]}
            full.update(dims)
            return full
    return dict(dims)


def tune(calls=None, *, family=None, dims=None, precision="bf16", backend="cuda", device=0, db=None, seconds=30.0,
         extra_args=()):
    """Tunes each call (from recording(), or the one given by family/dims/precision/backend) with
    `ktune tune` into `db` (default: the database set by use_database/autotune), then makes this
    process run the winners. Returns the choices, one dict per call (see Context.choose)."""
    if calls is None:
        if family is None or dims is None:
            raise _native.BadArgument("ktune.tune: give calls (from ktune.recording()) or family= and dims=")
        calls = [{"family": family, "backend": backend, "device": device, "dims": dict(dims), "precision": precision}]
    db = os.path.abspath(os.path.expanduser(db)) if db else _settings["db"]
    if not db:
        raise _native.BadArgument("ktune.tune: give db=PATH, the database the results go to")
    choices = []
    for call in calls:
        _run_tuner(call, db, seconds, extra_args)
        with _lock:
            if _settings["db"] != db:
                use_database(db)
        context = _native.shared_context(call["backend"], call.get("device", 0))
        _resolved.pop(_key(context, call["family"], call["dims"], call["precision"]), None)
        for stage in _native.stages(call["family"], call["dims"], call["precision"]):  # a composed call's
            _resolved.pop(_key(context, stage["family"], stage["dims"], call["precision"]), None)
        choices.append(resolve(context, call["family"], call["dims"], call["precision"], tune_missing=False))
    return choices


def _run_tuner(call, db, seconds, extra_args=()):
    command = [_binary(), "tune", "-k", call["family"], "-b", call["backend"], "--shape", _shape_text(call["dims"]),
               "--precision", call["precision"], "--db", db, "--time-limit", f"{seconds:g}", "--no-export",
               *(["--devices", str(call["device"])] if call["backend"] in ("cuda", "hip") else []), *extra_args]
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        raise TuneFailed(f"ktune: could not start {' '.join(command)}: {e}") from e
    if result.returncode != 0:
        raise TuneFailed(f"ktune: {' '.join(command)} exited {result.returncode}:\n{result.stderr[-4000:]}")


def _entries(db, backend, family):
    """The tuned entries of `family` on `backend` in `db`, as `ktune export` writes them."""
    if not os.path.exists(db):
        return []
    mtime = os.stat(db).st_mtime_ns
    cached = _exports.get((db, backend, family))
    if cached and cached[0] == mtime:
        return cached[1]
    with tempfile.TemporaryDirectory(prefix="ktune-export-") as out:
        command = [_binary(), "export", "-k", family, "-b", backend, "--db", db, "--out", out]
        result = subprocess.run(command, capture_output=True, text=True)
        path = os.path.join(out, backend, family + ".json")
        if result.returncode == 2 or not os.path.exists(path):
            entries = []  # the database holds nothing of this family and backend yet
        elif result.returncode != 0:
            raise TuneFailed(f"ktune: {' '.join(command)} exited {result.returncode}:\n{result.stderr[-4000:]}")
        else:
            with open(path) as f:
                entries = json.load(f)["entries"]
    _exports[(db, backend, family)] = (mtime, entries)
    return entries


def _key(context, family, dims, precision):
    return (id(context), family, tuple(sorted(dims.items())), precision)


def _lookup(context, family, dims, precision):
    full = _full_dims(family, dims)
    for entry in _entries(_settings["db"], context.backend, family):
        if (entry["device"]["name"] == context.device and entry["precision"] == precision
                and entry["shape"] == full):
            return entry["config"]
    return None


def resolve(context, family, dims, precision, tune_missing=True):
    """Before a call: with a database set, the config it holds for this device, shape and
    precision is handed to the library (tuned first when autotune is on and it has none). Each
    (context, family, shape, precision) is resolved once, successful or not: a config this
    library cannot run (on CUDA and HIP one it does not carry is compiled on first use, unless
    KTUNE_LIBRARY_COMPILE=0 or the machine lacks NVRTC/hiprtc), a failed tune or a missing `ktune`
    warns once and leaves the library's own choice. A composed family's stages are resolved instead, each as its own call.
    Returns the library's choice, or None."""
    if not _settings["db"]:
        return None
    key = _key(context, family, dims, precision)
    if key in _resolved:  # the common case, without the lock
        return _resolved[key]
    stages = _native.stages(family, dims, precision)
    if stages:  # a composed family (attention_block): each stage resolved (and tuned) as its own call
        for stage in stages:
            resolve(context, stage["family"], stage["dims"], precision, tune_missing)
        _resolved[key] = None
        return None
    with _lock:
        if key in _resolved:
            return _resolved[key]
        choice = None
        try:
            config = _lookup(context, family, dims, precision)
            if config is None and tune_missing and _settings["autotune"]:
                _run_tuner({"family": family, "backend": context.backend, "device": context.index,
                            "dims": dict(dims), "precision": precision}, _settings["db"], _settings["seconds"])
                config = _lookup(context, family, dims, precision)
            if config is not None:
                choice = context.use_config(family, dims, precision, config)
        except _native.KtuneError as e:
            warnings.warn(f"ktune: {family} {dict(dims)} {precision} on {context.device}: {e}; running the "
                          "library's own choice", stacklevel=4)
        _resolved[key] = choice
        return choice
