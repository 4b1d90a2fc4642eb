#include "engine/model/gguf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "base/error.h"

namespace kvgate {
namespace gguf_detail {

// Bounds-checked little-endian reads over the file's bytes.
class Cursor {
 public:
  Cursor(std::span<const std::byte> b, const std::string& source) : b_(b), source_(source) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return b_.size() - pos_; }

  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  // The next n bytes, in place.
  std::span<const std::byte> take(size_t n, const char* what) {
    need(n, what);
    auto s = b_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

  std::string read_string(const char* what) {
    uint64_t len = read<uint64_t>(what);
    if (len > remaining())
      fail(std::string(what) + ": string length " + std::to_string(len) + " exceeds the " +
           std::to_string(remaining()) + " bytes left");
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), len);
    pos_ += len;
    return s;
  }

  [[noreturn]] void fail(const std::string& msg) const { fail_at(pos_, msg); }
  [[noreturn]] void fail_at(size_t pos, const std::string& msg) const {
    throw Error(source_ + ": " + msg + " (at byte " + std::to_string(pos) + ")");
  }

 private:
  void need(size_t n, const char* what) {
    if (n > remaining())
      fail(std::string("truncated file: ") + what + " needs " + std::to_string(n) +
           " bytes, " + std::to_string(remaining()) + " left");
  }

  std::span<const std::byte> b_;
  const std::string& source_;
  size_t pos_ = 0;
};

}  // namespace gguf_detail

namespace {

using gguf_detail::Cursor;

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint64_t kDefaultAlignment = 32;
constexpr int kMaxDims = 4;
// Nesting limit for arrays of arrays: real files use one level.
constexpr int kMaxArrayDepth = 4;

bool is_scalar(GgufType t) { return gguf_scalar_size(t) != 0; }

// Smallest encoded size of one element of type t, to bound array counts by
// the bytes that remain before allocating anything.
size_t min_encoded_size(GgufType t) {
  if (is_scalar(t)) return gguf_scalar_size(t);
  return t == GgufType::STRING ? 8 : 12;  // a length; an element type and a length
}

bool valid_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::FLOAT64); }

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// The value of one encoded scalar of type t at p (gguf_scalar_size(t) bytes),
// integers widened. A BOOL byte other than 0 and 1 must be rejected first.
GgufValue decode_scalar(GgufType t, const std::byte* p) {
  switch (t) {
    case GgufType::UINT8: return {t, uint64_t{load<uint8_t>(p)}};
    case GgufType::INT8: return {t, int64_t{load<int8_t>(p)}};
    case GgufType::UINT16: return {t, uint64_t{load<uint16_t>(p)}};
    case GgufType::INT16: return {t, int64_t{load<int16_t>(p)}};
    case GgufType::UINT32: return {t, uint64_t{load<uint32_t>(p)}};
    case GgufType::INT32: return {t, int64_t{load<int32_t>(p)}};
    case GgufType::UINT64: return {t, load<uint64_t>(p)};
    case GgufType::INT64: return {t, load<int64_t>(p)};
    case GgufType::FLOAT32: return {t, double{load<float>(p)}};
    case GgufType::FLOAT64: return {t, load<double>(p)};
    case GgufType::BOOL: return {t, load<uint8_t>(p) == 1};
    case GgufType::STRING: case GgufType::ARRAY: break;
  }
  throw Error("gguf: " + std::string(gguf_type_name(t)) + " is not a scalar type");
}

// Fails at byte `start + i + 1` (just past it, as a single read would) if
// the i-th of the bool bytes at `start` is neither 0 nor 1.
void check_bools(const Cursor& c, size_t start, std::span<const std::byte> bytes) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto b = static_cast<uint8_t>(bytes[i]);
    if (b > 1) c.fail_at(start + i + 1, "bool value " + std::to_string(b) + " is neither 0 nor 1");
  }
}

