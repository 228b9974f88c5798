#!/usr/bin/env python3
"""Writes narrowed copies of the CUDA search spaces that hold only the variants a short random
check would rarely draw: rows split over thread-block clusters, rows kept in shared memory,
streaming cache hints, and the special-function-unit exponentials (fast_exp: ex2/rcp.approx,
whose accuracy must hold in fp32 too). ci/gpu-check tunes them on odd shapes so each code path runs on the GPU
and is verified against the float64 reference.

Usage: gpu_feature_spaces.py SEARCH_SPACE_DIR OUT_DIR   (prints one line per written space)
"""
import json
import os
import sys

# feature name -> parameter values kept
FEATURES = {
    "cluster": {"cluster_size": [2, 4, 8]},
    "shared_row": {"row_storage": ["shared"]},
    "streaming": {"streaming": [1]},
    "fast_exp": {"fast_exp": [1]},
    "draw_early": {"draw_early": [1]},
}


def main():
    source, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for name in sorted(os.listdir(source)):
        if not name.endswith(".cuda.json"):
            continue
        with open(os.path.join(source, name)) as f:
            space = json.load(f)
        parameters = {p["name"]: p for p in space["parameters"]}
        for feature, keep in FEATURES.items():
            if not all(k in parameters for k in keep):
                continue
            narrowed = json.loads(json.dumps(space))
            for p in narrowed["parameters"]:
                if p["name"] in keep:
                    p["values"] = keep[p["name"]]
            # The family's default lies outside the narrowed values; the first valid config serves.
            narrowed.pop("default", None)
            path = os.path.join(out, f"{space['family']}.{feature}.cuda.json")
            with open(path, "w") as f:
                json.dump(narrowed, f, indent=1)
            print(space["family"], feature, path)


if __name__ == "__main__":
    main()
