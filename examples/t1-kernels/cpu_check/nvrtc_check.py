"""Compiles each example kernel the way Kernel Tuner's CuPy backend and ktune do, without a GPU:
NVRTC (libnvrtc of the CUDA toolkit), Kernel Tuner's defines (grid_size_x/y/z, block_size_x/y/z,
the parameters, kernel_tuner) prepended to the source, no headers, the spec's CompilerOptions, and its
KernelName as a name expression, which must resolve to the symbol (a template instance too).

    python3 examples/t1-kernels/cpu_check/nvrtc_check.py [SAMPLE] [ARCH]

SAMPLE (default 12) random configs of each space besides the default one; ARCH default sm_90.
Exit 1 when a compile fails. Standard library only; CUDA_HOME (default /usr/local/cuda)."""
import ctypes
import glob
import itertools
import json
import os
import random
import sys

EXAMPLES = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def nvrtc():
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    return ctypes.CDLL(os.path.join(home, "lib64", "libnvrtc.so"))


def compile_one(lib, source, name, options):
    """(ok, log, lowered name, cubin bytes)."""
    program = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), b"kernel.cu", 0, None, None):
        raise RuntimeError("nvrtcCreateProgram failed")
    lib.nvrtcAddNameExpression(program, name.encode())
    array = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
    rc = lib.nvrtcCompileProgram(program, len(options), array)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(program, log)
    lowered, cubin = ctypes.c_char_p(), ctypes.c_size_t()
    if rc == 0:
        rc = lib.nvrtcGetLoweredName(program, name.encode(), ctypes.byref(lowered))
    if rc == 0:
        lib.nvrtcGetCUBINSize(program, ctypes.byref(cubin))
    symbol = (lowered.value or b"").decode()  # owned by the program: read before it is destroyed
    lib.nvrtcDestroyProgram(ctypes.byref(program))
    return rc == 0, log.value.decode(errors="replace"), symbol, cubin.value


def main(argv):
    sample = int(argv[0]) if argv else 12
    arch = argv[1] if len(argv) > 1 else "sm_90"
    lib = nvrtc()
    total = failed = 0
    for path in sorted(glob.glob(os.path.join(EXAMPLES, "*", "*_T1.json"))):
        with open(path) as f:
            spec = json.load(f)
        ks = spec["KernelSpecification"]
        tp = spec["ConfigurationSpace"]["TuningParameters"]
        params = {p["Name"]: eval(p["Values"]) for p in tp}
        default = {p["Name"]: p["Default"] for p in tp}
        rules = [c["Expression"] for c in spec["ConfigurationSpace"].get("Conditions", [])]
        names = list(params)
        valid = [dict(zip(names, c)) for c in itertools.product(*params.values())
                 if all(eval(r, {}, dict(zip(names, c))) for r in rules)]
        with open(os.path.join(os.path.dirname(path), ks["KernelFile"])) as f:
            source = f.read()
        symbol = "?"
        for config in [default] + random.Random(5).sample(valid, min(sample, len(valid))):
            defines = {"grid_size_x": 9, "grid_size_y": 3, "grid_size_z": 1,
                       "block_size_x": config.get("block_size_x", 256), "block_size_y": config.get("block_size_y", 1),
                       "block_size_z": config.get("block_size_z", 1)}
            defines.update(config)
            defines["kernel_tuner"] = 1
            text = "".join(f"#define {k} {v}\n" for k, v in defines.items()) + "#line 1\n" + source
            ok, log, found, size = compile_one(lib, text, ks["KernelName"],
                                               [f"--gpu-architecture={arch}", *ks.get("CompilerOptions", [])])
            total += 1
            if ok:
                symbol = found
            else:
                failed += 1
            if not ok or "warning" in log:
                print(f"{os.path.basename(path)} {config}: {'ok' if ok else 'FAILED'}\n{log[-800:]}")
        print(f"{os.path.basename(path)}: {ks['KernelName']} -> {symbol}")
    print(f"{total} NVRTC compiles, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
