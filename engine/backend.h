// Backend: where the forward pass runs. Owns the device KV pool's memory.
//
// The CPU backend is the reference; the CUDA backend implements the same
// interface and is tested against it. A backend is driven by one thread (the
// engine loop); it is not itself thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "engine/batch.h"
#include "engine/model_config.h"

namespace kvgate {

class Model;

struct BackendOptions {
  int32_t block_size = 16;        // tokens per KV block
  int64_t kv_budget_bytes = 0;    // KV pool size; 0 = enough for one full context
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view name() const = 0;
  virtual const ModelConfig& config() const = 0;
  virtual int32_t block_size() const = 0;
  virtual int32_t num_blocks() const = 0;

  // Runs one step (see batch.h). Throws kvgate::Error on an inconsistent
  // batch (position past the context, block table too short, bad block id,
  // token id outside the vocabulary) before touching any KV block.
  virtual void forward(std::span<const SequenceStep> batch, Logits& out) = 0;

  // Whole-block copies between the device pool and host memory, for the
  // cache tiers. A block's bytes are opaque outside the backend.
  virtual size_t block_bytes() const = 0;
  virtual void copy_block_to_host(BlockId block, std::span<std::byte> dst) const = 0;
  virtual void copy_block_from_host(BlockId block, std::span<const std::byte> src) = 0;

  // Copies block `src`'s K/V over block `dst`'s, inside the pool: the prefix
  // cache's copy-on-write (a request that must write into a shared block
  // writes into a private copy). This default goes through host memory;
  // backends override it with a device-side copy.
  virtual void copy_block(BlockId src, BlockId dst) {
    std::vector<std::byte> buf(block_bytes());
    copy_block_to_host(src, buf);
    copy_block_from_host(dst, buf);
  }
};

std::unique_ptr<Backend> make_cpu_backend(std::shared_ptr<const Model> model, const BackendOptions& opt);

}  // namespace kvgate
