#!/usr/bin/env bash
# ops/bench serve: kvgate serve under load from kvgate bench-serve, prefix
# caching on and off, on the ~110M model. Every server is started and
# stopped here, on 127.0.0.1, with a fresh data dir.
#
#   tests/bench/serve_bench.sh KVGATE LIMITS_BIN SHARED_DIR MODELS_DIR
#
# 1. The machine: kvgate_bench_limits (bandwidth, sgemm) and, through the
#    server, one request at a time: prefill tokens/s (1,040-token prompts,
#    one output token) and decode tokens/s of one sequence, so the load
#    levels below can be read against them.
# 2. The synthetic workload (4 tenants x 4 users, 2 shared system prompts of
#    512 tokens, 3 turns of 32 user + 16 output tokens: 48 requests) at three
#    Poisson rates, prefix cache on, then off (--no-prefix-cache).
# 3. The Mooncake conversation trace, one conversation in SERVE_BENCH_SAMPLE
#    kept whole, hash ids as 16-token blocks, time x SERVE_BENCH_TIME_SCALE,
#    outputs scaled the same and capped at 32 tokens; on, then off.
# Then per run the vllm-bench-serve figures, and per workload the ratios:
# TTFT p50 and p99 on/off, throughput on/off, the bill on vs off and the
# cached run's own bill without caching, the hit rate next to the ideal.
# SERVE_BENCH_RATES (default "1 2 4" requests/s) sets the synthetic levels.
set -euo pipefail
kvgate=$(realpath "$1") limits=$2 shared=$(realpath "$3") models=$4
rates=${SERVE_BENCH_RATES:-1 2 4}
sample=${SERVE_BENCH_SAMPLE:-128}
time_scale=${SERVE_BENCH_TIME_SCALE:-0.0125}
command -v node >/dev/null || { echo "serve_bench: node is missing (ops/deps installs it)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/kvgate-serve-bench.XXXXXX)
pids=()
problems=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

. "$(dirname "$0")/bench_servers.sh"

# bench NAME ARGS...: one kvgate bench-serve run against the current server;
# its JSON report goes to $tmp/NAME.json, its progress lines to stderr.
# Also writes $tmp/NAME.other: the cores other processes kept busy during
# the run (all busy CPU time, less the server's and the load generator's,
# over the wall time), because on these shared cores a neighbour's build
# moves every figure.
bench() {
  local name=$1
  shift
  local t0 b0 s0 c0 t1 b1 s1 c1
  times >"$tmp/times0"  # in this shell, not a $(...) subshell, which has no children of its own
  t0=$(date +%s.%N) b0=$(busy_jiffies) s0=$(proc_jiffies "$K_PID")
  "$kvgate" bench-serve --url "$K_URL" --cacert "$K_CERT" --admin-token "$K_ADMIN" --tenant-prefix "$name" \
    --label "$name" --vocab-size 32000 --json "$@" >"$tmp/$name.json"
  t1=$(date +%s.%N) b1=$(busy_jiffies) s1=$(proc_jiffies "$K_PID")
  times >"$tmp/times1"
  c0=$(children_seconds "$tmp/times0") c1=$(children_seconds "$tmp/times1")
  awk -v t="$t1-$t0" -v b=$((b1 - b0)) -v s=$((s1 - s0)) -v c0="$c0" -v c1="$c1" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { split(t, w, "-"); wall = w[1] - w[2]; printf "%.2f\n", ((b - s) / hz - (c1 - c0)) / wall }' >"$tmp/$name.other"
}
busy_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }  # user nice system irq softirq steal
proc_jiffies() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }                         # utime + stime
children_seconds() {  # FILE from `times`: user + system seconds of the shell's finished children
  awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] } print n }' "$1"
}

"$limits"
echo

m110=$models/llama-110m-ctx4096-f32.gguf
if [[ ! -f $m110 ]]; then
  mkdir -p "$models"
  "$kvgate" mkmodel --out "$m110.tmp" --vocab-from "$shared/testdata/ggml-vocab-llama-spm.gguf" --layers 12 --dim 768 \
    --heads 12 --kv-heads 4 --ffn 2048 --context 4096 --type f32 >/dev/null
  mv "$m110.tmp" "$m110"
fi
server_args=(--model "$m110" --kv-budget 2GiB)

cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
started=$SECONDS
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

synthetic=(--workload synthetic --tenants 4 --users 4 --system-prompts 2 --system-tokens 512 --turns 3 --user-tokens 32
  --output-tokens 16)
trace=(--workload trace --trace "$shared/traces/conversation_trace.jsonl" --tenants 4 --sample-users "$sample"
  --block-tokens 16 --time-scale "$time_scale" --max-output-tokens 32 --max-prompt-tokens 4000)
