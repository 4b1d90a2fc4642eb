#!/usr/bin/env bash
# ops/bench gateway: kvgate serve over loopback TLS, next to nginx serving the
# same bytes, each server started and stopped here.
#
#   tests/bench/gateway_bench.sh KVGATE LIMITS_BIN SHARED_DIR MODELS_DIR
#
# 1. GET /v1/models with wrk (keep-alive), nginx vs kvgate, 1 and 2 workers
#    / I/O threads: requests/s, p50, p99, kvgate/nginx.
# 2. POST /v1/completions, max_tokens 1 on stories260K, with wrk.
# 3. 1,000 idle TLS connections held open: server RSS before and after.
# 4. 4 tenants x 2 shared system prompts on the ~110M model, prefix cache on
#    and off: requests/s, TTFT, cached share of prompt tokens vs the ideal.
# GATEWAY_BENCH_SECONDS (default 5) sets each wrk run's length.
set -euo pipefail
kvgate=$(realpath "$1") limits=$2 shared=$(realpath "$3") models=$4
here=$(cd "$(dirname "$0")" && pwd)
secs=${GATEWAY_BENCH_SECONDS:-5}
wrk_args=(-t2 -c16 "-d${secs}s" --latency)
reps=2
ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -Hn)"
for tool in wrk nginx node curl; do
  command -v "$tool" >/dev/null || { echo "gateway_bench: $tool is missing (ops/deps installs it)" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/kvgate-gateway-bench.XXXXXX)
pids=()
problems=()  # what looked wrong in a server: printed at the end
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

. "$(dirname "$0")/bench_servers.sh"

# A tenant without quotas (the demo tenant allows 600 requests a minute).
bench_key() {
  curl -sf --cacert "$K_CERT" "$K_URL/admin/tenants" -H "Authorization: Bearer $K_ADMIN" \
    -H 'Content-Type: application/json' -d '{"id":"bench","plan_id":"demo","quotas":{}}' >/dev/null
  curl -sf --cacert "$K_CERT" "$K_URL/admin/tenants/bench/keys" -H "Authorization: Bearer $K_ADMIN" \
    -H 'Content-Type: application/json' -d '{"label":"bench"}' | sed 's/.*"api_key":"\([^"]*\)".*/\1/'
}

# start_nginx WORKERS CERT KEY BODY: sets N_PID N_URL N_WORKERS (worker pids).
start_nginx() {
  local d=$tmp/nginx-$1
  mkdir -p "$d/www/v1" "$d/tmp"
  cp "$4" "$d/www/v1/models"
  local port
  port=$(free_port)
  local user=""
  [[ $(id -u) -ne 0 ]] || user="user root;"  # the workers read the files in a 0700 temp dir
  cat >"$d/nginx.conf" <<EOF
$user
worker_processes $1;
daemon off;
pid $d/nginx.pid;
error_log $d/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $d/tmp; proxy_temp_path $d/tmp; fastcgi_temp_path $d/tmp;
  uwsgi_temp_path $d/tmp; scgi_temp_path $d/tmp;
  keepalive_timeout 60s;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$port ssl;
    ssl_certificate $2;
    ssl_certificate_key $3;
    ssl_protocols TLSv1.2 TLSv1.3;  # as kvgate (nginx 1.22's default has no TLS 1.3)
    location = /v1/models { root $d/www; default_type application/json; }
    location = /health { default_type application/json; return 200 '{"status":"ok"}'; }
  }
}
EOF
  nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log" &
  N_PID=$!
  pids+=("$N_PID")
  N_URL=https://127.0.0.1:$port
  local i
  for ((i = 0; i < 100; i++)); do
    curl -sf --cacert "$2" "$N_URL/v1/models" -o /dev/null && break
    kill -0 "$N_PID" 2>/dev/null || { echo "gateway_bench: nginx exited:" >&2; cat "$d/error.log" >&2; exit 1; }
    sleep 0.1
  done
  N_WORKERS=$(pgrep -P "$N_PID" | tr '\n' ' ')
}

