"""ci/gpu-check kernel_tuner [SECONDS]: ktune side by side with Kernel Tuner 1.5 on the T1 specs of
examples/t1-kernels (or the kernels named in KTUNE_KT_SPECS, space-separated), SECONDS (or
KTUNE_KT_SECONDS, default 60) of wall-clock tuning per tool and kernel. For each kernel:

  a. Kernel Tuner: the spec converted as kernel_tuner.interface.tune_kernel_T1 converts it, but
     tune_kernel called directly on its CuPy backend (lang="cupy"), random_sample over the whole
     space (fraction 1.0) with time_limit SECONDS, 7 iterations, in a subprocess with a watchdog
     of SECONDS + 120 s. The inputs are generated once with numpy (seeded, float32) and written to
     .bin files that both tools read.
  b. ktune: `ktune tune --t1` on a derived spec whose inputs are those .bin files (BinaryRaw),
     --strategy random, stopped with SIGINT after SECONDS of wall clock (it finishes the config in
     flight and prints its JSON).
  c. Same geometry: every ktune measurement's launch (environment["launch"], up to 200) against
     Kernel Tuner's own get_grid_dimensions / get_thread_block_dimensions for that config.
  d. Same output: Kernel Tuner's output for its best config (run_kernel), checked by ktune
     running that config with the output as the spec's ReferenceArguments.
  e. Both winners re-timed by one timer: Kernel Tuner's (brute_force over one config,
     32 iterations), 3 repetitions in alternating order.
  f. Configs per minute of both tools.

Writes kernel-tuner.log, kernel-tuner-table.md and kernel-tuner.json to the output after every
kernel (so a device call that runs out of time still brings back the kernels done), and stops
starting kernels when fewer than 2 * SECONDS + 60 s remain of KTUNE_KT_BUDGET (default 560 s of
wall time). Six kernels take about 14 minutes: run them as two calls of three, e.g.
KTUNE_KT_SPECS="vec_fma gelu_tpl conv2d_cmem" and KTUNE_KT_SPECS="axpy_inplace matmul_smem
transpose_smem"; `python3 -m ci.gpu.phase_kernel_tuner table A.json B.json` merges their tables.

Kernel Tuner and what it needs beyond the machine's numpy, scipy, pandas and cupy come from the
wheels of ci/gpu/kernel_tuner_wheels.txt: installed by the caller on PYTHONPATH, or else from
KTUNE_KT_WHEELS (default .whl/ of the repository) into the work folder.

`python3 -m ci.gpu.phase_kernel_tuner worker JOB.json` is the Kernel Tuner side of one step (a
subprocess of the phase); standard library only at import time: numpy and Kernel Tuner are imported
where they are used."""
import datetime
import glob
import itertools
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import time

from . import ktune
from .context import Log

SPEC_DIR = os.path.join("examples", "t1-kernels")
DEFAULT_SECONDS = 60
ITERATIONS = 7
RETIME_ITERATIONS = 32
RETIME_REPEATS = 3
WATCHDOG_EXTRA = 120  # seconds a Kernel Tuner step may run past its time limit before it is killed
GEOMETRY_SAMPLE = 200
SEED = 20240611
BLOCK_SIZE_NAMES = ["block_size_x", "block_size_y", "block_size_z"]
OUTPUTS = ("kernel-tuner.log", "kernel-tuner-table.md", "kernel-tuner.json")


# ---------------------------------------------------------------- the spec, as Kernel Tuner reads it

def spec_names(root, environ):
    """The kernels to compare: KTUNE_KT_SPECS, else every examples/t1-kernels/<name>/<name>_T1.json."""
    chosen = environ.get("KTUNE_KT_SPECS", "").split()
    if chosen:
        return chosen
    found = glob.glob(os.path.join(root, SPEC_DIR, "*", "*_T1.json"))
    return sorted(os.path.basename(os.path.dirname(p)) for p in found
                  if os.path.basename(p) == os.path.basename(os.path.dirname(p)) + "_T1.json")


def spec_path(root, name):
    return os.path.join(root, SPEC_DIR, name, f"{name}_T1.json")


def load_spec(path):
    with open(path) as f:
        return json.load(f)


def _eval(text, names=None):
    """A Python expression of a spec (Values, Size, GridDiv), evaluated as Kernel Tuner evaluates it."""
    scope = {"__builtins__": {"range": range, "list": list, "max": max, "min": min, "int": int,
                              "len": len, "sum": sum, "abs": abs}}
    scope.update(names or {})
    return eval(text, scope)  # the specs are the repository's own


def tune_params(spec):
    """{name: [values]}: each parameter's Values string evaluated (tune_kernel_T1's conversion)."""
    params = {}
    for p in spec["ConfigurationSpace"]["TuningParameters"]:
        values = p["Values"]
        params[p["Name"]] = list(_eval(values)) if isinstance(values, str) else list(values)
    return params


def default_config(spec):
    return {p["Name"]: p["Default"] for p in spec["ConfigurationSpace"]["TuningParameters"]}


def restrictions(spec):
    return [c["Expression"] for c in spec["ConfigurationSpace"].get("Conditions", [])]


def valid_configs(spec):
    """Every config of the space that meets the Conditions (Kernel Tuner also drops blocks of more
    than 1024 threads, which the specs' own conditions already exclude)."""
    params = tune_params(spec)
    names = list(params)
    rules = restrictions(spec)
    out = []
    for values in itertools.product(*params.values()):
        config = dict(zip(names, values))
        if all(_eval(r, config) for r in rules):
            out.append(config)
    return out


def grid_divs(spec):
    """(GridDivX, GridDivY, GridDivZ), None for a missing or empty one (tune_kernel_T1's rule)."""
    ks = spec["KernelSpecification"]
    return tuple(ks[k] if k in ks and ks[k] else None for k in ("GridDivX", "GridDivY", "GridDivZ"))


def problem_size(spec):
    return list(spec["KernelSpecification"]["ProblemSize"])


