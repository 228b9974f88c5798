"""What every phase of ci/gpu-check shares: the folders, the binary, the environment it runs in,
the families it covers, and the phase's exit status."""
import contextlib
import io
import os
import shutil
import subprocess
import sys
import threading

from . import families as family_descriptors
from . import ktune

# The compute-bound families have phases of their own (gemm, attention); check, bench and suite
# cover the memory-bound ones.


class Log:
    """Lines printed and appended to a file (what `| tee -a FILE` did), safe across threads."""

    def __init__(self, path=None, truncate=False, echo=True):
        self.path, self.echo = path, echo
        self._lock = threading.Lock()
        if path and truncate:
            open(path, "w").close()

    def __call__(self, *lines):
        if not lines:
            return
        with self._lock:
            text = "\n".join(str(line) for line in lines)
            if self.echo:
                print(text, flush=True)
            if self.path:
                with open(self.path, "a") as f:
                    f.write(text + "\n")


class Context:
    """root: the repository; final: $OUT, what comes back (at most 8 files per phase); work:
    $KTUNE_GPU_WORK, everything else; ktune: the binary of ci/build-gpu-bundle's build/gpu."""

    def __init__(self, phase, seconds_arg, environ=os.environ):
        self.phase = phase
        self.seconds_arg = seconds_arg  # the phase's SECONDS argument as given, or None
        self.root = family_descriptors.ROOT
        self.final = environ.get("OUT") or os.path.join(self.root, "gpu-out")
        self.work = environ.get("KTUNE_GPU_WORK", "/tmp/ktune-gpu")
        self.bundle = os.path.join(self.root, "build", "gpu")
        self.ktune = environ.get("KTUNE") or os.path.join(self.bundle, "ktune")
        self.environ = environ
        self.status = 0
        self._kernels = None

    def seconds(self, default):
        """The SECONDS argument, or the phase's default."""
        return float(self.seconds_arg) if self.seconds_arg is not None else default

    def path(self, *names):
        """A path in the work folder."""
        return os.path.join(self.work, *names)

    def out(self, *names):
        """A path in the output folder."""
        return os.path.join(self.final, *names)

    def prepare(self):
        """Creates the folders and sets the environment ktune runs in (its children inherit it)."""
        os.makedirs(self.final, exist_ok=True)
        os.makedirs(self.work, exist_ok=True)
        env = os.environ
        env["LD_LIBRARY_PATH"] = f"{self.bundle}/lib:/usr/local/cuda/lib64:{env.get('LD_LIBRARY_PATH', '')}"
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        env.setdefault("KTUNE_CUDA_INCLUDE", os.path.join(os.path.dirname(os.path.dirname(nvcc)), "include"))
        env["KTUNE_CACHE_DIR"] = self.path("cubin-cache")
        env["KTUNE_SEARCH_SPACES"] = os.path.join(self.root, "search_spaces")
        os.chdir(self.work)

    def show_device(self):
        print("== device", flush=True)
        query = "name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw"
        try:
            subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv"])
        except OSError as e:
            print(f"nvidia-smi: {e}", flush=True)
        if not os.path.exists(self.ktune):  # a phase that needs only the library (torch)
            print(f"{self.ktune}: not here; no `ktune devices`", flush=True)
            return
        ktune.run(self.ktune, ["devices", "--json"], stdout=self.path("devices.json"))
        with open(self.path("devices.json")) as f:
            print("".join(f.readlines()[:40]), end="", flush=True)

    @property
    def kernels(self):
        """The memory-bound families with a CUDA space (ktune list), or KTUNE_GPU_KERNELS."""
        if self._kernels is None:
            chosen = self.environ.get("KTUNE_GPU_KERNELS", "").split()
            if not chosen:
                described = [f.name for f in family_descriptors.with_backend("cuda", self.root)]
                try:
                    listed = ktune.listed_families(self.ktune)
                except OSError:  # no binary (a plan printed without a build): every described family
                    print(f"{self.ktune}: not found; every family with a CUDA source listed", file=sys.stderr)
                    listed = [{"kernel": name, "backends": [{"backend": "cuda"}]} for name in described]
                chosen = [k["kernel"] for k in listed
                          if k["kernel"] in described and k.get("memory_bound", True)
                          and any(b["backend"] == "cuda" for b in k["backends"])]
            self._kernels = chosen
        return self._kernels

    def family(self, name):
        return family_descriptors.load(self.root)[name]

    def fail(self):
        self.status = 1


def bad_setting(message):
    """Stops a phase on a setting it cannot take (an environment knob's value): the message on
    stderr, exit 2 as for any bad input."""
    print(message, file=sys.stderr, flush=True)
    raise SystemExit(2)


def make_table(main, *args):
    """What a table module's main prints for these arguments, as text; or why it failed (a missing
    baseline must not stop the phase before its logs are written)."""
    stream = io.StringIO()
    try:
        with contextlib.redirect_stdout(stream):
            main([str(a) for a in args])
    except Exception as e:
        return f"no table: {type(e).__name__}: {e}\n"
    return stream.getvalue()


def python_module(module, *args, **kwargs):
    """Runs `python3 -m ci.gpu.MODULE args...` (the PyTorch baselines run in their own process)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = family_descriptors.ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", f"ci.gpu.{module}", *args], env=env, **kwargs)