# wrk_best NAME URL ARGS...: best of $reps runs by requests/s; prints
# "rps p50_ms p99_ms requests errors" (errors: non-2xx + socket errors).
wrk_best() {
  local name=$1
  shift
  local best="" r
  for ((r = 1; r <= reps; r++)); do
    wrk "${wrk_args[@]}" "$@" >"$tmp/wrk-$name-$r.txt" 2>&1 || true
    local line
    line=$(awk '
      function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
      /^ +50%/ { p50 = ms($2) } /^ +99%/ { p99 = ms($2) }
      /requests in/ { n = $1 } /Requests\/sec:/ { rps = $2 }
      /Non-2xx or 3xx responses:/ { err += $NF }
      /Socket errors:/ { gsub(",", ""); err += $4 + $6 + $8 + $10 }
      END { printf "%.0f %.3f %.3f %d %d\n", rps, p50, p99, n, err }' "$tmp/wrk-$name-$r.txt")
    if [[ -z $best || ${line%% *} -gt ${best%% *} ]]; then best=$line; fi
  done
  echo "$best"
}

"$limits"
echo

model260k=$shared/models/stories260K.gguf
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
echo "## Gateway (kvgate serve over loopback TLS)"
echo
echo "$cpu, $(nproc) cores; $(wrk -v 2>&1 | head -1 | awk '{print $1, $2}'), $(nginx -v 2>&1 | sed 's/.*: //'), node $(node --version)."
echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) (anything above 0 is another process on these cores)."
echo "wrk ${wrk_args[*]} (keep-alive), best of $reps by requests/s; every server on 127.0.0.1, started and stopped by the script."
echo

# --- 1. GET /v1/models: nginx vs kvgate --------------------------------------
start_kvgate io1 --model "$model260k" --kv-budget 256MiB --io-threads 1
key=$(bench_key)
curl -sf --cacert "$K_CERT" "$K_URL/v1/models" -H "Authorization: Bearer $key" -o "$tmp/models.json"
cert=$K_CERT tlskey=${K_CERT%.crt}.key
proto() {  # "TLSv1.3 TLS_AES_256_GCM_SHA384": the "New, ..." line (stdin held open so the session is printed)
  sleep 0.5 | openssl s_client -connect "${1#https://}" -servername localhost 2>/dev/null | awk -F', ' '/^New, / { sub("Cipher is ", "", $3); print $2, $3 }' || true
}
kv_proto=$(proto "$K_URL")
kv1=$(wrk_best kv-io1 -H "Authorization: Bearer $key" "$K_URL/v1/models")
stop_server "$K_PID" "kvgate serve (io_threads 1)"
start_kvgate io2 --model "$model260k" --kv-budget 256MiB --io-threads 2
key2=$(bench_key)
kv2=$(wrk_best kv-io2 -H "Authorization: Bearer $key2" "$K_URL/v1/models")
stop_server "$K_PID" "kvgate serve (io_threads 2)"
start_nginx 1 "$cert" "$tlskey" "$tmp/models.json"
ng_proto=$(proto "$N_URL")
ng1=$(wrk_best nginx-1 "$N_URL/v1/models")
stop_server "$N_PID" "nginx (1 worker)"
start_nginx 2 "$cert" "$tlskey" "$tmp/models.json"
ng2=$(wrk_best nginx-2 "$N_URL/v1/models")
stop_server "$N_PID" "nginx (2 workers)"

echo "### GET /v1/models, keep-alive ($(wc -c <"$tmp/models.json") B JSON body; nginx serves the same bytes as a static file, same certificate and key)"
echo
echo "TLS negotiated: kvgate $kv_proto, nginx $ng_proto. kvgate checks the API key (Authorization header) on every request; nginx has no auth."
echo
echo "| server | workers / io_threads | connections | requests/s | p50 ms | p99 ms | errors | kvgate / nginx |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
row() {  # name workers result reference
  read -r r a b n e <<<"$3"
  local ratio="-"
  [[ -z ${4:-} ]] || ratio=$(awk -v x="$r" -v y="${4%% *}" 'BEGIN { printf "%.0f%%", 100 * x / y }')
  printf "| %s | %s | 16 | %s | %.3f | %.3f | %s | %s |\n" "$1" "$2" "$r" "$a" "$b" "$e" "$ratio"
}
row nginx 1 "$ng1"
row kvgate 1 "$kv1" "$ng1"
row nginx 2 "$ng2"
row kvgate 2 "$kv2" "$ng2"
echo

