// llama.cpp's reading of a quantized GGUF, for kvgate's dequantization to
// be held to: ggml's own to_float over the file's tensors. Built and run by
// make_quant_vectors.sh against a llama.cpp build (never by CMake: CI has
// no llama.cpp); tests/engine/model/dequantize_test.cpp reads what it
// writes.
//
//   quant_reference blocks FILE N   N blocks of every block-quantized tensor
//                                   (its first, middle and last ones), raw
//                                   and dequantized, one line each
//   quant_reference digest FILE     every tensor's type, and FNV-1a digests
//                                   of its bytes and of its dequantized
//                                   values' bits
#include <ggml.h>
#include <gguf.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

uint64_t fnv1a(const void* data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(data)[i]) * 0x100000001b3ull;
  return h;
}

int fail(const char* what) {
  std::fprintf(stderr, "quant_reference: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: quant_reference blocks FILE N | digest FILE");
  const std::string mode = argv[1];
  ggml_context* ctx = nullptr;
  gguf_context* g = gguf_init_from_file(argv[2], {/*no_alloc=*/false, &ctx});
  if (!g) return fail("cannot read the file");
  const int per_tensor = mode == "blocks" && argc > 3 ? std::atoi(argv[3]) : 0;
  for (int64_t i = 0; i < gguf_get_n_tensors(g); ++i) {
    const char* name = gguf_get_tensor_name(g, i);
    const ggml_tensor* t = ggml_get_tensor(ctx, name);
    const auto* traits = ggml_get_type_traits(t->type);
    const int64_t n = ggml_nelements(t);
    std::vector<float> values(static_cast<size_t>(n));
    if (t->type == GGML_TYPE_F32)
      std::memcpy(values.data(), t->data, values.size() * 4);
    else
      traits->to_float(t->data, values.data(), n);
    if (mode == "digest") {
      std::printf("%s %s %016llx %016llx\n", name, ggml_type_name(t->type),
                  static_cast<unsigned long long>(fnv1a(t->data, ggml_nbytes(t))),
                  static_cast<unsigned long long>(fnv1a(values.data(), values.size() * 4)));
      continue;
    }
    if (!ggml_is_quantized(t->type)) continue;
    const int64_t blocks = n / traits->blck_size;
    for (int k = 0; k < per_tensor; ++k) {
      const int64_t b = per_tensor > 1 ? k * (blocks - 1) / (per_tensor - 1) : 0;
      std::printf("%s %s %lld ", name, ggml_type_name(t->type), static_cast<long long>(b));
      const auto* raw = static_cast<const uint8_t*>(t->data) + b * traits->type_size;
      for (size_t j = 0; j < traits->type_size; ++j) std::printf("%02x", raw[j]);
      std::printf(" ");
      for (int64_t j = 0; j < traits->blck_size; ++j) {
        uint32_t bits;
        std::memcpy(&bits, &values[static_cast<size_t>(b * traits->blck_size + j)], 4);
        std::printf("%08x", bits);
      }
      std::printf("\n");
    }
  }
  gguf_free(g);
  ggml_free(ctx);
  return 0;
}
