#!/usr/bin/env bash
# A/B of where a T1 kernel's outputs are checked: on the GPU (KTUNE_OUTPUT_CHECK=device, the default) or read
# back and checked on the host (KTUNE_OUTPUT_CHECK=host), the same seeded random tune of vec_fma for SECONDS of
# wall clock each, alternating twice, each with a cold binary cache. Prints configs per minute
# and, over the configs both measured, the median of (device-run median / host-run median).
# Usage (on the GPU machine, from the repository root): reports/t1-kernel-tuner/ab_output_check.sh [SECONDS]
set -u
seconds=${1:-30}
ktune=${KTUNE:-build/gpu/ktune}
spec=examples/t1-kernels/vec_fma/vec_fma_T1.json
work=${KTUNE_GPU_WORK:-/tmp/ktune-gpu}/ab
rm -rf "$work" && mkdir -p "$work"
for round in 1 2; do
  for where in device host; do
    tag=$where-$round
    env_check=(KTUNE_OUTPUT_CHECK=$where)
    start=$(date +%s.%N)
    env "${env_check[@]}" KTUNE_CACHE_DIR="$work/cache-$tag" timeout -s INT "$seconds" "$ktune" tune --t1 "$spec" -b cuda \
      --strategy random --max-seconds-per-config 0.005 --db "$work/$tag.db" --json > "$work/$tag.json" 2> "$work/$tag.err"
    end=$(date +%s.%N)
    echo "$tag $(python3 -c "print($end - $start)")" >> "$work/walls"
  done
done
python3 - "$work" <<'PY'
import json, sqlite3, statistics, sys, os
work = sys.argv[1]
walls = dict(line.split() for line in open(os.path.join(work, "walls")))
rows = {}
for tag, wall in walls.items():
    with sqlite3.connect(os.path.join(work, f"{tag}.db")) as c:
        got = c.execute("SELECT config_key, outcome, median_ns, environment FROM measurements").fetchall()
    rows[tag] = {k: (o, m) for k, o, m, _ in got}
    where = {json.loads(e).get("outputs_checked_on") for _, _, _, e in got}
    outcomes = {}
    for _, o, _, _ in got:
        outcomes[o] = outcomes.get(o, 0) + 1
    print(f"{tag}: {len(got)} configs in {float(wall):.1f} s = {len(got) / float(wall) * 60:.0f} configs/min; "
          f"outcomes {outcomes}; checked on {sorted(w for w in where if w)}")
for r in ("1", "2"):
    d, h = rows[f"device-{r}"], rows[f"host-{r}"]
    common = [k for k in d if k in h and d[k][0] == h[k][0] == "ok" and d[k][1] and h[k][1]]
    ratios = [d[k][1] / h[k][1] for k in common]
    if ratios:
        print(f"round {r}: {len(common)} configs in both; median of device/host medians {statistics.median(ratios):.4f}, "
              f"10th-90th percentile {statistics.quantiles(ratios, n=10)[0]:.4f}-{statistics.quantiles(ratios, n=10)[-1]:.4f}")
PY
