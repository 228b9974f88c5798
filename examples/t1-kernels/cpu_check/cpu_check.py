"""Checks the example kernels without a GPU: each config runs on the CPU through cuda_emu.hpp
(one std::thread per CUDA thread, AddressSanitizer on every buffer) at a small problem of odd sizes,
with the launch geometry Kernel Tuner derives (GridDiv); its outputs must be bit-identical to the
default config's, and the default config's must match a float64 numpy reference.

    python3 examples/t1-kernels/cpu_check/cpu_check.py [KERNEL,KERNEL...|all] [SAMPLE]

SAMPLE 0 runs every valid config (slow: about a second each); SAMPLE N runs the default config, the
extremes of every parameter and N random configs. Needs numpy and g++ 12 or newer (C++20,
-fsanitize=address). Exit 1 when any config fails."""
import concurrent.futures
import itertools
import json
import math
import os
import random
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(HERE)

# Per kernel: the small problem, its scalars, and the element count of each vector at that problem.
SMALL = {
    "vec_fma": dict(problem=[5003], scalars=dict(n=5003), sizes=dict(out=5003, x=5003, y=5003)),
    "gelu_tpl": dict(problem=[5001], scalars=dict(n=5001), sizes={"out": 5001, "in": 5001}),
    "axpy_inplace": dict(problem=[5005], scalars=dict(n=5005), sizes=dict(y=5005, x=5005)),
    "conv2d_cmem": dict(problem=[77, 45], scalars=dict(width=77, height=45),
                        sizes={"out": 77 * 45, "in": 83 * 51, "d_filter": 49}),
    "matmul_smem": dict(problem=[45, 37], scalars=dict(M=37, N=45, K=29), sizes=dict(C=37 * 45, A=37 * 29, B=29 * 45)),
    "transpose_smem": dict(problem=[77, 45], scalars=dict(width=77, height=45), sizes={"out": 77 * 45, "in": 77 * 45}),
}


def reference(name, v, s):
    """The outputs in float64."""
    f = lambda a: a.astype(np.float64)
    if name == "vec_fma":
        return {"out": f(v["x"]) * f(v["y"]) + s["alpha"]}
    if name == "gelu_tpl":
        x = f(v["in"])
        return {"out": 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))}
    if name == "axpy_inplace":
        return {"y": s["a"] * f(v["x"]) + f(v["y"])}
    if name == "conv2d_cmem":
        w, h = s["width"], s["height"]
        image, weights = f(v["in"]).reshape(h + 6, w + 6), f(v["d_filter"]).reshape(7, 7)
        out = np.zeros((h, w))
        for i in range(7):
            for j in range(7):
                out += image[i:i + h, j:j + w] * weights[i, j]
        return {"out": out.ravel()}
    if name == "matmul_smem":
        m, n, k = s["M"], s["N"], s["K"]
        return {"C": (f(v["A"]).reshape(m, k) @ f(v["B"]).reshape(k, n)).ravel()}
    if name == "transpose_smem":
        w, h = s["width"], s["height"]
        return {"out": f(v["in"]).reshape(h, w).T.ravel()}
    raise KeyError(name)


def load(name):
    with open(os.path.join(EXAMPLES, name, f"{name}_T1.json")) as f:
        spec = json.load(f)
    tp = spec["ConfigurationSpace"]["TuningParameters"]
    params = {p["Name"]: eval(p["Values"]) for p in tp}
    default = {p["Name"]: p["Default"] for p in tp}
    rules = [c["Expression"] for c in spec["ConfigurationSpace"].get("Conditions", [])]
    names = list(params)
    valid = [dict(zip(names, c)) for c in itertools.product(*params.values())
             if all(eval(r, {}, dict(zip(names, c))) for r in rules)]
    return spec["KernelSpecification"], default, valid


def harness(name, ks, small, work):
    """main.cpp: reads the inputs, fills the __constant__ arrays, launches, writes the outputs."""
    args, setup, outputs = [], [], []
    for a in ks["Arguments"]:
        if a["MemoryType"] == "Scalar":
            value = small["scalars"].get(a["Name"], a["FillValue"])
            args.append(f"{float(value)!r}f" if a["Type"] == "float" else str(int(value)))
            continue
        var = "v_" + a["Name"]
        setup.append(f'std::vector<float> {var} = read_floats("{work}/{a["Name"]}.bin", {small["sizes"][a["Name"]]});')
        if a.get("AccessType") == "WriteOnly":
            setup.append(f"std::fill({var}.begin(), {var}.end(), NAN);  // unwritten elements stay NaN")
        if a.get("MemType") == "Constant":
            setup.append(f"std::copy({var}.begin(), {var}.end(), {a['Name']});")
        if a.get("AccessType") in ("WriteOnly", "ReadWrite") or a.get("Output") == 1:
            outputs.append(f'write_floats(std::string(argv[1]) + "/{a["Name"]}.out", {var});')
        args.append(f"{var}.data()")
    code = "\n".join([
        f'#include "{os.path.join(os.path.dirname(work), "emu.hpp")}"  // precompiled',
        f'#include "{os.path.join(EXAMPLES, name, ks["KernelFile"])}"',
        "int main(int argc, char** argv) {",
        *("  " + line for line in setup),
        f"  launch(dim3{{GX, GY, GZ}}, dim3{{block_size_x, block_size_y, block_size_z}}, [&] {{ {ks['KernelName']}({', '.join(args)}); }});",
        *("  " + line for line in outputs),
        "  return 0;",
        "}", ""])
    path = os.path.join(work, "main.cpp")
    with open(path, "w") as f:
        f.write(code)
    return path


