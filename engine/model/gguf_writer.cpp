#include "engine/model/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "base/error.h"

namespace kvgate {
namespace {

constexpr uint64_t kAlignment = 32;

uint64_t generated_size(const std::string& name, const std::vector<int64_t>& dims, TensorType type) {
  auto traits = tensor_type_traits(static_cast<uint32_t>(type));
  if (!traits) throw Error("GgufWriter: tensor " + name + ": unsupported type");
  if (dims.empty()) throw Error("GgufWriter: tensor " + name + ": no dimensions");
  uint64_t elements = 1;
  for (int64_t d : dims) {
    if (d <= 0) throw Error("GgufWriter: tensor " + name + ": dimension " + std::to_string(d) + " is not positive");
    if (elements > (uint64_t{1} << 62) / static_cast<uint64_t>(d))
      throw Error("GgufWriter: tensor " + name + ": too many elements");
    elements *= static_cast<uint64_t>(d);
  }
  if (dims[0] % traits->block_elems != 0)
    throw Error("GgufWriter: tensor " + name + ": ne0 = " + std::to_string(dims[0]) + " is not a multiple of " +
                std::string(traits->name) + "'s block of " + std::to_string(traits->block_elems));
  return elements / static_cast<uint64_t>(traits->block_elems) * static_cast<uint64_t>(traits->block_bytes);
}

}  // namespace

// Where the file's bytes go: a memory buffer (serialize), or a file that the
// small header bytes reach through that buffer and tensor data reaches directly.
class GgufWriter::Sink {
 public:
  explicit Sink(std::ostream* file = nullptr) : file_(file) {}