def kernel_file(path, spec):
    """The KernelFile, found as tune_kernel_T1 finds it: as given, then beside the spec, then one up."""
    given = spec["KernelSpecification"]["KernelFile"]
    here = os.path.dirname(os.path.abspath(path))
    for candidate in (given, os.path.join(here, given), os.path.join(os.path.dirname(here), given)):
        if os.path.exists(candidate):
            return os.path.abspath(candidate)
    raise FileNotFoundError(f"{path}: KernelFile {given} not found")


def vector_size(argument, params, sizes):
    """A Vector's element count: tune_kernel_T1's eval of Size with the parameter lists and ProblemSize."""
    size = argument["Size"]
    if isinstance(size, str):
        scope = dict(params)
        scope["ProblemSize"] = sizes
        size = int(_eval(size, scope))
    return int(size)


def is_output(argument):
    return argument.get("AccessType") in ("WriteOnly", "ReadWrite") or argument.get("Output") in (1, True)


def is_input(argument):
    """A vector whose initial contents the kernel reads (so both tools get the same .bin file)."""
    return argument["MemoryType"] == "Vector" and argument.get("AccessType", "ReadOnly") != "WriteOnly"


def block_of(params):
    """Kernel Tuner's util.get_thread_block_dimensions: block_size_x/y/z, default 256, 1, 1."""
    return tuple(int(params.get(name, default)) for name, default in zip(BLOCK_SIZE_NAMES, (256, 1, 1)))


def grid_of(spec, params):
    """Kernel Tuner's util.get_grid_dimensions for a spec (pure Python, for the plan; the phase
    compares with Kernel Tuner's own functions)."""
    sizes = problem_size(spec) + [1] * (3 - len(problem_size(spec)))
    grid = []
    for axis, div in enumerate(grid_divs(spec)):
        if div is None:
            divisor = int(params.get(BLOCK_SIZE_NAMES[axis], 1))
        else:
            divisor = 1
            for term in div:
                divisor *= int(_eval(term, params)) if isinstance(term, str) else int(term)
        grid.append(int(math.ceil(float(sizes[axis]) / float(divisor))))
    return tuple(grid)


# ---------------------------------------------------------------- the shared inputs and the derived specs

def make_inputs(spec, folder, seed=SEED):
    """Writes each input vector once (numpy, seeded, float32, raw little-endian) to FOLDER/<name>.bin
    and returns {argument name: path}. Random fills are uniform in [-FillValue, FillValue]."""
    import numpy as np
    params = tune_params(spec)
    sizes = problem_size(spec)
    files = {}
    for index, argument in enumerate(spec["KernelSpecification"]["Arguments"]):
        if not is_input(argument):
            continue
        count = vector_size(argument, params, sizes)
        value = float(argument.get("FillValue", 1.0))
        if argument.get("FillType", "Constant") == "Random":
            rng = np.random.default_rng(seed + index)
            data = rng.uniform(-abs(value) if value else -1.0, abs(value) if value else 1.0, count).astype("<f4")
        else:
            data = np.full(count, value, dtype="<f4")
        path = os.path.join(folder, f"{argument['Name']}.bin")
        data.tofile(path)
        files[argument["Name"]] = path
    return files


def derived_spec(spec, path, files, config=None, references=None):
    """A copy of the spec for ktune: KernelFile absolute, every input vector read from its .bin
    (BinaryRaw); with `config`, each parameter has only that value; with `references` ({output name:
    .bin}), ReferenceArguments that check every output against those files."""
    out = json.loads(json.dumps(spec))
    ks = out["KernelSpecification"]
    ks["KernelFile"] = kernel_file(path, spec)
    for argument in ks["Arguments"]:
        if argument.get("Name") in files and is_input(argument):
            argument["FillType"] = "BinaryRaw"
            argument["DataSource"] = os.path.abspath(files[argument["Name"]])
            argument.pop("FillValue", None)
            argument.pop("RandomSeed", None)
    if config is not None:
        for p in out["ConfigurationSpace"]["TuningParameters"]:
            p["Values"] = f"[{config[p['Name']]}]"
            p["Default"] = config[p["Name"]]
    if references:
        ks["ReferenceArguments"] = [{"Name": f"ref_{name}", "TargetName": name, "FillType": "BinaryRaw",
                                     "DataSource": os.path.abspath(file)} for name, file in references.items()]
    return out


def argument_plan(spec, files):
    """What the Kernel Tuner worker builds its argument list from: per argument a vector (a .bin
    file, or a size and fill value) or a scalar; and which are __constant__ (cmem_args)."""
    params = tune_params(spec)
    sizes = problem_size(spec)
    plan = []
    for argument in spec["KernelSpecification"]["Arguments"]:
        entry = {"name": argument.get("Name", ""), "memory": argument["MemoryType"], "type": argument["Type"],
                 "constant": argument.get("MemType") == "Constant", "output": is_output(argument)}
        if argument["MemoryType"] == "Vector":
            entry["size"] = vector_size(argument, params, sizes)
            entry["file"] = files.get(argument.get("Name")) if is_input(argument) else None
            entry["fill"] = float(argument.get("FillValue", 0.0))
        else:
            entry["value"] = argument["FillValue"]
        plan.append(entry)
    return plan


def kt_call(spec, path):
    """The keyword arguments of Kernel Tuner's tune_kernel / run_kernel for this spec (JSON-able)."""
    ks = spec["KernelSpecification"]
    gx, gy, gz = grid_divs(spec)
    return {"kernel_name": ks["KernelName"], "kernel_source": kernel_file(path, spec),
            "problem_size": problem_size(spec), "grid_div_x": gx, "grid_div_y": gy, "grid_div_z": gz,
            "restrictions": restrictions(spec), "compiler_options": ks.get("CompilerOptions") or None,
            "lang": "cupy", "device": 0}


def same_values(config, params):
    """`config` with each value replaced by the equal value of the space (a float 4.0 becomes 4)."""
    out = {}
    for name, values in params.items():
        value = config[name]
        out[name] = next((v for v in values if v == value), value)
    return out


