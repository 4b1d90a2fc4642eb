// One step's metadata: the batch (batch.h) checked and flattened on the host
// into the arrays the kernels read — token ids, positions and KV slots per
// row, decode queries, prefill tiles, the block tables, and the rows that
// want logits — then packed into one pinned buffer and copied to the device
// in a single transfer.
//
// Rows are the batch's new tokens in batch order (sequence 0's first, ...),
// as the CPU backend flattens them. A sequence with one new token decodes
// (paged_attention.h); one with more prefills, in tiles of
// kPrefillTileRows rows (prefill_attention.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <vector>

#include "engine/batch.h"
#include "engine/model_config.h"
#include "kernels/attention_batch.h"
#include "kernels/device_buffer.h"

namespace kvgate::cuda {

struct StepPlan {
  std::vector<int32_t> tokens, pos;  // per row
  std::vector<int64_t> slots;        // per row: block * block_size + slot
  std::vector<DecodeQuery> decode;
  std::vector<PrefillTile> prefill;
  std::vector<int32_t> tables;       // the sequences' block tables, concatenated
  std::vector<int32_t> head_rows;    // rows whose logits are wanted, in Logits' order

  int64_t rows() const { return static_cast<int64_t>(tokens.size()); }

  // Throws kvgate::Error, naming the sequence, for an inconsistent batch
  // (the CPU backend's checks and messages) before anything is queued.
  void build(std::span<const SequenceStep> batch, const ModelConfig& c, int32_t block_size, int32_t n_blocks);

  // Pads a decode-only plan (no prefill tiles) to `rows` rows, each array
  // as long as a plan of that many decoding sequences, so that one captured
  // CUDA graph serves every step of that size. A padding row is token 0 at
  // position 0, stored nowhere (slot -1), attending over the first real
  // query's position 0, and wanting logits; its results are never read.
  // The real rows' logits stay first, in Logits' order.
  void pad_decode(int64_t rows);
};

// The plan's arrays on the device, valid until the next upload.
struct DeviceStep {
  const int32_t* tokens;
  const int32_t* pos;
  const int64_t* slots;
  const DecodeQuery* decode;
  const PrefillTile* prefill;
  const int32_t* tables;
  const int32_t* head_rows;
};

class StepUploader {
 public:
  // Queues the copy on `stream`. The pinned staging buffer is reused by the
  // next call, so the caller synchronizes `stream` between steps (forward()
  // does, reading the logits back).
  DeviceStep upload(const StepPlan& plan, cudaStream_t stream);

 private:
  PinnedBuffer host_;
  DeviceBuffer device_;
};

}  // namespace kvgate::cuda
