// The model fingerprint: what a cached block's K/V was computed with, mixed
// into every block hash chain's seed so that blocks of one model are never
// served to another (or to the same file re-quantized, or with another RoPE
// base), and so that the disk tier stays valid across restarts of the same
// model.
//
// It hashes (XXH3-128) everything that changes K/V for given token ids: the
// architecture and shape (layers, widths, heads, KV heads, head and RoPE
// dimensions, RoPE base and linear scale, RMS epsilon, vocabulary size),
// each tensor's name (so the RoPE factors, biases and Q/K norms too),
// type and dimensions, and every tensor's bytes. Not hashed: general.name,
// the tokenizer, the context length — they do not change a position's K/V.
// Reads every weight once (about 50 ms per GB once the file is in the page
// cache): compute it once per loaded model.
//
// The backend's KV element type and block layout are mixed in last (cheap),
// so a cache written with f32 K/V never matches one written with f16 K/V.
// The value is pinned by a test: changing what is hashed invalidates every
// disk tier, so it must bump kTag on purpose, never drift.
#pragma once

#include "cache/hash128.h"
#include "engine/kv_layout.h"

namespace kvgate {

class Model;

// The weights and shape alone (the expensive part).
cache::Hash128 weights_fingerprint(const Model& model);
// What cached blocks are keyed by: the weights' fingerprint and the K/V layout.
cache::ModelFingerprint model_fingerprint(const cache::Hash128& weights, const KvLayout& kv);
cache::ModelFingerprint model_fingerprint(const Model& model, const KvLayout& kv);

}  // namespace kvgate
