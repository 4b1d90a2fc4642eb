// The identity the KV tiers below the device are opened with for a backend:
// what a stored block's bytes mean (the model fingerprint, which already
// covers the KV element type and layout name, and the layout's dimensions
// spelled out, so a record of another shape is named as such when it
// misses). The Scheduler refuses tiers opened with any other.
#pragma once

#include "cache/hash128.h"
#include "cache/tiers/kv_identity.h"
#include "engine/backend.h"

namespace kvgate {

inline cache::KvIdentity tier_identity(const Backend& b, const cache::ModelFingerprint& model) {
  cache::KvIdentity id;
  id.model = model;
  id.n_layers = b.config().n_layers;
  id.n_kv_heads = b.config().n_kv_heads;
  id.head_dim = b.config().head_dim;
  id.kv_type = static_cast<uint8_t>(b.kv_layout().type);
  id.block_size = b.block_size();
  return id;
}

}  // namespace kvgate
