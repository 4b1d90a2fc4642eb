// The CUDA backend: the forward pass of a Llama model on one NVIDIA GPU,
// over a paged KV pool in device memory, tested against the CPU backend
// (tests/kernels/). Chosen through the registry (engine/backend_registry.h:
// `--backend auto|cpu|cuda`); the registry declares these two functions
// itself, since engine/ does not include kernels/.
#pragma once

#include <memory>

#include "engine/backend.h"
#include "engine/model_config.h"
#include "engine/weights_view.h"

namespace kvgate {

// Devices the CUDA runtime sees; 0 when there is no driver or no device.
// Never throws.
int cuda_device_count();

// Uploads the weights (the view may go away once this returns), sizes the
// KV pool (opt.kv_type, opt.kv_budget_bytes, opt.memory_utilization) and
// prints a start-up line to stderr: the device, free memory after the
// weights, KV capacity in tokens and the concurrency it allows. Throws
// kvgate::Error when there is no device, the model's shape is one the
// kernels do not take, or memory runs out.
std::unique_ptr<Backend> make_cuda_backend(const ModelConfig& config, const WeightsView& weights,
                                           const BackendOptions& opt);

// What the last forward() of a backend make_cuda_backend returned cost on
// the device: the time from its first queued operation to its last on the
// compute stream (CUDA events), and whether it replayed a captured graph.
// A step's host-side share (planning, launches, the logits' copy back) is
// its wall time less device_seconds. Throws kvgate::Error for any other
// backend.
struct CudaStepTiming {
  double device_seconds = 0;
  bool graph = false;
};
CudaStepTiming cuda_last_step_timing(const Backend& backend);

}  // namespace kvgate