# ---------------------------------------------------------------- the table

def _ms(value):
    return f"{value:.4f}" if isinstance(value, (int, float)) else "-"


def _ratio(a, b):
    return f"{a / b:.2f}" if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else "-"


def table(records, meta):
    """The Markdown table of the per-kernel records, with how they were made."""
    lines = [f"# ktune vs Kernel Tuner {meta.get('kernel_tuner_version', '?')}", "",
             f"- date: {meta.get('date', '?')}",
             f"- GPU: {meta.get('gpu', '?')}",
             f"- Kernel Tuner: {meta.get('kernel_tuner_version', '?')} (CuPy backend, cupy {meta.get('cupy_version', '?')})",
             f"- ktune: {meta.get('ktune_version', '?')}",
             f"- tuning time per tool and kernel: {meta.get('seconds', '?')} s of wall clock", ""]
    lines += ["| kernel | valid configs | KT configs/min | ktune configs/min | ktune/KT | KT best ms (KT timer) | "
              "ktune best ms (ktune timer) | KT winner re-timed ms | ktune winner re-timed ms | KT/ktune winner | "
              "geometry matches | output match |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in records:
        kt, kn = r.get("kt") or {}, r.get("ktune") or {}
        retime, geometry, output = r.get("retime") or {}, r.get("geometry") or {}, r.get("output") or {}
        geo = f"{geometry['matches']}/{geometry['compared']}" if "compared" in geometry else "-"
        match = output.get("match", "-")
        lines.append(
            f"| {r['kernel']} | {r.get('valid_configs', '-')} | {_num(kt.get('configs_per_min'))} | "
            f"{_num(kn.get('configs_per_min'))} | {_ratio(kn.get('configs_per_min'), kt.get('configs_per_min'))} | "
            f"{_ms(kt.get('best_ms'))} | {_ms(kn.get('best_ms'))} | {_ms(retime.get('kt_winner_ms'))} | "
            f"{_ms(retime.get('ktune_winner_ms'))} | {_ratio(retime.get('kt_winner_ms'), retime.get('ktune_winner_ms'))} | "
            f"{geo} | {match} |")
    lines += ["", "Columns: configs/min = distinct configs evaluated (ok or failed) per minute of each tool's wall "
              "clock (Kernel Tuner: its tune_kernel call, whose time_limit counts its own start-up; ktune: the whole "
              "command, stopped with SIGINT at the limit, plus the config it then finishes); best ms = each tool's own measurement of its winner (Kernel Tuner: mean of "
              f"{ITERATIONS} iterations; ktune: median of its samples); re-timed = both winners timed by Kernel "
              f"Tuner ({RETIME_ITERATIONS} iterations, median of {RETIME_REPEATS} repetitions in alternating order); "
              "KT/ktune winner >= 1.00 means ktune's winner is as fast or faster; geometry = ktune launches "
              "(grid, block) equal to Kernel Tuner's for the same config, of those compared; output match = "
              "ktune's run of Kernel Tuner's best config equals Kernel Tuner's output (numpy.allclose).", ""]
    notes = [f"- {r['kernel']}: {note}" for r in records for note in r.get("notes", [])]
    if notes:
        lines += ["Notes:", ""] + notes + [""]
    lines += ["Commands:", "", "```"] + meta.get("commands", []) + ["```", ""]
    return "\n".join(lines)


def _num(value):
    return f"{value:.1f}" if isinstance(value, (int, float)) else "-"


# ---------------------------------------------------------------- Kernel Tuner, in a subprocess

def _kt_arguments(plan):
    import numpy as np
    arguments, cmem = [], {}
    for entry in plan:
        if entry["memory"] == "Vector":
            if entry.get("file"):
                value = np.fromfile(entry["file"], dtype="<f4", count=entry["size"]).astype(np.float32)
            else:
                value = np.full(entry["size"], entry.get("fill", 0.0), dtype=np.float32)
            if entry["constant"]:
                cmem[entry["name"]] = value
        else:
            value = np.float32(entry["value"]) if entry["type"] == "float" else np.int32(entry["value"])
        arguments.append(value)
    return arguments, cmem


def _numeric(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _worker_tune(job, kernel_tuner):
    """Kernel Tuner's own tune: random_sample over the whole space with a time limit."""
    from pathlib import Path
    call = job["call"]
    arguments, cmem = _kt_arguments(job["arguments"])
    started = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        call["kernel_name"], Path(call["kernel_source"]), call["problem_size"], arguments, job["tune_params"],
        grid_div_x=call["grid_div_x"], grid_div_y=call["grid_div_y"], grid_div_z=call["grid_div_z"],
        restrictions=call["restrictions"] or None, cmem_args=cmem or None, lang="cupy", device=0,
        compiler_options=call["compiler_options"], iterations=job["iterations"], strategy=job["strategy"],
        strategy_options=job["strategy_options"], quiet=True, verbose=False)
    wall = time.perf_counter() - started
    names = list(job["tune_params"])
    kept = []
    for r in results:
        entry = {"config": {k: r[k] for k in names}, "time": r.get("time") if _numeric(r.get("time")) else str(r.get("time"))}
        for key in ("compile_time", "verification_time", "benchmark_time", "framework_time", "strategy_time"):
            if _numeric(r.get(key)):
                entry[key] = r[key]
        kept.append(entry)
    env = {k: v for k, v in env.items() if k not in ("device_properties", "best_config")}
    return {"wall_s": wall, "results": kept, "env": env}


def _worker_output(job, kernel_tuner):
    """Kernel Tuner's run_kernel of one config; each output vector written to job["outputs"][name]."""
    from pathlib import Path
    import numpy as np
    call = job["call"]
    arguments, cmem = _kt_arguments(job["arguments"])
    got = kernel_tuner.run_kernel(
        call["kernel_name"], Path(call["kernel_source"]), call["problem_size"], arguments, job["config"],
        grid_div_x=call["grid_div_x"], grid_div_y=call["grid_div_y"], grid_div_z=call["grid_div_z"],
        lang="cupy", device=0, cmem_args=cmem or None, compiler_options=call["compiler_options"], quiet=True)
    written = {}
    for entry, value in zip(job["arguments"], got):
        if entry["memory"] == "Vector" and entry["output"] and entry["name"] in job["outputs"]:
            np.asarray(value, dtype="<f4").tofile(job["outputs"][entry["name"]])
            written[entry["name"]] = job["outputs"][entry["name"]]
    return {"written": written}


def _worker_retime(job, kernel_tuner):
    """Each config timed alone by Kernel Tuner (brute_force over a space of that one config),
    job["repeats"] times, the configs in alternating order."""
    from pathlib import Path
    call = job["call"]
    arguments, cmem = _kt_arguments(job["arguments"])
    configs = job["configs"]  # {"kt": {...}, "ktune": {...}}
    times = {label: [] for label in configs}
    errors = {}
    order = list(configs)
    for repeat in range(job["repeats"]):
        for label in (order if repeat % 2 == 0 else order[::-1]):
            params = {k: [v] for k, v in configs[label].items()}
            try:
                results, _ = kernel_tuner.tune_kernel(
                    call["kernel_name"], Path(call["kernel_source"]), call["problem_size"], arguments, params,
                    grid_div_x=call["grid_div_x"], grid_div_y=call["grid_div_y"], grid_div_z=call["grid_div_z"],
                    cmem_args=cmem or None, lang="cupy", device=0, compiler_options=call["compiler_options"],
                    iterations=job["iterations"], strategy="brute_force", quiet=True, verbose=False)
                value = results[0].get("time") if results else None
                if _numeric(value):
                    times[label].append(value)
                else:
                    errors[label] = str(value)
            except Exception as e:  # one config failing must not lose the other's times
                errors[label] = f"{type(e).__name__}: {e}"
    return {"times_ms": times, "errors": errors}


def _sixteen_byte_cupy_uuid():
    """Kernel Tuner 1.5's CuPy backend records the device as uuid.UUID(bytes=props["uuid"]),
    which needs exactly 16 bytes; on one H100 machine (2026-11-27) cupy's properties gave it
    otherwise and every tune failed at start ("bytes is not a 16-char string"). The UUID only goes
    into Kernel Tuner's environment record, so it is padded or cut to 16 bytes here. (Not yet run
    on a machine showing the failure.)"""
    import cupy
    original = cupy.cuda.runtime.getDeviceProperties

    def properties(device):
        props = original(device)
        uid = props.get("uuid") if isinstance(props, dict) else None
        if isinstance(uid, str):
            uid = uid.encode()
        if isinstance(uid, (bytes, bytearray)) and len(uid) != 16:
            props = dict(props)
            props["uuid"] = bytes(uid[:16]).ljust(16, b"\0")
        return props

    cupy.cuda.runtime.getDeviceProperties = properties


def worker(job_path):
    """Runs one Kernel Tuner step described by JOB.json and writes its result to job["result"]."""
    with open(job_path) as f:
        job = json.load(f)
    try:
        _sixteen_byte_cupy_uuid()
        import kernel_tuner
        result = {"tune": _worker_tune, "output": _worker_output, "retime": _worker_retime}[job["task"]](job, kernel_tuner)
        result["kernel_tuner_version"] = getattr(kernel_tuner, "__version__", "?")
    except Exception as e:
        import traceback
        result = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-3000:]}
    with open(job["result"], "w") as f:
        json.dump(result, f, default=str)
    return 0 if "error" not in result else 1


