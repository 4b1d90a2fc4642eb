// GGUF reader: llama.cpp's model file format, versions 2 and 3.
//
// Layout: magic "GGUF", version, tensor count, metadata count, metadata
// key/value pairs, tensor infos, then (aligned to general.alignment, default
// 32) the tensor data. Every count, length and offset read from the file is
// checked against the bytes that remain, so a truncated or hostile file gives
// a kvgate::Error naming the problem, never an out-of-bounds read, and
// nothing is allocated for a count before that check. Scalar arrays are kept
// as encoded (see GgufArray): a large one costs its size in the file, not a
// GgufValue per element.
//
// GgufFile::open memory-maps the file; tensor data is read in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/model/tensor_type.h"

namespace kvgate {

enum class GgufType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5,
  FLOAT32 = 6, BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11,
  FLOAT64 = 12,
};
std::string_view gguf_type_name(GgufType t);

// Bytes one element of a scalar type takes in the file (1 for UINT8, INT8 and
// BOOL, up to 8); 0 for STRING and ARRAY, which have no fixed size.
size_t gguf_scalar_size(GgufType t);

struct GgufValue;
// A metadata array. Its elements are held in one of two ways:
//  - `items`, a GgufValue each: always for STRING and ARRAY elements, and for
//    scalar arrays built by hand (writers and tests fill `items`);
//  - `packed`, for scalar arrays read from a file: the elements as the file
//    encodes them, gguf_scalar_size(elem_type) little-endian bytes each, so
//    that N one-byte elements cost N bytes, not N GgufValues (a large or
//    hostile file would otherwise cost tens of heap bytes per file byte).
// size() and at() read either way; use them, not `items`, for scalar arrays.
struct GgufArray {
  GgufType elem_type;
  std::vector<GgufValue> items;
  std::vector<std::byte> packed;

  size_t size() const;
  bool empty() const { return size() == 0; }
  // Element i as a value (a copy), integers widened as for a single value;
  // throws std::out_of_range when i >= size().
  GgufValue at(size_t i) const;
};

// One metadata value. Integers are widened (the original type is kept in
// `type`) so that callers can ask for "an unsigned integer" regardless of
// which width a converter chose.
struct GgufValue {
  GgufType type;
  std::variant<uint64_t, int64_t, double, bool, std::string, GgufArray> v;
};

struct GgufTensor {
  std::string name;
  std::vector<int64_t> dims;  // ne[0] first: ne[0] is the contiguous dimension
  TensorType type;
  uint64_t offset;            // from the start of the data section
  uint64_t nbytes;
  const std::byte* data;      // points into the mapping

  int64_t elements() const;
  int64_t rows() const { return elements() / dims[0]; }
};

namespace gguf_detail {
class Cursor;  // bounds-checked reads over the file's bytes (gguf.cpp)
}

class GgufFile {
 public:
  // Maps and parses a file; throws kvgate::Error naming the file and problem.
  static std::unique_ptr<GgufFile> open(const std::string& path);
  // Parses bytes owned by the caller (they must outlive the GgufFile).
  static std::unique_ptr<GgufFile> parse(std::span<const std::byte> bytes,
                                         std::string source_name = "<memory>");
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  uint32_t version() const { return version_; }
  const std::string& source() const { return source_; }
  std::span<const std::byte> bytes() const { return bytes_; }
  std::span<const std::byte> tensor_data() const { return data_; }

  const std::map<std::string, GgufValue, std::less<>>& metadata() const { return kv_; }
  const GgufValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Typed accessors: throw kvgate::Error if the key is missing or has another
  // type; the optional_* forms return nullopt when missing.
  std::string get_string(std::string_view key) const;
  uint64_t get_uint(std::string_view key) const;   // any unsigned/non-negative integer
  double get_float(std::string_view key) const;    // FLOAT32/FLOAT64 or an integer
  bool get_bool(std::string_view key) const;
  const GgufArray& get_array(std::string_view key) const;
  std::optional<std::string> optional_string(std::string_view key) const;
  std::optional<uint64_t> optional_uint(std::string_view key) const;
  std::optional<double> optional_float(std::string_view key) const;
  std::optional<bool> optional_bool(std::string_view key) const;

  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* find_tensor(std::string_view name) const;
  // Throws if the tensor is missing or its dims differ from `dims`.
  const GgufTensor& tensor(std::string_view name, std::span<const int64_t> dims) const;

 private:
  using Cursor = gguf_detail::Cursor;
  struct Counts {
    uint64_t tensors;
    uint64_t metadata;
  };
  GgufFile() = default;
  // parse_all runs the steps below in file order; each throws kvgate::Error
  // naming the file, the problem and the byte it was found at.
  void parse_all();
  Counts read_header(Cursor& c);                        // magic, version, counts
  void read_metadata(Cursor& c, uint64_t n_kv);         // the key/value pairs
  uint64_t data_alignment(const Cursor& c) const;       // general.alignment, checked
  void read_tensor_infos(Cursor& c, uint64_t n_tensors, uint64_t alignment);
  void place_tensor_data(size_t end_of_infos, uint64_t alignment);  // data_ and each tensor's data

  std::string source_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  std::span<const std::byte> bytes_;
  std::span<const std::byte> data_;
  uint32_t version_ = 0;
  std::map<std::string, GgufValue, std::less<>> kv_;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace kvgate
