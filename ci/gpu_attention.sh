# The flash_attention phase of ci/gpu-check (sourced by it: uses $ktune, $out, $final, $root,
# judge_check and status). Unless KTUNE_ATTENTION_CHECK=0: every variant brute-forced on odd
# shapes in bf16 and fp16, then the resources and tensor-core instructions of the largest
# cubins; fp32 too, which only the portable simt path takes. Unless KTUNE_ATTENTION_BENCH=0: each shape of KTUNE_ATTENTION_SHAPES (B,H,N,D,CAUSAL;
# default 16k tokens with heads*head_dim = 2048, seq 1k-16k, head_dim 64 and 128, causal and not)
# in each of KTUNE_ATTENTION_PRECISIONS (default bf16) tuned by brute force (at most SECONDS
# each), against PyTorch SDPA on cuDNN and on FlashAttention 2 in the same run:
# attention-table.md in the output.
attention_log="$final/attention.log"
: > "$attention_log"
if [ "${KTUNE_ATTENTION_CHECK:-1}" = 1 ]; then
  echo "== flash_attention: every variant on odd shapes" | tee -a "$attention_log"
  for precision in bf16 fp16 fp32; do
    for shape in batch=1,heads=1,seq_q=1,seq_kv=1,head_dim=64 \
                 batch=1,heads=2,seq_q=77,seq_kv=77,head_dim=64,causal=1 \
                 batch=2,heads=4,kv_heads=2,seq_q=1000,seq_kv=4097,head_dim=128 \
                 batch=1,heads=3,kv_heads=1,seq_q=1000,seq_kv=77,head_dim=128,causal=1 \
                 batch=1,heads=2,seq_q=300,seq_kv=4097,head_dim=64,causal=1 \
                 batch=1,heads=2,seq_q=4097,seq_kv=4097,head_dim=128,causal=1; do
      result="attention-check-$precision-${shape//[=,]/_}.json"
      "$ktune" tune -k flash_attention -b cuda --shape "$shape" --precision "$precision" --strategy brute_force \
        --max-seconds-per-config 0.005 --config-timeout 20 --db "$out/attention-check.db" --no-export --json \
        > "$result" 2>> attention-check.err
      judge_check "flash_attention" "$precision" "$shape" "$?" "$result" 2>&1 | tee -a "$attention_log" || status=1
    done
  done
  python3 - "$out/attention-check.db" <<'PY' | tee -a "$attention_log"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("select p.key, m.config, m.outcome, substr(m.message, 1, 300) from measurements m "
                      "join problems p on p.id = m.problem_id where m.outcome != 'ok' limit 40"):
    print("not ok:", *row, sep=" | ")
PY
  echo "== flash_attention: resources and tensor-core instructions of the largest cubins" | tee -a "$attention_log"
  for cubin in $(ls -S "$KTUNE_CACHE_DIR"/flash_attention-*.cubin | head -6); do
    { cuobjdump -sass "$cubin" | grep -oE "HMMA\.[0-9A-Z.]+|[HQ]GMMA\.[0-9A-Zx.]+|LDSM[.0-9A-Z]*|LDL|STL" | sort | uniq -c | tr '\n' ' '
      cuobjdump -res-usage "$cubin" | grep -oE "REG:[0-9]+|STACK:[0-9]+|SHARED:[0-9]+" | tr '\n' ' '; echo " $(basename "$cubin")"; } 2>&1 | tee -a "$attention_log"
  done
fi
if [ "${KTUNE_ATTENTION_BENCH:-1}" = 1 ]; then
  echo "== flash_attention: benchmark against PyTorch SDPA (cuDNN, FlashAttention 2)" | tee -a "$attention_log"
  attention_seconds="${2:-20}"
  shapes="${KTUNE_ATTENTION_SHAPES:-16,32,1024,64,0 16,32,1024,64,1 4,32,4096,64,0 4,32,4096,64,1 1,32,16384,64,0 1,32,16384,64,1 16,16,1024,128,0 16,16,1024,128,1 8,16,2048,128,0 8,16,2048,128,1 4,16,4096,128,0 4,16,4096,128,1 2,16,8192,128,0 2,16,8192,128,1 1,16,16384,128,0 1,16,16384,128,1}"
  precisions="${KTUNE_ATTENTION_PRECISIONS:-bf16}"
  python3 "$root/ci/attention_baseline.py" --shapes $shapes --precisions $precisions > attention-baseline.json 2>> attention-bench.err
  echo "baseline exit $?" | tee -a "$attention_log"
  tunes=()
  for shape in $shapes; do
    IFS=, read -r batch heads seq head_dim causal <<< "$shape"
    for precision in $precisions; do
      result="attention-bench-$precision-${shape//,/_}.json"
      start=$(date +%s)
      "$ktune" tune -k flash_attention -b cuda \
        --shape "batch=$batch,heads=$heads,seq_q=$seq,seq_kv=$seq,head_dim=$head_dim,causal=$causal" \
        --precision "$precision" --strategy brute_force --time-limit "$attention_seconds" --config-timeout 30 \
        --db "$out/attention-bench.db" --no-export --json > "$result" 2>> attention-bench.err
      echo "tune $shape $precision: exit $?, $(( $(date +%s) - start )) s" | tee -a "$attention_log"
      tunes+=("$result")
    done
  done
  python3 "$root/ci/attention_table.py" attention-baseline.json "${tunes[@]}" | tee "$final/attention-table.md" | tee -a "$attention_log"
  cp attention-baseline.json "$final/" 2>/dev/null
fi
tail -20 attention-check.err attention-bench.err > "$final/attention-errors.log" 2>/dev/null