# --- 2. completions, max_tokens 1, and 3. idle connections --------------------
start_kvgate cmpl --model "$model260k" --kv-budget 256MiB
key=$(bench_key)
cat >"$tmp/completion.lua" <<EOF
wrk.method = "POST"
wrk.body = '{"model":"stories260K","prompt":"Once upon a time","max_tokens":1}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $key"
EOF
cm=$(wrk_best cmpl -s "$tmp/completion.lua" "$K_URL/v1/completions")
check=$(curl -s --cacert "$K_CERT" "$K_URL/v1/usage" -H "Authorization: Bearer $key")
stop_server "$K_PID" "kvgate serve (completions)"
read -r r a b n e <<<"$cm"
echo "### POST /v1/completions, max_tokens 1, stories260K (\"Once upon a time\", 5 prompt tokens)"
echo
echo "Each request is admitted, run through the engine (one forward pass), and its ledger record written with a synced RocksDB write before the answer is sent."
echo
echo "| server | connections | requests/s | p50 ms | p99 ms | requests | errors | vs GET /v1/models |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
printf "| kvgate | 16 | %s | %.3f | %.3f | %s | %s | %s |\n" "$r" "$a" "$b" "$n" "$e" \
  "$(awk -v x="$r" -v y="${kv1%% *}" 'BEGIN { printf "%.1f%%", 100 * x / y }')"
echo
ledger_requests=$(sed -n 's/.*"requests":\([0-9]*\).*/\1/p' <<<"$check")
wrk_requests=$(cat "$tmp"/wrk-cmpl-*.txt | awk '/requests in/ { n += $1 } END { print n + 0 }')
echo "Ledger check: the tenant's GET /v1/usage afterwards counts ${ledger_requests:-?} requests; wrk counted $wrk_requests responses over the $reps runs (requests still in flight when a run ends are served but not counted by wrk)."
echo

count=1000 hold=5
start_kvgate idle --model "$model260k" --kv-budget 256MiB
kv_idle=$(node "$here/gateway_bench.mjs" idle "$K_URL" "$K_CERT" $count $hold "$K_PID")
stop_server "$K_PID" "kvgate serve (idle connections)"
start_nginx 1 "$cert" "$tlskey" "$tmp/models.json"
ng_idle=$(node "$here/gateway_bench.mjs" idle "$N_URL" "$cert" $count $hold "$N_PID" $N_WORKERS)
stop_server "$N_PID" "nginx (idle connections)"
echo "### $count idle TLS connections, held ${hold} s (ulimit -n $(ulimit -n); idle timeout 60 s)"
echo
echo "Opened by one node process in batches of 100 handshakes; RSS is VmRSS from /proc (nginx: master + worker). After the hold each connection sends GET /health."
echo
echo "| server | opened | open after ${hold} s | answered after | RSS before MiB | RSS after MiB | KiB per connection | handshakes s |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
idle_row() {
  node -e '
    const [name, json] = process.argv.slice(1); const j = JSON.parse(json);
    console.log(`| ${name} | ${j.opened} | ${j.open_after_hold} | ${j.answered_after_hold} | ${(j.rss_before_kb / 1024).toFixed(1)} | ${(j.rss_after_kb / 1024).toFixed(1)} | ${((j.rss_after_kb - j.rss_before_kb) / j.opened).toFixed(1)} | ${(j.connect_ms / 1000).toFixed(2)} |`);
  ' "$1" "$2"
}
idle_row kvgate "$kv_idle"
idle_row "nginx (1 worker)" "$ng_idle"
echo

