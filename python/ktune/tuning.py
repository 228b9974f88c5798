"""Tuning from Python, into the user's own results database.

- `ktune.tune(...)` runs the `ktune tune` command for shapes a model uses (given, or recorded with
  `ktune.recording()`), into a database; the calls of this process then run the tuned configs.
- `ktune.use_database(path)` makes calls run what a database already holds for this device,
  shape and precision (nothing is tuned).
- `ktune.autotune(db=...)` (or KTUNE_AUTOTUNE=1 with KTUNE_DB) also tunes on first use, as
  Triton's autotuner does: the first call of a shape that the database lacks tunes it for
  `seconds`, then runs the winner; the result stays in the database, so later processes start
  tuned. Tune before capturing CUDA graphs: a first use inside a capture would launch the tuner.

- `ktune.refine(fn, db=...)` picks, for each call `fn` makes, among the database's fastest
  verified configs of that call, the one with which the whole of `fn` runs fastest. A tune times
  each kernel alone; in a model the calls share the L2 cache and, on a card at its power limit,
  the clock, so the fastest config alone is not always the fastest in place.

A shape the database lacks runs what the library's compiled tables choose. The `ktune` command
is found at $KTUNE_BIN, else on PATH.
"""
import contextlib
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import threading
import time
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


def _fastest_configs(db, device, backend, family, dims, precision, count):
    """The `count` fastest distinct configs the database verified for this call on this device
    (by name, as _lookup matches), fastest first."""
    full = _full_dims(family, dims)
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
        rows = connection.execute(
            "select p.dims, m.config, min(m.median_ns) as best from measurements m "
            "join problems p on p.id = m.problem_id join devices d on d.id = m.device_id "
            "join kernels k on k.id = m.kernel_id "
            "where m.outcome = 'ok' and m.median_ns is not null and k.family = ? and k.backend = ? "
            "and d.name = ? and p.precision = ? group by p.dims, m.config_key order by best",
            (family, backend, device, precision)).fetchall()
    configs = []
    for dims_json, config, _ in rows:
        if dict(json.loads(dims_json)) == full and config not in configs:
            configs.append(config)
    return [json.loads(c) for c in configs[:count]]


def _timer(device_type):
    """A function that runs fn once and returns its seconds: CUDA (or ROCm) events around it on
    a GPU, the wall clock on the CPU."""
    import torch
    if device_type == "cpu":
        def wall(fn):
            start = time.perf_counter()
            fn()
            return time.perf_counter() - start
        return wall
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def events(fn):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / 1e3
    return events