  template <typename T>
  void put(T v) {
    put_bytes(&v, sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    put_bytes(s.data(), s.size());
  }
  void put_bytes(const void* p, size_t n) {
    // resize + memcpy rather than insert: GCC 12 misreports insert of a
    // small object as an overflow (-Wstringop-overflow).
    size_t at = buf_.size();
    buf_.resize(at + n);
    if (n) std::memcpy(buf_.data() + at, p, n);
    pos_ += n;
  }
  void pad_to(uint64_t align) {
    static constexpr std::byte zeros[kAlignment] = {};
    if (pos_ % align) put_bytes(zeros, align - pos_ % align);
  }
  void put_tensor(const PendingTensor& t) {
    if (!t.fill) {
      put_bytes(t.data.data(), t.data.size());
    } else if (!file_) {
      size_t at = buf_.size();
      buf_.resize(at + t.nbytes);
      t.fill(std::span(buf_).subspan(at, t.nbytes));
      pos_ += t.nbytes;
    } else {
      flush();
      scratch_.resize(t.nbytes);
      t.fill(scratch_);
      write_out(scratch_.data(), scratch_.size());
      pos_ += t.nbytes;
    }
  }
  void flush() {
    if (!file_) return;
    write_out(buf_.data(), buf_.size());
    buf_.clear();
  }
  std::vector<std::byte> take() { return std::move(buf_); }

 private:
  void write_out(const std::byte* p, size_t n) {
    file_->write(reinterpret_cast<const char*>(p), static_cast<std::streamsize>(n));
    if (!*file_) throw Error(std::string("write failed: ") + std::strerror(errno));
  }

  std::ostream* file_;
  std::vector<std::byte> buf_;
  std::vector<std::byte> scratch_;  // one generated tensor at a time
  uint64_t pos_ = 0;
};

namespace {

void put_value(auto& o, const GgufValue& v) {
  switch (v.type) {
    case GgufType::UINT8: o.template put<uint8_t>(static_cast<uint8_t>(std::get<uint64_t>(v.v))); break;
    case GgufType::INT8: o.template put<int8_t>(static_cast<int8_t>(std::get<int64_t>(v.v))); break;
    case GgufType::UINT16: o.template put<uint16_t>(static_cast<uint16_t>(std::get<uint64_t>(v.v))); break;
    case GgufType::INT16: o.template put<int16_t>(static_cast<int16_t>(std::get<int64_t>(v.v))); break;
    case GgufType::UINT32: o.template put<uint32_t>(static_cast<uint32_t>(std::get<uint64_t>(v.v))); break;
    case GgufType::INT32: o.template put<int32_t>(static_cast<int32_t>(std::get<int64_t>(v.v))); break;
    case GgufType::UINT64: o.template put<uint64_t>(std::get<uint64_t>(v.v)); break;
    case GgufType::INT64: o.template put<int64_t>(std::get<int64_t>(v.v)); break;
    case GgufType::FLOAT32: o.template put<float>(static_cast<float>(std::get<double>(v.v))); break;
    case GgufType::FLOAT64: o.template put<double>(std::get<double>(v.v)); break;
    case GgufType::BOOL: o.template put<uint8_t>(std::get<bool>(v.v) ? 1 : 0); break;
    case GgufType::STRING: o.put_string(std::get<std::string>(v.v)); break;
    case GgufType::ARRAY: {
      const auto& a = std::get<GgufArray>(v.v);
      o.template put<uint32_t>(static_cast<uint32_t>(a.elem_type));
      if (a.packed.empty()) {
        o.template put<uint64_t>(a.items.size());
        for (const GgufValue& item : a.items) put_value(o, item);
        break;
      }
      // A scalar array as read from a file: its elements are already encoded.
      const size_t width = gguf_scalar_size(a.elem_type);
      if (!a.items.empty() || width == 0 || a.packed.size() % width != 0)
        throw Error("GgufWriter: " + std::string(gguf_type_name(a.elem_type)) + " array with " +
                    std::to_string(a.items.size()) + " items and " + std::to_string(a.packed.size()) +
                    " packed bytes");
      o.template put<uint64_t>(a.packed.size() / width);
      o.put_bytes(a.packed.data(), a.packed.size());
      break;
    }
  }
}

}  // namespace

void GgufWriter::set(std::string key, GgufValue value) {
  for (auto& [k, v] : kv_)
    if (k == key) {
      v = std::move(value);
      return;
    }
  kv_.emplace_back(std::move(key), std::move(value));
}

void GgufWriter::add_tensor(std::string name, std::vector<int64_t> dims, TensorType type,
                            std::vector<std::byte> data) {
  uint64_t nbytes = data.size();
  tensors_.push_back({std::move(name), std::move(dims), type, nbytes, std::move(data), nullptr});
}

void GgufWriter::add_generated_tensor(std::string name, std::vector<int64_t> dims, TensorType type,
                                      TensorFill fill) {
  if (!fill) throw Error("GgufWriter: tensor " + name + ": no fill function");
  uint64_t nbytes = generated_size(name, dims, type);
  tensors_.push_back({std::move(name), std::move(dims), type, nbytes, {}, std::move(fill)});
}

void GgufWriter::emit(Sink& o) const {
  o.put<uint32_t>(0x46554747);
  o.put<uint32_t>(3);
  o.put<uint64_t>(tensors_.size());
  o.put<uint64_t>(kv_.size());
  for (const auto& [k, v] : kv_) {
    o.put_string(k);
    o.put<uint32_t>(static_cast<uint32_t>(v.type));
    put_value(o, v);
  }
  uint64_t offset = 0;
  for (const PendingTensor& t : tensors_) {
    o.put_string(t.name);
    o.put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) o.put<uint64_t>(static_cast<uint64_t>(d));
    o.put<uint32_t>(static_cast<uint32_t>(t.type));
    o.put<uint64_t>(offset);
    offset += (t.nbytes + kAlignment - 1) / kAlignment * kAlignment;
  }
  if (!tensors_.empty()) o.pad_to(kAlignment);
  for (const PendingTensor& t : tensors_) {
    o.put_tensor(t);
    o.pad_to(kAlignment);
  }
  o.flush();
}

std::vector<std::byte> GgufWriter::serialize() const {
  Sink o;
  emit(o);
  return o.take();
}

void GgufWriter::write(const std::string& path) const {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error(path + ": cannot create: " + std::strerror(errno));
  try {
    Sink o(&f);
    emit(o);
    f.flush();
    if (!f) throw Error(std::string("write failed: ") + std::strerror(errno));
  } catch (const Error& e) {
    // A half-written model must not be mistaken for a whole one later.
    f.close();
    std::remove(path.c_str());
    throw Error(path + ": " + e.what());
  } catch (...) {
    f.close();
    std::remove(path.c_str());
    throw;
  }
}

}  // namespace kvgate
