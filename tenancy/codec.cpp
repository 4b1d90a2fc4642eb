// Invariant: a Decoder never reads past the end of its input; every read is
// bounds-checked in need(), so a corrupt value becomes an Error, not UB.
#include "tenancy/codec.h"

#include <cstring>

#include "tenancy/error.h"

namespace kvgate::tenancy {

Encoder& Encoder::u8(uint8_t v) {
  out_.push_back(static_cast<char>(v));
  return *this;
}

Encoder& Encoder::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  return *this;
}

Encoder& Encoder::u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  return *this;
}

Encoder& Encoder::bytes(std::string_view v) {
  if (v.size() > UINT32_MAX) throw Error(ErrorCode::kInvalidArgument, "field longer than 4 GiB");
  u32(static_cast<uint32_t>(v.size()));
  out_.append(v);
  return *this;
}

Decoder::Decoder(std::string_view in, uint8_t expected_format, const char* what)
    : in_(in), what_(what) {
  const uint8_t format = u8();
  if (format != expected_format) {
    throw Error(ErrorCode::kCorrupt, std::string(what_) + ": format " + std::to_string(format) +
                                         ", this build reads format " +
                                         std::to_string(expected_format));
  }
}

const char* Decoder::need(size_t n) {
  if (in_.size() - pos_ < n) {
    throw Error(ErrorCode::kCorrupt, std::string(what_) + ": truncated at byte " +
                                         std::to_string(pos_) + " of " +
                                         std::to_string(in_.size()));
  }
  const char* p = in_.data() + pos_;
  pos_ += n;
  return p;
}

uint8_t Decoder::u8() { return static_cast<uint8_t>(*need(1)); }

uint32_t Decoder::u32() {
  const auto* p = reinterpret_cast<const unsigned char*>(need(4));
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{p[i]} << (8 * i);
  return v;
}

uint64_t Decoder::u64() {
  const auto* p = reinterpret_cast<const unsigned char*>(need(8));
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

std::string Decoder::bytes() {
  const uint32_t n = u32();
  return std::string(need(n), n);
}

void Decoder::finish() const {
  if (pos_ != in_.size()) {
    throw Error(ErrorCode::kCorrupt, std::string(what_) + ": " +
                                         std::to_string(in_.size() - pos_) + " trailing bytes");
  }
}

void append_be64(std::string* out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t read_be64(std::string_view in) {
  if (in.size() < 8) throw Error(ErrorCode::kCorrupt, "big-endian u64 key field truncated");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

}  // namespace kvgate::tenancy