GgufValue read_value(Cursor& c, GgufType type, int depth) {
  if (is_scalar(type)) {
    static constexpr const char* kWhat[] = {"uint8 value", "int8 value", "uint16 value", "int16 value",
                                            "uint32 value", "int32 value", "float32 value", "bool value",
                                            "string value", "array value", "uint64 value", "int64 value",
                                            "float64 value"};
    const size_t start = c.pos();
    auto bytes = c.take(gguf_scalar_size(type), kWhat[static_cast<uint32_t>(type)]);
    if (type == GgufType::BOOL) check_bools(c, start, bytes);
    return decode_scalar(type, bytes.data());
  }
  if (type == GgufType::STRING) return {type, c.read_string("string value")};
  // ARRAY
  if (depth >= kMaxArrayDepth) c.fail("arrays nested too deeply");
  uint32_t et = c.read<uint32_t>("array element type");
  if (!valid_type(et)) c.fail("array of unknown value type " + std::to_string(et));
  uint64_t n = c.read<uint64_t>("array length");
  auto elem = static_cast<GgufType>(et);
  if (n > c.remaining() / min_encoded_size(elem))
    c.fail("array length " + std::to_string(n) + " exceeds the bytes left");
  GgufArray arr{elem, {}, {}};
  if (is_scalar(elem)) {
    // Kept as encoded: n is bounded above, so n * size fits in what remains.
    const size_t start = c.pos();
    auto bytes = c.take(static_cast<size_t>(n) * gguf_scalar_size(elem), "array elements");
    if (elem == GgufType::BOOL) check_bools(c, start, bytes);
    arr.packed.assign(bytes.begin(), bytes.end());
  } else {
    arr.items.reserve(n);
    for (uint64_t i = 0; i < n; ++i) arr.items.push_back(read_value(c, elem, depth + 1));
  }
  return {type, std::move(arr)};
}

[[noreturn]] void key_error(const std::string& source, std::string_view key, const std::string& msg) {
  throw Error(source + ": metadata key '" + std::string(key) + "' " + msg);
}

}  // namespace

std::string_view gguf_type_name(GgufType t) {
  static constexpr std::string_view names[] = {"uint8", "int8", "uint16", "int16", "uint32",
                                               "int32", "float32", "bool", "string", "array",
                                               "uint64", "int64", "float64"};
  auto i = static_cast<uint32_t>(t);
  return i < std::size(names) ? names[i] : "unknown";
}

size_t gguf_scalar_size(GgufType t) {
  switch (t) {
    case GgufType::UINT8: case GgufType::INT8: case GgufType::BOOL: return 1;
    case GgufType::UINT16: case GgufType::INT16: return 2;
    case GgufType::UINT32: case GgufType::INT32: case GgufType::FLOAT32: return 4;
    case GgufType::UINT64: case GgufType::INT64: case GgufType::FLOAT64: return 8;
    case GgufType::STRING: case GgufType::ARRAY: return 0;
  }
  return 0;
}

size_t GgufArray::size() const {
  if (!items.empty() || !is_scalar(elem_type)) return items.size();
  return packed.size() / gguf_scalar_size(elem_type);
}

GgufValue GgufArray::at(size_t i) const {
  if (!items.empty() || !is_scalar(elem_type)) return items.at(i);
  if (i >= size())
    throw std::out_of_range("GgufArray::at: index " + std::to_string(i) + " of " + std::to_string(size()));
  return decode_scalar(elem_type, packed.data() + i * gguf_scalar_size(elem_type));
}

int64_t GgufTensor::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw Error(path + ": cannot stat: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file");
  }
  auto f = std::unique_ptr<GgufFile>(new GgufFile());
  f->source_ = path;
  f->map_size_ = static_cast<size_t>(st.st_size);
  if (f->map_size_ > 0) {
    void* m = mmap(nullptr, f->map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      throw Error(path + ": cannot map: " + std::strerror(e));
    }
    f->map_ = m;
  }
  ::close(fd);
  f->bytes_ = {static_cast<const std::byte*>(f->map_), f->map_size_};
  f->parse_all();
  return f;
}

std::unique_ptr<GgufFile> GgufFile::parse(std::span<const std::byte> bytes, std::string source_name) {
  auto f = std::unique_ptr<GgufFile>(new GgufFile());
  f->source_ = std::move(source_name);
  f->bytes_ = bytes;
  f->parse_all();
  return f;
}