FLAGS = ["g++", "-std=c++20", "-O0", "-ffp-contract=off", "-fsanitize=address,undefined", "-pthread"]


def geometry(ks, config, problem):
    """Kernel Tuner's: grid axis i = ceil(problem[i] / product of GridDiv<axis>), block = block_size_x/y/z."""
    grid = []
    for axis, key in enumerate(("GridDivX", "GridDivY", "GridDivZ")):
        div = ks.get(key)
        divisor = math.prod(config[d] for d in div) if div else config.get("block_size_" + "xyz"[axis], 1)
        grid.append(-(-(problem[axis] if axis < len(problem) else 1) // divisor))
    return grid


def run_config(ks, config, small, main, work, index):
    grid = geometry(ks, config, small["problem"])
    defines = dict(config)
    defines.setdefault("block_size_y", 1)
    defines.setdefault("block_size_z", 1)
    defines.update(grid_size_x=grid[0], grid_size_y=grid[1], grid_size_z=grid[2], kernel_tuner=1,
                   GX=grid[0], GY=grid[1], GZ=grid[2])
    exe, out = os.path.join(work, f"c{index}"), os.path.join(work, f"o{index}")
    os.makedirs(out, exist_ok=True)
    built = subprocess.run(FLAGS + ["-Winvalid-pch", "-Wno-unknown-pragmas"] + [f"-D{k}={v}" for k, v in defines.items()]
                           + [main, "-o", exe], capture_output=True, text=True)
    if built.returncode:
        return config, "compile error", built.stderr[-1500:], None
    ran = subprocess.run([exe, out], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
    os.remove(exe)
    if ran.returncode:
        return config, "run error", ran.stderr[-2500:], None
    return config, "ok", "", {f[:-4]: np.fromfile(os.path.join(out, f), dtype=np.float32) for f in os.listdir(out)}


def check(name, sample, work):
    ks, default, valid = load(name)
    small = SMALL[name]
    rng = np.random.default_rng(1)
    inputs = {}
    for a in ks["Arguments"]:
        if a["MemoryType"] == "Vector":
            count = small["sizes"][a["Name"]]
            data = np.zeros(count, np.float32) if a.get("AccessType") == "WriteOnly" else \
                (rng.uniform(-1, 1, count) * a.get("FillValue", 1.0)).astype(np.float32)
            data.tofile(os.path.join(work, f"{a['Name']}.bin"))
            inputs[a["Name"]] = data
    scalars = {a["Name"]: small["scalars"].get(a["Name"], a["FillValue"]) for a in ks["Arguments"] if a["MemoryType"] == "Scalar"}
    expected = reference(name, inputs, scalars)
    main = harness(name, ks, small, work)
    configs = [default] + [c for c in valid if c != default]
    if sample:
        picked = [default]
        extremes = []
        for p in default:
            extremes.append(max(valid, key=lambda c: (c[p], math.prod(c.values()))))
            extremes.append(min(valid, key=lambda c: (c[p], -math.prod(c.values()))))
        extremes.append(max(valid, key=lambda c: math.prod(c.values())))
        for c in extremes + random.Random(3).sample(configs[1:], min(sample, len(configs) - 1)):
            if c not in picked:
                picked.append(c)
        configs = picked
    problems, base = 0, None
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        futures = [pool.submit(run_config, ks, c, small, main, work, i) for i, c in enumerate(configs)]
        for i, future in enumerate(futures):
            config, status, error, outputs = future.result()
            if status != "ok":
                problems += 1
                print(f"{name}: {status} for {config}:\n{error}", flush=True)
                continue
            if i == 0:
                base = outputs
                for key, want in expected.items():
                    got = outputs[key].astype(np.float64)
                    ok = np.allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(want).max())))
                    print(f"{name}: default config against the float64 reference ({key}): "
                          f"{'ok' if ok else 'MISMATCH'}, largest difference {np.nanmax(np.abs(got - want)):.3g}, "
                          f"{int(np.isnan(got).sum())} NaN")
                    problems += not ok
                continue
            if base is None:
                continue
            for key in base:
                if not np.array_equal(outputs[key].view(np.uint32), base[key].view(np.uint32)):
                    problems += 1
                    print(f"{name}: {config} differs from the default config in {key}, by up to "
                          f"{np.nanmax(np.abs(outputs[key] - base[key])):.3g}", flush=True)
    print(f"{name}: {len(configs)} of {len(valid)} valid configs run, {problems} problems", flush=True)
    return problems


def main(argv):
    names = list(SMALL) if not argv or argv[0] == "all" else argv[0].split(",")
    sample = int(argv[1]) if len(argv) > 1 else 40
    problems = 0
    with tempfile.TemporaryDirectory(prefix="t1-cpu-check-") as work:
        with open(os.path.join(work, "emu.hpp"), "w") as f:
            f.write(f'#include "{os.path.join(HERE, "cuda_emu.hpp")}"\n')
        subprocess.run(FLAGS + ["-x", "c++-header", os.path.join(work, "emu.hpp"), "-o",
                                os.path.join(work, "emu.hpp.gch")], check=True)  # a precompiled header: 3x faster
        for name in names:
            folder = os.path.join(work, name)
            os.makedirs(folder)
            problems += check(name, sample, folder)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