def run_worker(context, job, label, timeout, env=None):
    """`python3 -m ci.gpu.phase_kernel_tuner worker JOB.json` under a watchdog; its result, or
    {"error"} when it died, hung or wrote nothing."""
    folder = os.path.dirname(job["result"])
    job_path = os.path.join(folder, f"{label}.job.json")
    with open(job_path, "w") as f:
        json.dump(job, f)
    if os.path.exists(job["result"]):
        os.remove(job["result"])
    log_path = os.path.join(folder, f"{label}.log")
    started = time.time()
    child_env = dict(env or os.environ)
    child_env["PYTHONPATH"] = context.root + os.pathsep + child_env.get("PYTHONPATH", "")
    with open(log_path, "w") as log:
        try:
            done = subprocess.run([sys.executable, "-m", "ci.gpu.phase_kernel_tuner", "worker", job_path],
                                  stdout=log, stderr=subprocess.STDOUT, timeout=timeout, env=child_env)
            rc = done.returncode
        except subprocess.TimeoutExpired:
            rc = "watchdog"
    result = ktune.load_json(job["result"])
    if result is None:
        result = {"error": f"Kernel Tuner {label}: " + (f"killed by the watchdog after {timeout:.0f} s" if rc == "watchdog"
                                                          else f"exit {rc} without a result") + f"; {_tail(log_path, 6)}"}
    result["process_s"] = time.time() - started
    return result


def _tail(path, lines):
    try:
        with open(path, errors="replace") as f:
            return " | ".join(line.rstrip() for line in f.readlines()[-lines:])
    except OSError:
        return ""


# ---------------------------------------------------------------- the comparison of one kernel

def kt_summary(tune):
    """Distinct configs, failed ones and the best of Kernel Tuner's results."""
    results = tune.get("results", [])
    seen, ok, failed, best = set(), set(), set(), None
    for r in results:
        key = json.dumps(r["config"], sort_keys=True)
        seen.add(key)
        if _numeric(r["time"]):
            ok.add(key)
            if best is None or r["time"] < best["time"]:
                best = r
        else:
            failed.add(key)
    wall = tune.get("wall_s")
    summary = {"wall_s": wall, "evaluated": len(seen), "measured": len(ok), "failed": len(failed - ok),
               "best_config": best["config"] if best else None, "best_ms": best["time"] if best else None}
    if wall:
        summary["configs_per_min"] = len(seen) / (wall / 60.0)
        summary["measured_per_min"] = len(ok) / (wall / 60.0)
    env = tune.get("env") or {}
    summary["env"] = env
    summary["failures"] = sorted({r["time"] for r in results if not _numeric(r["time"])})[:5]
    return summary