GgufFile::~GgufFile() {
  if (map_) munmap(map_, map_size_);
}

void GgufFile::parse_all() {
  Cursor c(bytes_, source_);
  const Counts n = read_header(c);
  read_metadata(c, n.metadata);
  const uint64_t alignment = data_alignment(c);
  read_tensor_infos(c, n.tensors, alignment);
  place_tensor_data(c.pos(), alignment);
}

GgufFile::Counts GgufFile::read_header(Cursor& c) {
  if (bytes_.size() < 4) c.fail("not a GGUF file: shorter than the 4-byte magic");
  uint32_t magic = c.read<uint32_t>("magic");
  if (magic != kMagic) c.fail("not a GGUF file: wrong magic (expected \"GGUF\")");
  version_ = c.read<uint32_t>("version");
  if (version_ == 1)
    c.fail("GGUF version 1 is a legacy format kvgate does not read; re-convert the model with a current llama.cpp");
  if (version_ != 2 && version_ != 3)
    c.fail("unsupported GGUF version " + std::to_string(version_) + " (kvgate reads 2 and 3)");
  Counts n;
  n.tensors = c.read<uint64_t>("tensor count");
  n.metadata = c.read<uint64_t>("metadata count");
  return n;
}

void GgufFile::read_metadata(Cursor& c, uint64_t n_kv) {
  // Minimal pair: key length (8), value type (4).
  if (n_kv > c.remaining() / (8 + 4))
    c.fail("metadata count " + std::to_string(n_kv) + " exceeds the bytes left");
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.read_string("metadata key");
    uint32_t t = c.read<uint32_t>("metadata value type");
    if (!valid_type(t)) c.fail("metadata key '" + key + "' has unknown value type " + std::to_string(t));
    GgufValue v = read_value(c, static_cast<GgufType>(t), 0);
    if (!kv_.emplace(key, std::move(v)).second) c.fail("duplicate metadata key '" + key + "'");
  }
}

uint64_t GgufFile::data_alignment(const Cursor& c) const {
  uint64_t alignment = kDefaultAlignment;
  if (auto a = optional_uint("general.alignment")) {
    alignment = *a;
    if (alignment == 0 || !std::has_single_bit(alignment) || alignment > (1u << 20))
      c.fail("general.alignment " + std::to_string(alignment) + " is not a power of two up to 1 MiB");
  }
  return alignment;
}

void GgufFile::read_tensor_infos(Cursor& c, uint64_t n_tensors, uint64_t alignment) {
  // Minimal tensor info: name length (8), n_dims (4), one dim (8), type (4), offset (8).
  if (n_tensors > c.remaining() / 32)
    c.fail("tensor count " + std::to_string(n_tensors) + " exceeds the bytes left");
  tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensor t;
    t.name = c.read_string("tensor name");
    uint32_t n_dims = c.read<uint32_t>("tensor dimension count");
    if (n_dims == 0 || n_dims > kMaxDims)
      c.fail("tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions (1 to 4 allowed)");
    int64_t elems = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t ne = c.read<uint64_t>("tensor dimension");
      if (ne == 0 || ne > (uint64_t{1} << 40) ||
          static_cast<uint64_t>(elems) > (uint64_t{1} << 50) / ne)
        c.fail("tensor '" + t.name + "' has an impossible shape");
      elems *= static_cast<int64_t>(ne);
      t.dims.push_back(static_cast<int64_t>(ne));
    }
    uint32_t type = c.read<uint32_t>("tensor type");
    auto traits = tensor_type_traits(type);
    if (!traits)
      c.fail("tensor '" + t.name + "' has type " + std::string(ggml_type_name(type)) +
             ", which kvgate does not read (it reads F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, "
             "Q6_K)");
    t.type = static_cast<TensorType>(type);
    if (t.dims[0] % traits->block_elems != 0)
      c.fail("tensor '" + t.name + "': row length " + std::to_string(t.dims[0]) +
             " is not a multiple of the " + std::string(traits->name) + " block size");
    t.nbytes = static_cast<uint64_t>(elems / traits->block_elems * traits->block_bytes);
    t.offset = c.read<uint64_t>("tensor offset");
    if (t.offset % alignment != 0)
      c.fail("tensor '" + t.name + "' offset " + std::to_string(t.offset) + " is not aligned to " +
             std::to_string(alignment));
    if (!tensor_index_.emplace(t.name, tensors_.size()).second)
      c.fail("duplicate tensor name '" + t.name + "'");
    tensors_.push_back(std::move(t));
  }
}

