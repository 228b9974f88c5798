"""ci/gpu-check stop: every command stops within a second of SIGTERM on the GPU too. A tune and a
bench whose config takes tens of seconds on the GPU (GEMM 8192^3 bf16, 10000 samples of about
1.6 ms, its float64 reference still being computed) are each sent SIGTERM 12 s in; each must
exit 143 within STOP_SECONDS, the tune recording its run as interrupted and the config in flight
as dropped, not as a failure. Writes stop.json to the output."""
import json
import os
import signal
import sqlite3
import subprocess
import time

from . import ktune

STOP_SECONDS = 1.5  # the contract is one second; the rest is the process's own exit
SHAPE = "m=8192,n=8192,k=8192"
LONG = ["--max-seconds-per-config", "30", "--min-samples", "1000000"]


def plan(context):
    print(f"stop: tune and bench of gemm {SHAPE} bf16, SIGTERM 12 s in, exit within {STOP_SECONDS} s")


def stopped(context, args, name):
    """Runs ktune with `args`, sends SIGTERM 12 s in; (exit code, seconds to exit, stdout)."""
    with open(context.path(f"stop-{name}.err"), "w") as err:
        process = subprocess.Popen([context.ktune, *args], stdout=subprocess.PIPE, stderr=err, text=True)
        time.sleep(12)
        running = process.poll() is None
        process.send_signal(signal.SIGTERM)
        sent = time.time()
        out, _ = process.communicate(timeout=120)
        return {"running_at_signal": running, "exit": process.returncode, "seconds": time.time() - sent,
                "stdout": out}


def run(context):
    print("== stop: SIGTERM to a tune and a bench with a long config in flight", flush=True)
    db = context.path("stop.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    tune = stopped(context, ktune.tune_args("gemm", "cuda", SHAPE, "bf16", "--budget", "2", *LONG, "--db", db,
                                            "--no-export", "--json"), "tune")
    summary = ktune.tune_result(json.loads(tune.pop("stdout") or "null")) or {}
    with sqlite3.connect(db) as c:
        tune["stored_rows"] = c.execute("SELECT count(*) FROM measurements").fetchone()[0]
        tune["run_status"] = [row[0] for row in c.execute("SELECT status FROM runs")]
    tune["dropped_at_stop"] = summary.get("dropped_at_stop")
    tune["evaluated"] = summary.get("evaluated")
    bench = stopped(context, ["bench", "-b", "cuda", "-k", "gemm", "--shape", SHAPE, "--precision", "bf16",
                              "--repetitions", "3", "--max-seconds-per-repetition", "30", "--min-samples", "1000000",
                              "--no-default", "--db", context.path("stop-bench.db"),
                              "--out", context.path("stop-bench.json")], "bench")
    bench.pop("stdout")
    result = {"tune": tune, "bench": bench, "limit_seconds": STOP_SECONDS}
    with open(context.out("stop.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result, indent=1), flush=True)
    good = all(r["running_at_signal"] and r["exit"] == 143 and r["seconds"] < STOP_SECONDS for r in (tune, bench))
    good &= tune["run_status"] == ["interrupted"] and tune["stored_rows"] == tune["evaluated"]
    if not good:
        context.fail()
