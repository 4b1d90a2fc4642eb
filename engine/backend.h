// Backend: where the forward pass runs. Owns the weights' device copy and
// the device KV pool's memory.
//
// The seam between the engine and its backends, header-only so that the
// CUDA backend in kernels/ implements it without depending on the engine's
// libraries (only on this header, batch.h, model_config.h, kv_layout.h and
// weights_view.h).
// The CPU backend is the reference; every other backend is tested against
// it. Which one runs is chosen at run time (backend_registry.h).
//
// Thread ownership: a backend is driven by one thread (the engine loop); it
// is not itself thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/batch.h"
#include "engine/kv_layout.h"
#include "engine/model_config.h"

namespace kvgate {

struct BackendOptions {
  int32_t block_size = 16;      // tokens per KV block
  int64_t kv_budget_bytes = 0;  // KV pool size; 0 = enough for one full context
  // The K/V element type: f32, f16 or bf16 (half the bytes per token, so
  // twice the tokens in the same budget), on either backend.
  KvType kv_type = KvType::kF32;
  // A device backend's share of its device's memory (weights, KV pool and
  // workspace together), vLLM's gpu_memory_utilization: when above 0, the KV
  // pool gets what is left of that share after the weights and workspace,
  // capped by kv_budget_bytes when that is set too. 0: kv_budget_bytes alone.
  double memory_utilization = 0;
  // A device backend replays decode-only steps as captured graphs (CUDA
  // graphs), one per padded batch size, instead of launching each kernel
  // from the host. Off: every step launches its kernels (for comparison).
  bool device_graphs = true;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view name() const = 0;
  virtual const ModelConfig& config() const = 0;
  // The K/V element type and block layout: part of the cache identity.
  virtual KvLayout kv_layout() const = 0;
  // Computed once, at construction, by kv_capacity().
  virtual const KvCapacity& kv_capacity() const = 0;

  int32_t block_size() const { return kv_capacity().block_size; }
  int32_t num_blocks() const { return kv_capacity().num_blocks; }
  size_t block_bytes() const { return static_cast<size_t>(kv_capacity().block_bytes); }

  // Runs one step (see batch.h). Throws kvgate::Error on an inconsistent
  // batch (position past the context, block table too short, bad block id,
  // token id outside the vocabulary) before touching any KV block.
  virtual void forward(std::span<const SequenceStep> batch, Logits& out) = 0;

  // Whole-block copies between the device pool and host memory, for the
  // cache tiers, in kv_layout()'s arrangement. The cache reaches them
  // through cache::BlockCopier (sched/backend_block_copier.h adapts).
  // The exceptions to one driving thread: copy_block_to_host is called by
  // the tiers' mover thread, concurrently with forward(), for a block the
  // mover holds a reference on (cached, so no step writes it); and the
  // driving thread's restore calls copy_block_from_host for distinct blocks
  // from several threads at once (never during forward()), while the mover
  // may be in copy_block_to_host.
  virtual void copy_block_to_host(BlockId block, std::span<std::byte> dst) const = 0;
  virtual void copy_block_from_host(BlockId block, std::span<const std::byte> src) = 0;

  // Why this backend can run no more steps (a device fault that poisons
  // the context), or empty while it can. The engine then refuses new work
  // (EngineFailed) and a server answers 503, rather than accept requests
  // that can only fail.
  virtual std::string failure() const { return {}; }

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

}  // namespace kvgate
