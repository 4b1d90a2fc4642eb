#!/usr/bin/env bash
# Writes tests/models/vectors/NAME.txt for every line of families.txt: the
# model from `kvgate mkmodel`, then llama.cpp's logits and greedy tokens on
# it (llama_reference.cpp). Run it when a case is added or changed; the
# test suite reads the files and needs no llama.cpp.
#
#   tests/models/make_vectors.sh LLAMACPP_DIR [KVGATE_BINARY]
#
# LLAMACPP_DIR is a llama.cpp checkout built by ../shared/tools/build-llamacpp.sh
# (its build/bin holds libllama.so). KVGATE_BINARY defaults to build/release/gateway/kvgate.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
llama=${1:?usage: make_vectors.sh LLAMACPP_DIR [KVGATE_BINARY]}
kvgate=${2:-$root/build/release/gateway/kvgate}
shared=${KVGATE_SHARED:-$root/../shared}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

g++ -std=c++17 -O2 -o "$work/llama_reference" "$here/llama_reference.cpp" \
  -I"$llama/include" -I"$llama/ggml/include" -L"$llama/build/bin" -lllama -lggml -lggml-base \
  -Wl,-rpath,"$llama/build/bin"
commit=$(git -C "$llama" rev-parse --short HEAD 2>/dev/null || echo unknown)

mkdir -p "$here/vectors"
grep -v '^#' "$here/families.txt" | while read -r name prompt_len prompt_seed steps args; do
  [[ -n $name ]] || continue
  # shellcheck disable=SC2086  # args is a word list
  "$kvgate" mkmodel $args --vocab-from "$shared/models/stories260K.gguf" --out "$work/$name.gguf" >/dev/null
  {
    echo "# llama.cpp $commit on \`kvgate mkmodel $args\`: tests/models/make_vectors.sh"
    "$work/llama_reference" "$work/$name.gguf" "$prompt_len" "$prompt_seed" "$steps"
  } >"$here/vectors/$name.txt"
  echo "wrote tests/models/vectors/$name.txt"
done
