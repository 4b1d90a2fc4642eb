#include "engine/gguf_writer.h"

#include <cstring>
#include <fstream>

#include "engine/error.h"

namespace kvgate {
namespace {

constexpr uint64_t kAlignment = 32;

class Out {
 public:
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
    size_t at = b.size();
    b.resize(at + n);
    if (n) std::memcpy(b.data() + at, p, n);
  }
  void pad_to(uint64_t align) {
    while (b.size() % align) b.push_back(std::byte{0});
  }
  std::vector<std::byte> b;
};

void put_value(Out& o, const GgufValue& v) {
  switch (v.type) {
    case GgufType::UINT8: o.put<uint8_t>(static_cast<uint8_t>(std::get<uint64_t>(v.v))); break;
    case GgufType::INT8: o.put<int8_t>(static_cast<int8_t>(std::get<int64_t>(v.v))); break;
    case GgufType::UINT16: o.put<uint16_t>(static_cast<uint16_t>(std::get<uint64_t>(v.v))); break;
    case GgufType::INT16: o.put<int16_t>(static_cast<int16_t>(std::get<int64_t>(v.v))); break;
    case GgufType::UINT32: o.put<uint32_t>(static_cast<uint32_t>(std::get<uint64_t>(v.v))); break;
    case GgufType::INT32: o.put<int32_t>(static_cast<int32_t>(std::get<int64_t>(v.v))); break;
    case GgufType::UINT64: o.put<uint64_t>(std::get<uint64_t>(v.v)); break;
    case GgufType::INT64: o.put<int64_t>(std::get<int64_t>(v.v)); break;
    case GgufType::FLOAT32: o.put<float>(static_cast<float>(std::get<double>(v.v))); break;
    case GgufType::FLOAT64: o.put<double>(std::get<double>(v.v)); break;
    case GgufType::BOOL: o.put<uint8_t>(std::get<bool>(v.v) ? 1 : 0); break;
    case GgufType::STRING: o.put_string(std::get<std::string>(v.v)); break;
    case GgufType::ARRAY: {
      const auto& a = std::get<GgufArray>(v.v);
      o.put<uint32_t>(static_cast<uint32_t>(a.elem_type));
      o.put<uint64_t>(a.items.size());
      for (const GgufValue& item : a.items) put_value(o, item);
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
  tensors_.push_back({std::move(name), std::move(dims), type, std::move(data)});
}

std::vector<std::byte> GgufWriter::serialize() const {
  Out o;
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
    offset += (t.data.size() + kAlignment - 1) / kAlignment * kAlignment;
  }
  if (!tensors_.empty()) o.pad_to(kAlignment);
  for (const PendingTensor& t : tensors_) {
    o.put_bytes(t.data.data(), t.data.size());
    o.pad_to(kAlignment);
  }
  return o.b;
}

void GgufWriter::write(const std::string& path) const {
  std::vector<std::byte> bytes = serialize();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error(path + ": cannot create: " + std::strerror(errno));
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.flush();
  if (!f) throw Error(path + ": write failed: " + std::strerror(errno));
}

}  // namespace kvgate
