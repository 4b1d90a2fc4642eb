// The registry: a fixed table of the backends compiled in. `cpu` always;
// `cuda` when the build found nvcc (KVGATE_HAVE_CUDA), from kernels/.
// engine/ never includes kernels/ (the dependency arrows point the other
// way), so the two entry points of kernels/cuda_backend.h are declared here;
// a signature that drifted would fail to link, not misbehave.
#include "engine/backend_registry.h"

#include "engine/cpu/cpu_backend.h"
#include "base/error.h"
#include "engine/model/model.h"
#include "engine/model/tensor_type.h"
#include "engine/weights_view.h"

namespace kvgate {

#if defined(KVGATE_HAVE_CUDA)
int cuda_device_count();
std::unique_ptr<Backend> make_cuda_backend(const ModelConfig& config, const WeightsView& weights,
                                           const BackendOptions& opt);
#endif

namespace {

static_assert(static_cast<uint32_t>(WeightType::kF32) == static_cast<uint32_t>(TensorType::F32));
static_assert(static_cast<uint32_t>(WeightType::kF16) == static_cast<uint32_t>(TensorType::F16));
static_assert(static_cast<uint32_t>(WeightType::kBF16) == static_cast<uint32_t>(TensorType::BF16));
static_assert(static_cast<uint32_t>(WeightType::kQ8_0) == static_cast<uint32_t>(TensorType::Q8_0));
static_assert(static_cast<uint32_t>(WeightType::kQ4_0) == static_cast<uint32_t>(TensorType::Q4_0));
static_assert(static_cast<uint32_t>(WeightType::kQ4_1) == static_cast<uint32_t>(TensorType::Q4_1));
static_assert(static_cast<uint32_t>(WeightType::kQ5_0) == static_cast<uint32_t>(TensorType::Q5_0));
static_assert(static_cast<uint32_t>(WeightType::kQ5_1) == static_cast<uint32_t>(TensorType::Q5_1));
static_assert(static_cast<uint32_t>(WeightType::kQ4_K) == static_cast<uint32_t>(TensorType::Q4_K));
static_assert(static_cast<uint32_t>(WeightType::kQ5_K) == static_cast<uint32_t>(TensorType::Q5_K));
static_assert(static_cast<uint32_t>(WeightType::kQ6_K) == static_cast<uint32_t>(TensorType::Q6_K));

// The CUDA backend reads the types WeightType names; a model with any other
// (a type TensorType gains before the backend does) is refused, naming the
// type, rather than read wrong.
[[maybe_unused]] MatrixView view(const Matrix& m) {
  switch (m.type) {
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16:
    case TensorType::Q4_0:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::Q8_0:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K: return {static_cast<WeightType>(m.type), m.rows, m.cols, m.row_bytes, m.data};
  }
  throw Error("the CUDA backend does not read " + std::string(ggml_type_name(static_cast<uint32_t>(m.type))) +
              " weights yet (use --backend cpu)");
}

// The loaded model's tensors as the seam describes them (weights_view.h).
[[maybe_unused]] WeightsView weights_view(const LlamaWeights& w) {
  WeightsView v;
  v.token_embd = view(w.token_embd);
  v.output_norm = w.output_norm;
  v.output = view(w.output);
  for (const LayerWeights& l : w.layers) {
    LayerWeightsView lv{l.attn_norm, view(l.wq), view(l.wk), view(l.wv), view(l.wo), l.ffn_norm, view(l.w_gate),
                        view(l.w_up), view(l.w_down)};
    lv.bq = l.bq, lv.bk = l.bk, lv.bv = l.bv, lv.q_norm = l.q_norm, lv.k_norm = l.k_norm;
    lv.attn_post_norm = l.attn_post_norm, lv.ffn_post_norm = l.ffn_post_norm;
    v.layers.push_back(lv);
  }
  return v;
}

std::unique_ptr<Backend> make_cpu(std::shared_ptr<const Model> model, const BackendOptions& opt) {
  return make_cpu_backend(std::move(model), opt);
}

}  // namespace

std::vector<std::string> built_backends() {
#if defined(KVGATE_HAVE_CUDA)
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

BackendChoice choose_backend(std::string_view name) {
  if (name == "cpu") return {"cpu", true};
#if defined(KVGATE_HAVE_CUDA)
  if (name == "cuda" || (name == "auto" && cuda_device_count() > 0)) return {"cuda", false};
  if (name == "auto") return {"cpu", true};
#else
  if (name == "auto") return {"cpu", true};
  if (name == "cuda") throw Error("this kvgate was built without the CUDA backend (use --backend cpu or auto)");
#endif
  throw Error("unknown backend '" + std::string(name) + "' (expected auto, cpu or cuda)");
}

std::unique_ptr<Backend> make_backend(std::string_view name, std::shared_ptr<const Model> model,
                                      const BackendOptions& opt) {
  // Refuses an unknown name, and cuda on a build without it.
  [[maybe_unused]] const BackendChoice which = choose_backend(name);
#if defined(KVGATE_HAVE_CUDA)
  // The backend copies the weights to the device; `model` may go once it returns.
  if (which.name == "cuda") return make_cuda_backend(model->config(), weights_view(model->weights()), opt);
#endif
  return make_cpu(std::move(model), opt);
}

}  // namespace kvgate