def ktune_summary(result, wall):
    """The numbers of ktune's JSON that the table needs."""
    outcomes = result.get("outcomes") or {}
    evaluated = result.get("evaluated")
    best = result.get("best") or {}
    summary = {"wall_s": wall, "evaluated": evaluated, "reused": result.get("reused"), "outcomes": outcomes,
               "best_config": best.get("config"), "best_ms": best["median_ns"] / 1e6 if _numeric(best.get("median_ns")) else None,
               "seconds": result.get("seconds"), "stop_reason": result.get("stop_reason"),
               "interrupted": result.get("interrupted"), "geometry": result.get("geometry"),
               "verification": result.get("verification"), "space": result.get("space"), "device": result.get("device")}
    if isinstance(evaluated, int) and wall:
        summary["configs_per_min"] = evaluated / (wall / 60.0)
        summary["measured_per_min"] = outcomes.get("ok", 0) / (wall / 60.0)
    return summary


def db_rows(db):
    """(config, outcome, median_ns, environment) of every measurement in a ktune database."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        rows = c.execute("SELECT config, outcome, median_ns, environment FROM measurements ORDER BY id").fetchall()
    return [(json.loads(config), outcome, median, json.loads(environment or "{}")) for config, outcome, median, environment in rows]


def ktune_breakdown(db):
    """Where ktune's time per config went, from its database: the mean evaluation time on the
    device (waiting for the compile included), the mean timed kernel time (samples x median),
    the samples per config, the compile time, and how many configs raced out early."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        rows = c.execute("SELECT message, compile_ms, sample_count, median_ns, environment FROM measurements").fetchall()
    if not rows:
        return {}
    env = [json.loads(r[4] or "{}") for r in rows]
    tune_seconds = sorted(e.get("tune_seconds", 0) for e in env)
    n = len(rows)
    return {
        "configs": n,
        "seconds_between_results": (tune_seconds[-1] - tune_seconds[0]) / max(1, n - 1),
        "evaluation_s": sum(e.get("evaluation_seconds", 0) for e in env) / n,
        "timed_kernel_s": sum((r[2] or 0) * (r[3] or 0) * 1e-9 for r in rows) / n,
        "samples": sorted(r[2] or 0 for r in rows)[n // 2],
        "compile_ms": sum(r[1] or 0 for r in rows) / n,
        "raced": sum(1 for r in rows if "raced:" in (r[0] or "")),
    }


def compare_geometry(spec, rows, limit=GEOMETRY_SAMPLE):
    """ktune's launch of each measured config against Kernel Tuner's util for that config."""
    from kernel_tuner import util
    if len(rows) > limit:
        step = len(rows) / limit
        rows = [rows[int(i * step)] for i in range(limit)]
    divs = grid_divs(spec)
    params = tune_params(spec)
    report = {"compared": 0, "matches": 0, "mismatches": [], "no_launch": 0, "implausible": 0}
    for config, outcome, _, environment in rows:
        config = same_values(config, params)
        if environment.get("implausible"):
            report["implausible"] += 1
        launch = environment.get("launch")
        report["compared"] += 1
        grid = tuple(util.get_grid_dimensions(util.get_problem_size(problem_size(spec), config), config, divs,
                                              BLOCK_SIZE_NAMES))
        block = tuple(util.get_thread_block_dimensions(config, BLOCK_SIZE_NAMES))
        if not isinstance(launch, dict):
            report["no_launch"] += 1
            if len(report["mismatches"]) < 5:
                report["mismatches"].append({"config": config, "outcome": outcome, "kernel_tuner": [grid, block], "ktune": None})
            continue
        ours = (tuple(int(launch.get(f"grid_{a}", 1)) for a in "xyz"), tuple(int(launch.get(f"block_{a}", 1)) for a in "xyz"))
        if ours == (grid, block):
            report["matches"] += 1
        elif len(report["mismatches"]) < 5:
            report["mismatches"].append({"config": config, "outcome": outcome, "kernel_tuner": [grid, block], "ktune": list(ours)})
    report["mismatch_count"] = report["compared"] - report["matches"]
    return report


def ktune_measure_args():
    """ktune's measurement options for this comparison (KTUNE_KT_KTUNE_ARGS, e.g.
    "--max-seconds-per-config 0.005"): stated in the table, empty for ktune's defaults."""
    return os.environ.get("KTUNE_KT_KTUNE_ARGS", "").split()


def ktune_tune_args(derived, db, *extra):
    return ["tune", "--t1", derived, "-b", "cuda", *ktune_measure_args(), *extra, "--db", db, "--json"]


def supports(context, option):
    """Whether `ktune tune --help` lists OPTION."""
    try:
        text = subprocess.run([context.ktune, "tune", "--help"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return option in text


def compare_kernel(context, log, name, seconds, meta):
    """Steps a to f for one kernel; the record of what they found (errors included)."""
    record = {"kernel": name, "notes": []}
    path = spec_path(context.root, name)
    folder = context.path(f"kt-{name}")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    spec = load_spec(path)
    params = tune_params(spec)
    record["valid_configs"] = len(valid_configs(spec))
    record["default"] = default_config(spec)
    call = kt_call(spec, path)
    record["kernel_tuner_call"] = call
    files = make_inputs(spec, folder)
    plan = argument_plan(spec, files)
    log(f"== {name}: {record['valid_configs']} valid configs; inputs {', '.join(sorted(files))} written")

    # a. Kernel Tuner's tune (fresh CuPy kernel cache, as ktune gets a fresh cubin cache).
    kt_env = dict(os.environ, CUPY_CACHE_DIR=os.path.join(folder, "cupy-cache"))
    strategy_options = {"time_limit": seconds, "fraction": 1.0}
    tune = run_worker(context, {"task": "tune", "call": call, "arguments": plan, "tune_params": params,
                                "strategy": "random_sample", "strategy_options": strategy_options,
                                "iterations": ITERATIONS, "result": os.path.join(folder, "kt-tune.json")},
                      "kt-tune", seconds + WATCHDOG_EXTRA, env=kt_env)
    if "error" in tune:
        record["kt"] = {"error": tune["error"]}
        record["notes"].append(f"Kernel Tuner tune: {tune['error'][:300]}")
        log(f"{name}: Kernel Tuner tune failed: {tune['error'][:600]}")
    else:
        record["kt"] = kt_summary(tune)
        record["kt"]["process_s"] = tune.get("process_s")
        meta.setdefault("kernel_tuner_version", tune.get("kernel_tuner_version"))
        kt = record["kt"]
        log(f"{name}: Kernel Tuner {kt['evaluated']} configs ({kt['failed']} failed) in {kt['wall_s']:.1f} s, "
            f"best {kt['best_config']} {_ms(kt['best_ms'])} ms")

    # b. ktune's tune of the same spec on the same inputs, stopped at SECONDS of wall clock.
    derived = os.path.join(folder, f"{name}_ktune_T1.json")
    with open(derived, "w") as f:
        json.dump(derived_spec(spec, path, files), f, indent=2)
    db = os.path.join(folder, f"kt-{name}.db")
    args = ktune_tune_args(derived, db, "--strategy", "random", "--time-limit", str(seconds * 100))
    record["ktune_command"] = " ".join([context.ktune, *args])
    ktune_env = dict(os.environ, KTUNE_CACHE_DIR=os.path.join(folder, "ktune-cache"))
    started = time.time()
    rc = ktune.run(context.ktune, args, stdout=os.path.join(folder, "ktune-tune.json"),
                   stderr=os.path.join(folder, "ktune-tune.err"), timeout=seconds, interrupt=True, env=ktune_env)
    wall = time.time() - started
    result = ktune.tune_result(ktune.load_json(os.path.join(folder, "ktune-tune.json")))
    if not isinstance(result, dict) or "error" in result or "evaluated" not in result:
        why = (result or {}).get("error") if isinstance(result, dict) else None
        record["ktune"] = {"error": f"exit {rc}: {why or _tail(os.path.join(folder, 'ktune-tune.err'), 6)}", "wall_s": wall}
        record["notes"].append(f"ktune tune: {record['ktune']['error'][:300]}")
        log(f"{name}: ktune tune failed: {record['ktune']['error'][:600]}")
    else:
        record["ktune"] = ktune_summary(result, wall)
        record["ktune"]["exit"] = rc
        kn = record["ktune"]
        log(f"{name}: ktune {kn['evaluated']} configs {kn['outcomes']} in {wall:.1f} s (exit {rc}), "
            f"best {kn['best_config']} {_ms(kn['best_ms'])} ms; geometry {kn['geometry']}; verification {kn['verification']}")
        not_ok = {k: v for k, v in kn["outcomes"].items() if k != "ok" and v}
        if not_ok:
            record["notes"].append(f"ktune outcomes other than ok: {not_ok}")

    try:
        record["ktune_breakdown"] = ktune_breakdown(db)
        log(f"{name}: ktune per config: {json.dumps(record['ktune_breakdown'])}")
    except Exception as e:
        record["ktune_breakdown"] = {"error": f"{type(e).__name__}: {e}"}

    # c. The same geometry for every config ktune measured (up to GEOMETRY_SAMPLE).
    try:
        rows = db_rows(db)
        record["geometry"] = compare_geometry(spec, rows)
        record["geometry"]["db_rows"] = len(rows)
        g = record["geometry"]
        log(f"{name}: geometry {g['matches']}/{g['compared']} as Kernel Tuner's"
            + (f"; first mismatches {g['mismatches'][:3]}" if g["mismatches"] else "")
            + (f"; {g['implausible']} flagged implausible" if g["implausible"] else ""))
        if g["mismatches"]:
            record["notes"].append(f"geometry mismatches, first: {g['mismatches'][0]}")
    except Exception as e:
        record["geometry"] = {"error": f"{type(e).__name__}: {e}"}
        log(f"{name}: geometry check failed: {e}")

    # d. Kernel Tuner's output for its best config, checked by ktune as the spec's references.
    kt_best = (record.get("kt") or {}).get("best_config")
    if kt_best:
        kt_best = same_values(kt_best, params)
        outputs = {a["Name"]: os.path.join(folder, f"kt-out-{a['Name']}.bin")
                   for a in spec["KernelSpecification"]["Arguments"] if a["MemoryType"] == "Vector" and is_output(a)}
        produced = run_worker(context, {"task": "output", "call": call, "arguments": plan, "config": kt_best,
                                        "outputs": outputs, "result": os.path.join(folder, "kt-output.json")},
                              "kt-output", 300, env=kt_env)
        record["output"] = check_output(context, log, name, spec, path, files, kt_best, produced, folder, ktune_env)
        if not str(record["output"].get("match")).startswith("yes"):
            record["notes"].append(f"output match {record['output'].get('match')}: {record['output'].get('outcomes')} "
                                   f"{record['output'].get('error', '')}"[:300])
    else:
        record["output"] = {"match": "-", "error": "Kernel Tuner has no best config"}

    # e. Both winners re-timed by Kernel Tuner's timer.
    ktune_best = (record.get("ktune") or {}).get("best_config")
    if kt_best and ktune_best:
        configs = {"kt": kt_best, "ktune": same_values(ktune_best, params)}
        timed = run_worker(context, {"task": "retime", "call": call, "arguments": plan, "configs": configs,
                                     "iterations": RETIME_ITERATIONS, "repeats": RETIME_REPEATS,
                                     "result": os.path.join(folder, "kt-retime.json")},
                           "kt-retime", 240, env=kt_env)
        record["retime"] = retime_summary(timed)
        r = record["retime"]
        log(f"{name}: re-timed by Kernel Tuner: KT winner {_ms(r.get('kt_winner_ms'))} ms, ktune winner "
            f"{_ms(r.get('ktune_winner_ms'))} ms, KT/ktune {_ratio(r.get('kt_winner_ms'), r.get('ktune_winner_ms'))}"
            + (f"; errors {r['errors']}" if r.get("errors") else ""))
    else:
        record["retime"] = {"error": "a winner is missing"}

    # f. Configs per minute.
    kt_rate = (record.get("kt") or {}).get("configs_per_min")
    ktune_rate = (record.get("ktune") or {}).get("configs_per_min")
    record["configs_per_min_ratio"] = ktune_rate / kt_rate if kt_rate and ktune_rate else None
    return record


def check_output(context, log, name, spec, path, files, config, produced, folder, ktune_env):
    """ktune runs `config` with Kernel Tuner's outputs as ReferenceArguments; ok == 1 is a match."""
    if "error" in produced or not produced.get("written"):
        log(f"{name}: Kernel Tuner run_kernel failed: {produced.get('error', 'no output written')[:600]}")
        return {"match": "-", "error": produced.get("error", "no output written")}
    derived = os.path.join(folder, f"{name}_kt_best_T1.json")
    with open(derived, "w") as f:
        json.dump(derived_spec(spec, path, files, config=config, references=produced["written"]), f, indent=2)
    report = {"config": config, "spec": derived, "attempts": []}
    attempts = [[]]
    if supports(context, "--atol"):
        attempts.append(["--atol", "1e-5"])  # float reassociation: ktune's default atol is 1e-6
    for extra in attempts:
        db = os.path.join(folder, f"kt-best{'-atol' if extra else ''}.db")
        args = ktune_tune_args(derived, db, "--strategy", "brute_force", *extra)
        rc = ktune.run(context.ktune, args, stdout=os.path.join(folder, "ktune-best.json"),
                       stderr=os.path.join(folder, "ktune-best.err"), timeout=300, env=ktune_env)
        result = ktune.tune_result(ktune.load_json(os.path.join(folder, "ktune-best.json"))) or {}
        attempt = {"command": " ".join([context.ktune, *args]), "exit": rc, "outcomes": result.get("outcomes") or {},
                   "verification": result.get("verification")}
        if not attempt["outcomes"]:
            attempt["error"] = result.get("error") or _tail(os.path.join(folder, "ktune-best.err"), 6)
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
                attempt["measurements"] = [{"outcome": o, "message": (m or "")[:300], "error": e} for o, m, e in
                                           c.execute("SELECT outcome, message, error FROM measurements")]
        except sqlite3.Error:
            pass
        report["attempts"].append(attempt)
        report.update(outcomes=attempt["outcomes"], verification=attempt["verification"])
        if attempt["outcomes"].get("ok") == 1:
            report["match"] = "yes" + (" (atol 1e-5)" if extra else "")
            break
        report["match"] = "no" if attempt["outcomes"] else "-"
    log(f"{name}: Kernel Tuner's output of {config}: match {report['match']} ({report.get('outcomes')}, "
        f"verification {report.get('verification')})")
    return report


def retime_summary(timed):
    if "error" in timed:
        return {"error": timed["error"]}
    times = timed.get("times_ms", {})
    out = {"times_ms": times, "errors": timed.get("errors") or {}}
    for label in ("kt", "ktune"):
        values = sorted(times.get(label, []))
        if values:
            out[f"{label}_winner_ms"] = values[len(values) // 2]
    if out.get("kt_winner_ms") and out.get("ktune_winner_ms"):
        out["kt_over_ktune"] = out["kt_winner_ms"] / out["ktune_winner_ms"]
    return out


# ---------------------------------------------------------------- the machine

def ensure_kernel_tuner(context, log):
    """Kernel Tuner importable by this process and its workers: as the caller installed it, or else
    from the wheels in KTUNE_KT_WHEELS (default .whl/ of the repository) into the work folder."""
    probe = "import kernel_tuner, constraint, jsonschema; print(kernel_tuner.__version__)"
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if found.returncode == 0:
        return found.stdout.strip()
    wheels = sorted(glob.glob(os.path.join(context.environ.get("KTUNE_KT_WHEELS", os.path.join(context.root, ".whl")), "*.whl")))
    if not wheels:
        log(f"Kernel Tuner is not importable and there are no wheels to install: {found.stderr.strip()[-300:]}")
        return None
    site = context.path("kt-site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                    "--target", site, *wheels], check=False)
    os.environ["PYTHONPATH"] = site + os.pathsep + os.environ.get("PYTHONPATH", "")
    sys.path.insert(0, site)
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if found.returncode != 0:
        log(f"Kernel Tuner still not importable after installing {len(wheels)} wheels: {found.stderr.strip()[-300:]}")
        return None
    log(f"Kernel Tuner installed from {len(wheels)} wheels into {site}")
    return found.stdout.strip()


def machine_meta(context, seconds):
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "seconds": seconds}
    try:
        meta["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                     capture_output=True, text=True, timeout=60).stdout.strip().replace("\n", "; ")
    except (OSError, subprocess.TimeoutExpired) as e:
        meta["gpu"] = f"nvidia-smi: {e}"
    try:
        meta["ktune_version"] = subprocess.run([context.ktune, "--version"], capture_output=True, text=True,
                                               timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        meta["ktune_version"] = f"{context.ktune}: {e}"
    try:
        meta["cupy_version"] = subprocess.run([sys.executable, "-c", "import cupy; print(cupy.__version__)"],
                                              capture_output=True, text=True, timeout=120).stdout.strip() or "?"
    except (OSError, subprocess.TimeoutExpired):
        meta["cupy_version"] = "?"
    return meta


def commands(seconds, names):
    measure = " ".join(ktune_measure_args())
    return [f"KTUNE_KT_SPECS=\"{' '.join(names)}\" KTUNE_KT_SECONDS={seconds}"
            + (f" KTUNE_KT_KTUNE_ARGS=\"{measure}\"" if measure else "") + " ci/gpu-check kernel_tuner",
            "Kernel Tuner, per kernel: kernel_tuner.tune_kernel(KernelName, KernelFile, ProblemSize, arguments, "
            "tune_params, grid_div_x/y/z=GridDivX/Y/Z, restrictions=Conditions, cmem_args={MemType Constant "
            "arguments}, compiler_options=CompilerOptions, lang=\"cupy\", device=0, iterations=7, "
            f"strategy=\"random_sample\", strategy_options={{\"time_limit\": {seconds}, \"fraction\": 1.0}}, quiet=True)",
            f"ktune, per kernel: ktune tune --t1 <work>/kt-<kernel>/<kernel>_ktune_T1.json -b cuda {measure + ' ' if measure else ''}--strategy random "
            f"--time-limit {seconds * 100} --db <work>/kt-<kernel>/kt-<kernel>.db --json  (SIGINT after {seconds} s)",
            "output check: ktune tune --t1 <work>/kt-<kernel>/<kernel>_kt_best_T1.json -b cuda --strategy brute_force "
            "--db <work>/kt-<kernel>/kt-best.db --json  (ReferenceArguments = Kernel Tuner's run_kernel outputs)",
            f"re-time: kernel_tuner.tune_kernel(..., tune_params={{p: [winner value]}}, strategy=\"brute_force\", "
            f"iterations={RETIME_ITERATIONS}, lang=\"cupy\"), each winner {RETIME_REPEATS} times, alternating"]


def write_outputs(context, records, meta):
    with open(context.out("kernel-tuner.json"), "w") as f:
        json.dump({"meta": meta, "kernels": records}, f, indent=2, default=str)
    with open(context.out("kernel-tuner-table.md"), "w") as f:
        f.write(table(records, meta))


def run(context):
    log = Log(context.out("kernel-tuner.log"), truncate=True)
    seconds = int(context.seconds(float(context.environ.get("KTUNE_KT_SECONDS", DEFAULT_SECONDS))))
    budget = float(context.environ.get("KTUNE_KT_BUDGET", 560))
    started = time.time()
    names = spec_names(context.root, context.environ)
    log(f"== kernel_tuner: ktune vs Kernel Tuner on {' '.join(names)}, {seconds} s per tool and kernel")
    meta = machine_meta(context, seconds)
    meta["kernel_tuner_version"] = ensure_kernel_tuner(context, log)
    meta["commands"] = commands(seconds, names)
    log(f"GPU {meta.get('gpu')}; Kernel Tuner {meta['kernel_tuner_version']}; cupy {meta.get('cupy_version')}; "
        f"{meta.get('ktune_version')}")
    records = []
    if not meta["kernel_tuner_version"]:
        context.fail()
    for name in names:
        left = budget - (time.time() - started)
        if left < 2 * seconds + 60:
            records.append({"kernel": name, "notes": [f"skipped: {left:.0f} s left of KTUNE_KT_BUDGET={budget:.0f}"]})
            log(f"{name}: skipped, {left:.0f} s left of the phase's budget")
            continue
        try:
            if not os.path.exists(spec_path(context.root, name)):
                raise FileNotFoundError(spec_path(context.root, name))
            records.append(compare_kernel(context, log, name, seconds, meta))
        except Exception as e:  # one kernel's failure must not stop the others
            import traceback
            records.append({"kernel": name, "notes": [f"failed: {type(e).__name__}: {e}"]})
            log(f"{name}: failed: {type(e).__name__}: {e}", traceback.format_exc()[-1500:])
            context.fail()
        write_outputs(context, records, meta)
    write_outputs(context, records, meta)
    text = table(records, meta)
    log(text)


def plan(context):
    seconds = int(context.seconds(float(context.environ.get("KTUNE_KT_SECONDS", DEFAULT_SECONDS))))
    names = spec_names(context.root, context.environ)
    print(f"== kernel_tuner plan: {len(names)} kernels, {seconds} s of Kernel Tuner (random_sample, CuPy) and "
          f"{seconds} s of ktune (random) each, then geometry, output and re-time checks; outputs "
          f"{', '.join(OUTPUTS)}")
    for name in names:
        path = spec_path(context.root, name)
        if not os.path.exists(path):
            print(f"{name}: {path} missing")
            continue
        spec = load_spec(path)
        default = default_config(spec)
        ks = spec["KernelSpecification"]
        valid = valid_configs(spec)
        print(f"{name}: {ks['KernelName']} in {os.path.relpath(kernel_file(path, spec), context.root)}, "
              f"ProblemSize {problem_size(spec)}, GridDiv {list(grid_divs(spec))}, {len(valid)} valid configs; "
              f"default {default}: grid {grid_of(spec, default)} block {block_of(default)}")
        print(f"  ktune {' '.join(ktune_tune_args(f'<work>/kt-{name}/{name}_ktune_T1.json', f'<work>/kt-{name}/kt-{name}.db', '--strategy', 'random', '--time-limit', str(seconds * 100)))}"
              f"  (SIGINT after {seconds} s)")
    print(f"about {len(names) * (2 * seconds + 25) / 60:.1f} min; KTUNE_KT_BUDGET "
          f"{context.environ.get('KTUNE_KT_BUDGET', 560)} s of wall time (kernels that would not fit are skipped)")


def main(argv):
    if argv[:1] == ["worker"] and len(argv) == 2:
        return worker(argv[1])
    if argv[:1] == ["table"] and len(argv) > 1:
        records, meta = [], {}
        for path in argv[1:]:
            with open(path) as f:
                data = json.load(f)
            records += data.get("kernels", [])
            for key, value in data.get("meta", {}).items():
                if key == "commands":
                    meta.setdefault("commands", []).extend(c for c in value if c not in meta.get("commands", []))
                elif key not in meta:
                    meta[key] = value
        print(table(records, meta))
        return 0
    print("usage: python3 -m ci.gpu.phase_kernel_tuner worker JOB.json | table KERNEL-TUNER.json...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
