// GGUF writer (version 3): metadata and tensors in, a file out. Used by
// `kvgate mkmodel` and by tests that build small or deliberately broken files.
//
// Tensors come either as bytes held by the writer (add_tensor) or as a
// generator that fills the bytes only while write() streams them to the file
// (add_generated_tensor), so a model of any size is written holding one
// tensor's bytes at a time instead of a second copy of all the weights.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "engine/model/gguf.h"

namespace kvgate {

class GgufWriter {
 public:
  // Fills a tensor's whole storage (out.size() bytes, in its type's layout).
  using TensorFill = std::function<void(std::span<std::byte> out)>;

  void set(std::string key, GgufValue value);
  void set_string(std::string key, std::string v) { set(std::move(key), {GgufType::STRING, std::move(v)}); }
  void set_u32(std::string key, uint32_t v) { set(std::move(key), {GgufType::UINT32, uint64_t{v}}); }
  void set_f32(std::string key, float v) { set(std::move(key), {GgufType::FLOAT32, double{v}}); }
  void set_bool(std::string key, bool v) { set(std::move(key), {GgufType::BOOL, v}); }

  // Adds a tensor whose bytes are already in `type`'s storage layout. The size
  // is not checked against dims, so tests can write deliberately broken files.
  void add_tensor(std::string name, std::vector<int64_t> dims, TensorType type, std::vector<std::byte> data);
  // Adds a tensor whose bytes `fill` produces when the file is written; its
  // size follows from dims and type (throws if dims[0] is not a whole number
  // of the type's blocks). `fill` is called once per serialize()/write().
  void add_generated_tensor(std::string name, std::vector<int64_t> dims, TensorType type, TensorFill fill);

  // The whole file as bytes, and the same streamed to `path` (throws on I/O
  // error, and then removes the partial file).
  std::vector<std::byte> serialize() const;
  void write(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    std::vector<int64_t> dims;
    TensorType type;
    uint64_t nbytes;
    std::vector<std::byte> data;  // empty when `fill` generates the bytes
    TensorFill fill;
  };
  class Sink;
  void emit(Sink& out) const;

  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace kvgate