# --- 4. multi-tenant shared prefixes on the ~110M model ------------------------
m110=$models/llama-110m-ctx4096-f32.gguf
if [[ ! -f $m110 ]]; then
  mkdir -p "$models"
  "$kvgate" mkmodel --out "$m110.tmp" --vocab-from "$shared/testdata/ggml-vocab-llama-spm.gguf" --layers 12 --dim 768 \
    --heads 12 --kv-heads 4 --ffn 2048 --context 4096 --type f32 >/dev/null
  mv "$m110.tmp" "$m110"
fi
declare -A mt
for cache in on off; do
  flag=--prefix-cache
  [[ $cache == on ]] || flag=--no-prefix-cache
  start_kvgate "tenants-$cache" --model "$m110" --kv-budget 1GiB "$flag"
  name=$(curl -sf --cacert "$K_CERT" "$K_URL/v1/models" -H "Authorization: Bearer $K_KEY" | sed 's/.*"id":"\([^"]*\)".*/\1/')
  mt[$cache]=$(node "$here/gateway_bench.mjs" tenants "$K_URL" "$K_CERT" "$K_ADMIN" "$name")
  stop_server "$K_PID" "kvgate serve (110M, prefix cache $cache)"
done
echo "### Multi-tenant shared prefixes, ~110M f32 model (12 layers, dim 768), --kv-budget 1GiB"
echo
echo "4 tenants (made through POST /admin/tenants) x 2 system prompts of 1,024 token ids (the same two for every tenant; each tenant's cache scope is its own), + 64 fresh ids per request; 48 requests, request i on tenant i % 4 with system prompt (i / 4) % 2, 4 at a time; 16 output tokens (ignore_eos, temperature 0), streamed, usage from the include_usage chunk. TTFT: from sending the request to the first chunk with a choice, as the client sees it. Ideal cached share: 40 of 48 requests hit 1,024 of 1,088 tokens = 78.4%."
echo
echo "| prefix cache | ok / requests | requests/s | out tokens/s | TTFT p50 ms | TTFT p90 ms | TTFT mean ms | TTFT first 8 mean ms | TTFT rest p50 ms | cached / prompt tokens | cached share | ideal |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for cache in on off; do
  node -e '
    const [name, json] = process.argv.slice(1); const j = JSON.parse(json);
    const f = (x) => (x === null || Number.isNaN(x) ? "-" : x.toFixed(0));
    console.log(`| ${name} | ${j.ok} / ${j.requests} | ${j.rps.toFixed(2)} | ${j.out_tok_s.toFixed(1)} | ${f(j.ttft_p50)} | ${f(j.ttft_p90)} | ${f(j.ttft_mean)} | ${f(j.ttft_first8_mean)} | ${f(j.ttft_rest_p50)} | ${j.cached_tokens} / ${j.prompt_tokens} | ${(100 * j.cached_share).toFixed(1)}% | ${(100 * j.ideal_share).toFixed(1)}% |`);
    if (j.ok !== j.requests) console.error(`gateway_bench: prefix cache ${name}: statuses ${JSON.stringify(j.statuses)}, e.g. ${JSON.stringify(j.bad)}`);
  ' "$cache" "${mt[$cache]}"
done
on_off=$(node -e 'const [a, b] = process.argv.slice(1).map(JSON.parse); console.log((a.rps / b.rps).toFixed(2) + "x requests/s, TTFT p50 " + (a.ttft_p50 / b.ttft_p50).toFixed(2) + "x")' "${mt[on]}" "${mt[off]}")
echo
echo "Prefix cache on / off: $on_off."
echo

echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
echo

# --- what looked wrong ----------------------------------------------------------
for f in "$tmp"/*/err; do
  [[ -s $f ]] && problems+=("$(basename "$(dirname "$f")"): stderr: $(head -c 400 "$f" | tr '\n' ' ')")
done
for res in "$kv1" "$kv2" "$cm"; do
  read -r r a b n e <<<"$res"
  ((e == 0)) || problems+=("wrk counted $e errors (non-2xx or socket) against kvgate: $res")
done
if ((${#problems[@]})); then
  echo "Problems seen:"
  for p in "${problems[@]}"; do echo "- $p"; done
else
  echo "No server exited non-zero, wrote to stderr, or answered an error status."
fi
