// Pure function of an immutable Model: safe from any thread.
#include "engine/model/model_fingerprint.h"

#include <xxhash.h>

#include <bit>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>

#include "engine/model/gguf.h"
#include "engine/model/model.h"

namespace kvgate {
namespace {

// Bumped if what is hashed changes.
constexpr std::string_view kTag = "kvgate.model-fingerprint.v2";
constexpr std::string_view kKvTag = "kvgate.kv-fingerprint.v1";

class Hasher {
 public:
  Hasher() : s_(XXH3_createState(), &XXH3_freeState) {
    if (!s_ || XXH3_128bits_reset(s_.get()) != XXH_OK) throw std::bad_alloc();
  }
  void bytes(const void* p, size_t n) { XXH3_128bits_update(s_.get(), p, n); }
  // Fixed-width little-endian integers, so the value does not depend on the host.
  void u64(uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    bytes(b, 8);
  }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void f32(float v) { u64(std::bit_cast<uint32_t>(v)); }
  void str(std::string_view s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  cache::Hash128 digest() const {
    XXH128_hash_t h = XXH3_128bits_digest(s_.get());
    return {h.low64, h.high64};
  }

 private:
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> s_;
};

}  // namespace

cache::Hash128 weights_fingerprint(const Model& model) {
  const ModelConfig& c = model.config();
  Hasher h;
  h.str(kTag);
  h.str(c.arch);
  for (int64_t v : {int64_t{c.n_layers}, int64_t{c.dim}, int64_t{c.n_heads}, int64_t{c.n_kv_heads}, int64_t{c.head_dim},
                    int64_t{c.ffn_dim}, int64_t{c.vocab_size}, int64_t{c.rope_dim}})
    h.i64(v);
  h.f32(c.rope_base);
  // v2: what keys (not tensors) change: linear RoPE scaling, gemma's scales,
  // soft-caps and sliding windows.
  h.f32(c.rope_freq_scale);
  h.f32(c.rms_eps);
  for (float v : {c.embed_scale, c.attention_scale(), c.attn_softcap, c.final_softcap, c.rope_base_swa,
                  c.rope_freq_scale_swa})
    h.f32(v);
  h.i64(c.sliding_window);
  h.i64(c.sliding_pattern);
  h.i64(c.rope_yarn ? c.rope_yarn_original_context : 0);
  // LongRoPE's set depends on the context served, not on the bytes alone.
  h.f32(c.rope_attn_factor);
  h.u64(c.rope_freq_factors.size());
  for (float v : c.rope_freq_factors) h.f32(v);
  const auto& tensors = model.file().tensors();
  h.u64(tensors.size());
  for (const GgufTensor& t : tensors) {
    h.str(t.name);
    h.u64(static_cast<uint64_t>(t.type));
    h.u64(t.dims.size());
    for (int64_t d : t.dims) h.i64(d);
    h.u64(t.nbytes);
    h.bytes(t.data, t.nbytes);
  }
  return h.digest();
}

cache::ModelFingerprint model_fingerprint(const cache::Hash128& weights, const KvLayout& kv) {
  Hasher h;
  h.str(kKvTag);
  h.u64(weights.lo);
  h.u64(weights.hi);
  h.str(kv_type_name(kv.type));
  h.str(kv.name);
  return h.digest();
}

cache::ModelFingerprint model_fingerprint(const Model& model, const KvLayout& kv) {
  return model_fingerprint(weights_fingerprint(model), kv);
}

}  // namespace kvgate
