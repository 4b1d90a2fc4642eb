// The model's weights on the device, uploaded once from the host view
// (engine/weights_view.h) at construction; nothing of the host's is read
// afterwards.
//
// Matrices that read the same activations are fused, as vLLM's
// QKVParallelLinear and MergedColumnParallelLinear are: Q, K and V into one
// [dim + 2 kv_dim][dim] matrix and gate and up into one [2 ffn][dim], so a
// layer runs three GEMMs fewer. A matrix keeps its stored type when all its
// parts have it (F32, F16, BF16 or a block type: gemm.h multiplies each as
// it is, the block types in their blocks, e.g. Q8_0's 34 bytes per 32
// weights, rows as stored); parts of block types that differ (a Q4_K_M
// file's Q4_K Wq and Wk with a Q6_K Wv) keep each its own
// (DeviceMatrix::parts); other mixtures are widened to f32 on the device
// with the host's dequantization arithmetic. The embedding table stays in
// its stored type too: it is gathered a row per token, not multiplied.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "engine/model_config.h"
#include "engine/weights_view.h"
#include "kernels/device_buffer.h"
#include "kernels/gemm.h"

namespace kvgate::cuda {

// The optional vectors are empty buffers (null) when the family has none.
struct DeviceLayer {
  DeviceBuffer attn_norm, ffn_norm;  // f32 [dim]
  DeviceMatrix qkv;                  // [q_dim + 2 kv_dim][dim]: Wq, Wk, Wv
  DeviceMatrix wo;                   // [dim][q_dim]
  DeviceBuffer qkv_bias;             // f32 [q_dim + 2 kv_dim]: bq, bk, bv (a missing one as zeros)
  DeviceBuffer q_norm, k_norm;       // f32 [head_dim]
  DeviceBuffer attn_post_norm, ffn_post_norm;  // f32 [dim]
  DeviceMatrix gate_up;              // [2 ffn][dim]: W_gate, W_up
  DeviceMatrix down;                 // [dim][ffn]
};

struct DeviceWeights {
  WeightType embd_type = WeightType::kF32;
  size_t embd_row_bytes = 0;
  DeviceBuffer embd_storage;
  const void* embd = nullptr;  // embd_storage, or the output head's bytes when tied and alike
  DeviceBuffer output_norm;
  DeviceMatrix output;         // [vocab][dim]
  std::vector<DeviceLayer> layers;
  size_t bytes = 0;            // device memory they take

  // Every matrix a GEMM multiplies: each layer's four and the output head.
  std::vector<const DeviceMatrix*> matrices() const;

  static DeviceWeights upload(const ModelConfig& c, const WeightsView& w, cudaStream_t stream);
};

}  // namespace kvgate::cuda
