# The scaling phase of ci/gpu-check (sourced by it: uses $ktune, $out, $final, $root and status):
# `ktune tune --devices` on 1, 2, 4 ... GPUs of this host. First tests/integration/test_devices_gpu.py
# (label gpu). Then the GEMM space (search_spaces/gemm.cuda.json, every path) at
# KTUNE_SCALING_SHAPE (default m=4096,n=4096,k=4096) in bf16: one tune on every GPU fills the cubin
# cache, then the same KTUNE_SCALING_BUDGET configs (default 600 of the 770 valid at 4096^3; random order, seed 11, so every
# run measures the same configs) are tuned on 1, 2, 4 ... GPUs, each into a fresh database.
# scaling-table.md in the output: evaluations per second, speed-up over one GPU, and the time
# each run took to reach a config within 2% of the best of its configs.
scaling_log="$final/scaling.log"
: > "$scaling_log"
gpus=$(nvidia-smi -L | wc -l)
echo "== scaling: $gpus GPUs" | tee -a "$scaling_log"
python3 "$root/tests/integration/test_devices_gpu.py" --ktune "$ktune" --source-dir "$root" 2>&1 | tail -8 | tee -a "$scaling_log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
shape="${KTUNE_SCALING_SHAPE:-m=4096,n=4096,k=4096}"
budget="${KTUNE_SCALING_BUDGET:-600}"
scaling_tune() {  # devices label
  "$ktune" tune -k gemm -b cuda --shape "$shape" --precision bf16 --strategy random --seed 11 --budget "$budget" \
    --config-timeout 30 --devices "$1" --db "$out/scaling-$2.db" --no-export --json > "scaling-$2.json" 2>> scaling.err
  echo "tune on devices $1: exit $?" | tee -a "$scaling_log"
}
rm -f "$out"/scaling-*.db
scaling_tune all warm
runs=()
n=1
while [ "$n" -le "$gpus" ]; do
  scaling_tune "$(seq -s, 0 $((n - 1)))" "gpus$n"
  runs+=("scaling-gpus$n.json")
  n=$((n * 2))
done
python3 "$root/ci/gpu_scaling_table.py" "$out" "${runs[@]}" | tee "$final/scaling-table.md" | tee -a "$scaling_log"
tail -20 scaling.err > "$final/scaling-errors.log" 2>/dev/null
