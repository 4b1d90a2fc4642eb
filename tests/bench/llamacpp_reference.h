// llama.cpp as the reference the engine benchmark measures kvgate against,
// in the same run on the same GGUF files: its llama-bench (prefill) and
// llama-batched-bench (decode at a batch size), from the build that
// $KVGATE_LLAMACPP_BIN points at (../shared/tools/build-llamacpp.sh).
#pragma once

#include <optional>
#include <string>

namespace kvgate {

class LlamaCppReference {
 public:
  // The reference named by $KVGATE_LLAMACPP_BIN, or nullopt when it is not
  // set; throws kvgate::Error when it is set but the binaries are missing.
  static std::optional<LlamaCppReference> from_env(int threads);

  // Best tokens/s over `reps` runs of llama-bench's pp<n> (prompt of n tokens).
  double prefill_tokens_per_s(const std::string& gguf, int n, int reps) const;
  // Best generation tokens/s over `reps` runs of llama-batched-bench with
  // `batch` sequences of `prompt` tokens each generating `gen` tokens.
  double decode_tokens_per_s(const std::string& gguf, int batch, int prompt, int gen, int reps) const;

  // The build's commit, known after the first prefill run.
  const std::string& version() const { return version_; }
  // The instruction set the build was compiled for, from its CMakeCache.txt:
  // "native (AVX-512 on this CPU)", "AVX2 (GGML_NATIVE=OFF, GGML_AVX2=ON)".
  std::string instruction_set() const;

 private:
  LlamaCppReference(std::string bin, int threads);
  std::string bin_;
  mutable std::string version_;
  int threads_;
};

}  // namespace kvgate