def refine(fn, *, db=None, top=3, samples=10, families=None, save=None):
    """For each library call `fn()` makes (in `families`, default all), tries the `top` fastest
    configs `db` (default: the database in use) verified for it on this device, running the whole
    of `fn` with each, and keeps the one with the lowest median time: this process runs it from
    then on. The candidates' samples are interleaved (one run of each in turn, the order
    rotating), so a clock that drifts favours none; calls are refined one after the other, each
    with the choices already made for the calls before it. `fn` takes no arguments and must be
    safe to run again (no growing state). Returns one dict per call refined: {"call",
    "candidates": [{"config", "median_s"}, ...], "chosen"}; a call with fewer than two candidates
    keeps what it runs and is left out. With save=PATH the choices are also written to that JSON
    file (added to what it holds for other devices and calls), for ktune.use_choices(PATH) in a
    later process."""
    import torch
    db = os.path.abspath(os.path.expanduser(db)) if db else _settings["db"]
    if not db or not os.path.exists(db):
        raise _native.BadArgument(f"ktune.refine: no results database to take configs from ({db or 'none set'}); "
                                  "give db=PATH or call ktune.use_database first")
    if int(top) < 1 or int(samples) < 1:
        raise _native.BadArgument(f"ktune.refine: top ({top}) and samples ({samples}) must be at least 1")
    with recording() as recorded, torch.no_grad():
        fn()
    calls = []  # a composed call (attention_block) is refined through its stages, each its own call
    for call in recorded:
        stages = _native.stages(call["family"], call["dims"], call["precision"])
        calls += [dict(call, family=s["family"], dims=s["dims"]) for s in stages] if stages else [call]
    refined = []
    for call in calls:
        if families is not None and call["family"] not in families:
            continue
        context = _native.shared_context(call["backend"], call.get("device", 0))
        candidates = _fastest_configs(db, context.device, call["backend"], call["family"], call["dims"],
                                      call["precision"], int(top))
        if len(candidates) < 2:
            continue
        timer = _timer("cpu" if call["backend"] == "cpu" else "cuda")
        times = [[] for _ in candidates]
        with torch.no_grad():
            for config in candidates:  # first runs: compiles and loads each config before any is timed
                context.use_config(call["family"], call["dims"], call["precision"], config)
                fn()
            order = list(range(len(candidates)))
            for sample in range(int(samples)):
                turn = sample % len(order)
                for i in order[turn:] + order[:turn]:  # each candidate once, the first rotating
                    context.use_config(call["family"], call["dims"], call["precision"], candidates[i])
                    times[i].append(timer(fn))
        medians = [statistics.median(t) for t in times]
        best = min(range(len(candidates)), key=medians.__getitem__)
        _keep_config(context, call["family"], call["dims"], call["precision"], candidates[best])
        refined.append({"call": call, "chosen": candidates[best], "device": context.device,
                        "candidates": [{"config": c, "median_s": m} for c, m in zip(candidates, medians)]})
    if save:
        _save_choices(save, refined)
    return refined


def _keep_config(context, family, dims, precision, config):
    """Runs `config` for this call from now on, resolved: a database in use does not replace it
    at the call's first use. Returns the library's choice."""
    chosen = context.use_config(family, dims, precision, config)
    with _lock:
        _resolved[_key(context, family, dims, precision)] = chosen
    return chosen


def _choice_key(choice):
    return (choice["backend"], choice["device"], choice["family"], json.dumps(choice["dims"], sort_keys=True),
            choice["precision"])


def _save_choices(path, refined):
    path = os.path.abspath(os.path.expanduser(path))
    kept = {}
    if os.path.exists(path):
        for choice in _read_choices(path):
            kept[_choice_key(choice)] = choice
    for entry in refined:
        call = entry["call"]
        choice = {"backend": call["backend"], "device": entry["device"], "family": call["family"],
                  "dims": dict(call["dims"]), "precision": call["precision"],
                  "config": entry["chosen"]}
        kept[_choice_key(choice)] = choice
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        json.dump({"ktune_choices": 1, "choices": list(kept.values())}, f, indent=1)
    os.replace(temporary, path)  # a crash leaves the old file whole


def _read_choices(path):
    try:
        with open(path) as f:
            document = json.load(f)
        choices = document["choices"]
        for choice in choices:
            for field in ("backend", "device", "family", "dims", "precision", "config"):
                if field not in choice:
                    raise KeyError(field)
        return choices
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise _native.BadArgument(f"ktune: {path} is not a file of choices that ktune.refine(save=...) wrote: "
                                  f"{type(e).__name__}: {e}") from e


def use_choices(path, backend=None, device=0):
    """Runs the configs ktune.refine(save=PATH) kept, in this process, for each call whose device
    (by name) is this machine's: they take precedence over a database's. Returns the library's
    choices for the calls applied."""
    applied = []
    for choice in _read_choices(os.path.abspath(os.path.expanduser(path))):
        if backend is not None and choice["backend"] != backend:
            continue
        try:
            context = _native.shared_context(choice["backend"], device)
        except _native.KtuneError:
            continue  # a backend or device this machine lacks
        if context.device != choice["device"]:
            continue
        applied.append(_keep_config(context, choice["family"], choice["dims"], choice["precision"], choice["config"]))
    return applied