"$kvgate" bench-serve --dry-run --json "${synthetic[@]}" >"$tmp/plan-synthetic.json"
"$kvgate" bench-serve --dry-run --json "${trace[@]}" >"$tmp/plan-trace.json"

# The machine's single-request rates, once, where no prompt can hit.
start_kvgate calibrate "${server_args[@]}" --no-prefix-cache
bench calib-prefill --workload synthetic --tenants 1 --users 4 --system-prompts 4 --system-tokens 1024 --turns 1 \
  --user-tokens 16 --output-tokens 1 --max-concurrency 1 --progress-interval-s 0
bench calib-decode --workload synthetic --tenants 1 --users 2 --system-prompts 2 --system-tokens 64 --turns 1 \
  --user-tokens 16 --output-tokens 64 --max-concurrency 1 --progress-interval-s 0
stop_server "$K_PID" "kvgate serve (calibration)"

# run_pair NAME ARGS...: the same load with the cache on, then at once off, so
# that each pair meets the same neighbours on these shared cores.
run_pair() {
  local name=$1 cache
  shift
  for cache in on off; do
    local flag=--prefix-cache
    [[ $cache == on ]] || flag=--no-prefix-cache
    start_kvgate "$name-$cache" "${server_args[@]}" "$flag"
    bench "$name-$cache" "$@"
    stop_server "$K_PID" "kvgate serve ($name, prefix cache $cache)"
  done
}
for rate in $rates; do run_pair "synthetic-$rate" "${synthetic[@]}" --request-rate "$rate"; done
run_pair trace "${trace[@]}"
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

echo "## Serving under load (ops/bench serve)"
echo
echo "$(date -u +%Y-%m-%d), $cpu, $(nproc) cores, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}; node $(node --version)."
echo "Load average at the start: $load_start; at the end: $load_end. The load generator shares the cores with the server."
echo "Model: ~110M f32 (12 layers, dim 768, 12/4 heads, context 4096), kvgate serve --kv-budget 2GiB, block size 16, defaults otherwise; one fresh server (and data dir) per run. Total: $((SECONDS - started)) s."
echo

RATES="$rates" node - "$tmp" <<'EOF'
const fs = require('fs');
const dir = process.argv[2];
const read = (name) => JSON.parse(fs.readFileSync(`${dir}/${name}.json`, 'utf8'));
const rates = process.env.RATES.trim().split(/\s+/);
const f = (x, d = 0) => (x === null || x === undefined || Number.isNaN(x) ? '-' : Number(x).toFixed(d));
const pct = (x) => (x === null || x === undefined ? '-' : (100 * x).toFixed(1) + '%');
const usd = (x) => (x === null || x === undefined ? '-' : '$' + Number(x).toFixed(5));
const ratio = (a, b) => (a === null || b === null || !b ? '-' : (a / b).toFixed(2));

const cp = read('calib-prefill'), cd = read('calib-decode');
const promptPer = cp.total_input_tokens / cp.completed;
const prefillTokS = promptPer / (cp.median_ttft_ms / 1000);
const decodeTokS = 1000 / cd.median_tpot_ms;
console.log('### The machine through the server, one request at a time');
console.log();
console.log('| measure | requests | value |');
console.log('|---|---:|---:|');
console.log(`| prefill, ${f(promptPer)}-token prompts (prompt / TTFT p50, TLS and HTTP included) | ${cp.completed} | ${f(prefillTokS)} tokens/s |`);
console.log(`| decode, one sequence (1 / TPOT p50) | ${cd.completed} | ${f(decodeTokS, 1)} tokens/s |`);
console.log();