void GgufFile::place_tensor_data(size_t end_of_infos, uint64_t alignment) {
  // The data section starts at the next multiple of the alignment. Vocab-only
  // files (no tensors) may end right after the header with no padding.
  size_t data_start = end_of_infos;
  if (data_start % alignment) data_start += alignment - data_start % alignment;
  if (tensors_.empty()) {
    data_ = {};
    return;
  }
  if (data_start > bytes_.size())
    throw Error(source_ + ": truncated file: tensor data section starts past the end");
  data_ = bytes_.subspan(data_start);
  for (GgufTensor& t : tensors_) {
    if (t.offset > data_.size() || t.nbytes > data_.size() - t.offset)
      throw Error(source_ + ": truncated file: tensor '" + t.name + "' (" + std::to_string(t.nbytes) +
                  " bytes at data offset " + std::to_string(t.offset) + ") extends past the end (" +
                  std::to_string(data_.size()) + " data bytes)");
    t.data = data_.data() + t.offset;
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

std::optional<std::string> GgufFile::optional_string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::STRING)
    key_error(source_, key, "is " + std::string(gguf_type_name(v->type)) + ", expected string");
  return std::get<std::string>(v->v);
}

std::optional<uint64_t> GgufFile::optional_uint(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (auto* u = std::get_if<uint64_t>(&v->v)) return *u;
  if (auto* i = std::get_if<int64_t>(&v->v); i && *i >= 0) return static_cast<uint64_t>(*i);
  key_error(source_, key, "is " + std::string(gguf_type_name(v->type)) + ", expected a non-negative integer");
}

std::optional<double> GgufFile::optional_float(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (auto* d = std::get_if<double>(&v->v)) return *d;
  if (auto* u = std::get_if<uint64_t>(&v->v)) return static_cast<double>(*u);
  if (auto* i = std::get_if<int64_t>(&v->v)) return static_cast<double>(*i);
  key_error(source_, key, "is " + std::string(gguf_type_name(v->type)) + ", expected a number");
}

std::optional<bool> GgufFile::optional_bool(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (auto* b = std::get_if<bool>(&v->v)) return *b;
  key_error(source_, key, "is " + std::string(gguf_type_name(v->type)) + ", expected bool");
}

std::string GgufFile::get_string(std::string_view key) const {
  if (auto v = optional_string(key)) return *v;
  key_error(source_, key, "is missing");
}
uint64_t GgufFile::get_uint(std::string_view key) const {
  if (auto v = optional_uint(key)) return *v;
  key_error(source_, key, "is missing");
}
double GgufFile::get_float(std::string_view key) const {
  if (auto v = optional_float(key)) return *v;
  key_error(source_, key, "is missing");
}
bool GgufFile::get_bool(std::string_view key) const {
  if (auto v = optional_bool(key)) return *v;
  key_error(source_, key, "is missing");
}
const GgufArray& GgufFile::get_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) key_error(source_, key, "is missing");
  if (auto* a = std::get_if<GgufArray>(&v->v)) return *a;
  key_error(source_, key, "is " + std::string(gguf_type_name(v->type)) + ", expected array");
}

const GgufTensor* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensor& GgufFile::tensor(std::string_view name, std::span<const int64_t> dims) const {
  const GgufTensor* t = find_tensor(name);
  if (!t) throw Error(source_ + ": tensor '" + std::string(name) + "' is missing");
  auto shape = [](std::span<const int64_t> d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
  };
  if (!std::equal(t->dims.begin(), t->dims.end(), dims.begin(), dims.end()))
    throw Error(source_ + ": tensor '" + std::string(name) + "' has shape " + shape(t->dims) +
                ", expected " + shape(dims));
  return *t;
}

}  // namespace kvgate
