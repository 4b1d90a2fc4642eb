#!/usr/bin/env bash
# Writes tests/models/quant/: llama.cpp's quantized files and its reading of
# them, for kvgate's quantized types to be held to (dequantize_test.cpp,
# quant_models_test.cpp). From one `kvgate mkmodel` F16 model:
#   blocks.txt      llama-quantize --pure to each type, then blocks of three
#                   of its tensors, raw and as ggml's to_float widens them
#   q4_k_m.gguf     llama-quantize Q4_K_M (the mixture people download),
#   q6_k.gguf       and Q6_K, both kept: kvgate reads them in the tests
#   *.digest        every tensor's type and digests of its bytes and values
#   *.vectors       llama.cpp's logits and greedy tokens on each
#                   (llama_reference.cpp), and *.widened.vectors on the
#                   same weights widened to F32 by llama-quantize: the
#                   exact arithmetic, without llama.cpp's int8 activations
# Run it when the cases change; the test suite needs no llama.cpp.
#
#   tests/models/make_quant_vectors.sh LLAMACPP_DIR [KVGATE_BINARY]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
llama=${1:?usage: make_quant_vectors.sh LLAMACPP_DIR [KVGATE_BINARY]}
kvgate=${2:-$root/build/release/gateway/kvgate}
shared=${KVGATE_SHARED:-$root/../shared}
out=$here/quant
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH=$llama/build/bin

flags=(-O2 -I"$llama/include" -I"$llama/ggml/include" -L"$llama/build/bin" -Wl,-rpath,"$llama/build/bin")
g++ -std=c++17 "${flags[@]}" -o "$work/quant_reference" "$here/quant_reference.cpp" -lggml -lggml-base
g++ -std=c++17 "${flags[@]}" -o "$work/llama_reference" "$here/llama_reference.cpp" -lllama -lggml -lggml-base
commit=$(git -C "$llama" rev-parse --short HEAD 2>/dev/null || echo unknown)
args=(--arch llama --layers 2 --dim 256 --heads 4 --kv-heads 2 --ffn 256 --context 512 --seed 51)
"$kvgate" mkmodel "${args[@]}" --type f16 --vocab-from "$shared/models/stories260K.gguf" --out "$work/f16.gguf" >/dev/null
header="# llama.cpp $commit on \`kvgate mkmodel ${args[*]} --type f16\`: tests/models/make_quant_vectors.sh"

mkdir -p "$out"
echo "$header" >"$out/blocks.txt"
for type in Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q4_K Q5_K Q6_K; do
  "$llama/build/bin/llama-quantize" --pure "$work/f16.gguf" "$work/$type.gguf" "$type" >/dev/null 2>&1
  "$work/quant_reference" blocks "$work/$type.gguf" 2 |
    grep -E '^(token_embd|blk\.0\.attn_k|blk\.1\.ffn_down)\.weight ' >>"$out/blocks.txt"
done
"$llama/build/bin/llama-quantize" "$work/f16.gguf" "$out/q4_k_m.gguf" Q4_K_M >/dev/null 2>&1
cp "$work/Q6_K.gguf" "$out/q6_k.gguf"
for m in q4_k_m q6_k; do
  { echo "$header, then llama-quantize"; "$work/quant_reference" digest "$out/$m.gguf"; } >"$out/$m.digest"
  { echo "$header, then llama-quantize"; "$work/llama_reference" "$out/$m.gguf" 200 52 64; } >"$out/$m.vectors"
  "$llama/build/bin/llama-quantize" --allow-requantize "$out/$m.gguf" "$work/$m.f32.gguf" F32 >/dev/null 2>&1
  { echo "$header, then llama-quantize, then llama-quantize to F32"; "$work/llama_reference" "$work/$m.f32.gguf" 200 52 64; } \
    >"$out/$m.widened.vectors"
done
ls -l "$out"