const ps = read('plan-synthetic'), pt = read('plan-trace');
console.log('### Workloads');
console.log();
console.log('| workload | requests | prompt tokens (mean) | output tokens | arrivals over | ideal hit rate |');
console.log('|---|---:|---:|---:|---:|---:|');
// The plan's own line, without what varies per run (the rate) or the machine (the path).
const shape = (p) => p.description.replace(/, (all at once|Poisson at [^,]*)$/, '').replace(/ \/\S*\//, ' ');
for (const p of [ps, pt])
  console.log(`| ${shape(p)} | ${p.requests} | ${p.prompt_tokens} (${f(p.mean_prompt_tokens)}) | ${p.output_tokens} | ${p.workload === 'trace' ? f(p.arrival_span_s, 1) + ' s' : 'Poisson'} | ${pct(p.ideal_cache_hit_rate)} |`);
console.log();

const runs = [];
for (const r of rates) runs.push({ key: `synthetic-${r}`, name: `synthetic ${r} req/s`, rate: Number(r), plan: ps });
runs.push({ key: 'trace', name: 'trace', rate: null, plan: pt });
const offered = (run) => {
  // Offered prefill work as a share of the measured single-request prefill rate.
  const tokS = run.rate !== null ? run.rate * run.plan.mean_prompt_tokens : run.plan.prompt_tokens / run.plan.arrival_span_s;
  return (100 * tokS / prefillTokS).toFixed(0) + '%';
};

console.log('### Per run (vllm bench serve figures)');
console.log();
console.log('| run | cache | other CPU | offered prefill | ok / failed | duration s | req/s | out tok/s | total tok/s | TTFT p50 | TTFT p90 | TTFT p99 | TPOT p50 | TPOT p99 | ITL p50 | ITL p99 | E2EL p50 | E2EL p99 | peak in flight | hit rate (server) | billed | without caching |');
console.log('|---|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
const bad = [];
for (const run of runs)
  for (const cache of ['on', 'off']) {
    const j = read(`${run.key}-${cache}`);
    if (j.failed) bad.push(`${run.key}-${cache}: ${j.failed} failed, e.g. ${j.failure_examples.join('; ')}`);
    const other = fs.readFileSync(`${dir}/${run.key}-${cache}.other`, 'utf8').trim();
    console.log(`| ${run.name} | ${cache} | ${other} | ${offered(run)} | ${j.completed} / ${j.failed} | ${f(j.duration, 1)} | ${f(j.request_throughput, 2)} | ${f(j.output_throughput, 1)} | ${f(j.total_token_throughput)} | ${f(j.median_ttft_ms)} | ${f(j.p90_ttft_ms)} | ${f(j.p99_ttft_ms)} | ${f(j.median_tpot_ms)} | ${f(j.p99_tpot_ms)} | ${f(j.median_itl_ms)} | ${f(j.p99_itl_ms)} | ${f(j.median_e2el_ms)} | ${f(j.p99_e2el_ms)} | ${j.max_concurrent_requests} | ${pct(j.cache_hit_rate)} (${pct(j.server_cache_hit_rate)}) | ${usd(j.cost_usd)} | ${usd(j.cost_without_cache_usd)} |`);
  }
console.log();
console.log('Other CPU: cores kept busy by other processes during the run (all busy CPU time less the server\'s and the load generator\'s, over the run\'s wall time; 0 is a quiet machine, 2 is both cores taken). Latencies in ms. TTFT: from sending the request to the first streamed chunk with a choice; TPOT: (last chunk - first) / (output - 1) per request; ITL: every gap between chunks; E2EL: send to end. Hit rate: cached / prompt tokens from the usage chunks (the server\'s own prefix-cache counters in brackets). Billed and without caching: the deltas of `kvgate_cost_usd_total` and `kvgate_cost_without_cache_usd_total` over the run\'s tenants.');
console.log();

console.log('### Prefix cache on / off');
console.log();
console.log('| workload | offered prefill | TTFT p50 on / off | TTFT p99 on / off | req/s on / off | out tok/s on / off | hit rate on (ideal) | billed on | billed off | saved vs off | on-run without caching |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const run of runs) {
  const on = read(`${run.key}-on`), off = read(`${run.key}-off`);
  const saved = on.cost_usd !== null && off.cost_usd ? pct(1 - on.cost_usd / off.cost_usd) : '-';
  console.log(`| ${run.name} | ${offered(run)} | ${ratio(on.median_ttft_ms, off.median_ttft_ms)} (${f(on.median_ttft_ms)} / ${f(off.median_ttft_ms)} ms) | ${ratio(on.p99_ttft_ms, off.p99_ttft_ms)} (${f(on.p99_ttft_ms)} / ${f(off.p99_ttft_ms)} ms) | ${ratio(on.request_throughput, off.request_throughput)} | ${ratio(on.output_throughput, off.output_throughput)} | ${pct(on.cache_hit_rate)} (${pct(on.ideal_cache_hit_rate)}) | ${usd(on.cost_usd)} | ${usd(off.cost_usd)} | ${saved} | ${usd(on.cost_without_cache_usd)} |`);
}
console.log();
if (bad.length) { console.log('Failed requests:'); for (const b of bad) console.log(`- ${b}`); console.log(); }
EOF

for f in "$tmp"/*/err; do
  [[ -s $f ]] && problems+=("$(basename "$(dirname "$f")"): stderr: $(head -c 400 "$f" | tr '\n' ' ')")
done
if ((${#problems[@]})); then
  echo "Problems seen:"
  for p in "${problems[@]}"; do echo "- $p"; done
else
  echo "No server exited non-zero or wrote to stderr."
fi
