# Sourced by the benchmarks that run servers (gateway_bench.sh,
# serve_bench.sh). Expects $kvgate (the binary), $tmp (a scratch folder), a
# `pids` array the caller's cleanup waits on and a `problems` array it
# reports.
#
# start_kvgate NAME ARGS...: starts `kvgate serve --data-dir $tmp/NAME/data
# --listen 127.0.0.1:0 ARGS...`, waits for its start-up lines and sets
# K_PID K_URL K_KEY K_ADMIN K_CERT K_DIR; a server that exits first, or
# lines that cannot be read, end the benchmark with its output.
start_kvgate() {
  local name=$1
  shift
  K_DIR=$tmp/$name
  mkdir -p "$K_DIR"
  "$kvgate" serve --data-dir "$K_DIR/data" --listen 127.0.0.1:0 "$@" >"$K_DIR/out" 2>"$K_DIR/err" &
  K_PID=$!
  pids+=("$K_PID")
  local i
  for ((i = 0; i < 1200; i++)); do
    grep -qs 'listening on https://' "$K_DIR/out" && break
    if ! kill -0 "$K_PID" 2>/dev/null; then
      echo "$(basename "$0"): kvgate serve $* exited at start-up:" >&2
      cat "$K_DIR/out" "$K_DIR/err" >&2
      exit 1
    fi
    sleep 0.1
  done
  K_URL=$(grep -o 'listening on https://127\.0\.0\.1:[0-9]*' "$K_DIR/out" | sed 's/listening on //')
  K_KEY=$(grep -o 'API key (shown once): kvg-[^ ]*' "$K_DIR/out" | sed 's/.*: //')
  K_ADMIN=$(grep -o 'admin token (shown once): kvga-[^ ]*' "$K_DIR/out" | sed 's/.*: //')
  K_CERT=$(grep -o 'TLS certificate [^ ]*' "$K_DIR/out" | sed 's/TLS certificate //')
  [[ -n $K_URL && -n $K_ADMIN && -n $K_CERT ]] || {
    echo "$(basename "$0"): cannot read kvgate's start-up lines" >&2
    cat "$K_DIR/out" >&2
    exit 1
  }
}

# stop_server PID NAME: SIGTERM, and a non-zero exit is a problem to report.
stop_server() {
  local rc=0
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || rc=$?
  local keep=()
  for p in "${pids[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
  pids=("${keep[@]}")
  ((rc == 0)) || problems+=("$2 exited with status $rc after SIGTERM")
}
