#include "kernels/swiglu.h"

#include "kernels/activation_store.cuh"
#include "kernels/cuda_error.h"
#include "kernels/launch.cuh"

namespace kvgate::cuda {
namespace {

// The gated activations, f32 throughout. The GELU keeps the CPU's
// operation order with each product rounded on its own (no contraction into
// FMAs), so the two differ only by tanhf's last bits.
struct Silu {
  __device__ static float apply(float g) { return g / (1.0f + expf(-g)); }
};
struct GeluTanh {
  __device__ static float apply(float g) {
    constexpr float kSqrt2OverPi = 0.79788456080286535588f, kCoef = 0.044715f;
    const float inner = __fmul_rn(__fmul_rn(kSqrt2OverPi, g), __fadd_rn(1.0f, __fmul_rn(__fmul_rn(kCoef, g), g)));
    return __fmul_rn(__fmul_rn(0.5f, g), __fadd_rn(1.0f, tanhf(inner)));
  }
};

template <typename Act, typename T>
__global__ void gated_kernel(const float* gate_up, int64_t n, int32_t ffn, T* out) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= ffn) return;
  for (int64_t r = blockIdx.y; r < n; r += gridDim.y) {
    const float g = gate_up[r * 2 * ffn + i], u = gate_up[r * 2 * ffn + ffn + i];
    store_activation(&out[r * ffn + i], Act::apply(g) * u);
  }
}

template <typename Act>
void gated_rows(const float* gate_up, int64_t n, int32_t ffn, void* out, WeightType out_type, cudaStream_t stream,
                const char* who) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  const dim3 grid(blocks_for(ffn, kThreads), grid_rows(n));
  dispatch_activation_type(out_type, who, [&](auto tag) {
    using T = decltype(tag);
    gated_kernel<Act, T><<<grid, kThreads, 0, stream>>>(gate_up, n, ffn, static_cast<T*>(out));
  });
  check_launch(who);
}

}  // namespace

void swiglu_rows(const float* gate_up, int64_t n, int32_t ffn, void* out, WeightType out_type, cudaStream_t stream) {
  gated_rows<Silu>(gate_up, n, ffn, out, out_type, stream, "swiglu_rows");
}

void geglu_rows(const float* gate_up, int64_t n, int32_t ffn, void* out, WeightType out_type, cudaStream_t stream) {
  gated_rows<GeluTanh>(gate_up, n, ffn, out, out_type, stream, "geglu_rows");
}

}  // namespace kvgate::cuda
