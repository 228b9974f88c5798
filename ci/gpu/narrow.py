"""Narrowed copies of search spaces: some parameters limited to fewer values. A narrowed space
keeps only the starting points that lie in it (a starting point with a value the narrowed
parameter no longer has would make ktune refuse the space), and its default when that lies in it
or the one given."""
import copy
import json
import os

# The variants a short random check rarely draws, as narrowed spaces (feature name -> values kept):
# rows split over thread-block clusters, rows kept in shared memory or read again for each pass
# (instance_norm's memory storage), planes split over blocks through a workspace (its split), streaming cache hints, the
# special-function-unit exponentials (fast_exp: ex2/rcp.approx, whose accuracy must hold in fp32
# too) and the dropout mask drawn early.
FEATURES = {
    "cluster": {"cluster_size": [2, 4, 8]},
    "shared_row": {"row_storage": ["shared"]},
    "memory_row": {"row_storage": ["memory"]},
    "split": {"split": [2, 4, 8, 16, 32, 64]},
    "streaming": {"streaming": [1]},
    "fast_exp": {"fast_exp": [1]},
    "draw_early": {"draw_early": [1]},
}


def in_space(config, values):
    """Whether every value of `config` is among its parameter's values."""
    return all(name in values and value in values[name] for name, value in config.items())


def narrow(space, keep, default=None):
    """A copy of `space` with each parameter named in `keep` limited to those values. Its default
    is `default` if given, else the space's own when it lies in the narrowed space (else none: the
    first valid config serves); starting points outside it are dropped."""
    narrowed = copy.deepcopy(space)
    for parameter in narrowed["parameters"]:
        if parameter["name"] in keep:
            parameter["values"] = list(keep[parameter["name"]])
            # A Vulkan compile-time parameter names the value of the build-time module; narrowed
            # away from it, every variant is compiled at tune time (ktune refuses a value it lacks).
            if parameter.get("build_time_value") not in (None, *parameter["values"]):
                del parameter["build_time_value"]
    values = {p["name"]: p["values"] for p in narrowed["parameters"]}
    if default is not None:
        narrowed["default"] = dict(default)
    elif "default" in narrowed and not in_space(narrowed["default"], values):
        del narrowed["default"]
    if "starting_points" in narrowed:
        narrowed["starting_points"] = [p for p in narrowed["starting_points"] if in_space(p, values)]
        if not narrowed["starting_points"]:
            del narrowed["starting_points"]
    return narrowed


def pinned(space, config):
    """The space with every parameter pinned to `config`'s value, `config` its default."""
    missing = [p["name"] for p in space["parameters"] if p["name"] not in config]
    if missing:
        raise ValueError(f"no value for parameter {missing[0]}")
    return narrow(space, {name: [value] for name, value in config.items()}, default=config)


def load(path):
    with open(path) as f:
        return json.load(f)


def write(space, path):
    with open(path, "w") as f:
        json.dump(space, f, indent=1)
    return path


def write_feature_spaces(source, out):
    """The narrowed copy of every CUDA space of `source` per feature its parameters have (with those
    values), written to
    out/FAMILY.FEATURE.cuda.json; returns [(family, feature, path)]."""
    os.makedirs(out, exist_ok=True)
    written = []
    for name in sorted(os.listdir(source)):
        if not name.endswith(".cuda.json"):
            continue
        space = load(os.path.join(source, name))
        values = {p["name"]: p["values"] for p in space["parameters"]}
        for feature, keep in FEATURES.items():
            # Only where the space has the feature: its parameters, with the values kept.
            if not all(k in values and all(v in values[k] for v in kept) for k, kept in keep.items()):
                continue
            path = write(narrow(space, keep), os.path.join(out, f"{space['family']}.{feature}.cuda.json"))
            written.append((space["family"], feature, path))
    return written


# One copy of the GEMM space per tensor-core path (path pinned), each with a typical default: the
# Hopper tile 128 x 256, 4 stages, 2 consumer warpgroups (the "default" of the table), and a 128 x
# 128 mma.sync tile of 2 x 2 warps, 3 stages.
GEMM_PINNED = {"thread_m": 2, "thread_n": 2, "warps_m": 1, "warps_n": 1, "consumers": 1, "group_m": 1, "persistent": 0,
               "split_k": 1, "cluster_m": 1}
GEMM_PATH_DEFAULTS = {
    "wgmma": {"block_m": 128, "block_n": 256, "block_k": 64, "stages": 4, "consumers": 2, "group_m": 8},
    "mma": {"block_m": 128, "block_n": 128, "block_k": 32, "stages": 3, "warps_m": 2, "warps_n": 2},
}


def gemm_path_space(space, path):
    """A CUDA space of gemm's paths (gemm, layernorm_linear, ffn) with path pinned to `path` and
    that path's typical default (the space's own for the parameters the GEMM defaults lack)."""
    names = {p["name"] for p in space["parameters"]}
    typical = {name: value for name, value in {**GEMM_PINNED, **GEMM_PATH_DEFAULTS[path]}.items() if name in names}
    return narrow(space, {"path": [path]}, default={**space["default"], "path": path, **typical})


def write_gemm_path_spaces(space_file, out):
    """gemm-PATH.cuda.json in `out` for each path of GEMM_PATH_DEFAULTS; returns {path: file}."""
    space = load(space_file)
    return {path: write(gemm_path_space(space, path), os.path.join(out, f"gemm-{path}.cuda.json"))
            for path in GEMM_PATH_DEFAULTS}


# The Vulkan GEMM sweep: path=coopmat, default a 128 x 128 x 32 tile of 2 x 2 subgroups, 2 stages.
COOPMAT_DEFAULT = {"path": "coopmat", "block_m": 128, "block_n": 128, "block_k": 32, "warps_m": 2, "warps_n": 2,
                   "stages": 2}


def coopmat_space(space):
    """The Vulkan GEMM space with path pinned to coopmat."""
    return narrow(space, {"path": ["coopmat"]}, default={**space["default"], **COOPMAT_DEFAULT})
