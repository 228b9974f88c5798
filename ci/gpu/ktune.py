"""Runs the ktune binary and reads what its --json prints."""
import json
import signal
import subprocess
import time


def run(binary, args, stdout=None, stderr=None, timeout=None, interrupt=False, env=None):
    """Runs `binary args...`, stdout written and stderr appended to the given paths (a path, or
    subprocess.DEVNULL, or None: this process's own); returns the exit code. Past `timeout`
    seconds it is stopped: with SIGINT when `interrupt` (ktune then
    finishes the config in flight and still prints its JSON), 20 s later with SIGKILL; otherwise
    with SIGKILL. A stopped run returns 124, as timeout(1) does."""
    out = open(stdout, "w") if isinstance(stdout, str) else stdout
    err = open(stderr, "a") if isinstance(stderr, str) else stderr
    try:
        process = subprocess.Popen([binary, *args], stdout=out, stderr=err, env=env)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            if interrupt:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=20)
                    return 124
                except subprocess.TimeoutExpired:
                    pass
            process.kill()
            process.wait()
            return 124
    finally:
        for f, given in ((out, stdout), (err, stderr)):
            if isinstance(given, str):
                f.close()


def run_json(binary, args, timeout=600, env=None):
    """`binary args... --json` parsed; on a non-zero exit {"error": tail of stderr, "exit", "seconds"}."""
    started = time.time()
    result = subprocess.run([binary, *args, "--json"], capture_output=True, text=True, timeout=timeout, env=env)
    if result.returncode != 0:
        return {"error": result.stderr.strip()[-800:], "exit": result.returncode, "seconds": time.time() - started}
    return json.loads(result.stdout)


def tune_result(document):
    """The result of a one-problem `ktune tune --json`: its document's only entry of "results".
    A document of several results, an error document, None, or a summary written before tune's
    document had "results" (older reports) comes back as it is."""
    if isinstance(document, dict) and document.get("command") == "tune" and isinstance(document.get("results"), list):
        if len(document["results"]) == 1:
            return document["results"][0]
    return document


def load_json(path):
    """A JSON file, or None when it is missing or not JSON (ktune died before printing)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def listed_families(binary):
    """`ktune list --json`'s kernels: [{"kernel", "backends", "memory_bound", ...}]."""
    return run_json(binary, ["list"]).get("kernels", [])


def problem_size(binary, kernel, backend, shape, precision, arch=None):
    """(bytes, flops) of a problem as a tune counts them, from `ktune space --json`; arch names a
    nominal device, so no worker (and no GPU) is needed."""
    args = ["space", "--kernel", kernel, "--backend", backend, "--shape", shape, "--precision", precision]
    if arch:
        args += ["--arch", arch]
    summary = run_json(binary, args, timeout=120)
    if "error" in summary:
        raise RuntimeError(f"ktune space {kernel} {shape}: {summary['error']}")
    return summary["bytes"], summary["flops"]


def tune_args(kernel, backend, shape, precision, *extra):
    """The common start of a `ktune tune` command line."""
    return ["tune", "-k", kernel, "-b", backend, "--shape", shape, "--precision", precision, *extra]
