// GGUF writer (version 3): metadata and tensors in, a file out. Used by
// `kvgate mkmodel` and by tests that build small or deliberately broken files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/gguf.h"

namespace kvgate {

class GgufWriter {
 public:
  void set(std::string key, GgufValue value);
  void set_string(std::string key, std::string v) { set(std::move(key), {GgufType::STRING, std::move(v)}); }
  void set_u32(std::string key, uint32_t v) { set(std::move(key), {GgufType::UINT32, uint64_t{v}}); }
  void set_f32(std::string key, float v) { set(std::move(key), {GgufType::FLOAT32, double{v}}); }
  void set_bool(std::string key, bool v) { set(std::move(key), {GgufType::BOOL, v}); }

  // Adds a tensor whose bytes are already in `type`'s storage layout.
  void add_tensor(std::string name, std::vector<int64_t> dims, TensorType type, std::vector<std::byte> data);

  // The whole file as bytes, and the same written to `path` (throws on I/O error).
  std::vector<std::byte> serialize() const;
  void write(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    std::vector<int64_t> dims;
    TensorType type;
    std::vector<std::byte> data;
  };
  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace kvgate
