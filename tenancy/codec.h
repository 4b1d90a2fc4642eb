// The on-disk encoding of every tenancy record: a leading format byte, then
// fixed-width little-endian integers and u32-length-prefixed byte strings, in
// a fixed order per record type. Explicit and boring on purpose: a reader can
// decode a value by hand, and a decoder rejects truncated or trailing bytes
// instead of guessing. Keys that must sort by number use big-endian helpers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kvgate::tenancy {

class Encoder {
 public:
  explicit Encoder(uint8_t format) { out_.push_back(static_cast<char>(format)); }
  Encoder& u8(uint8_t v);
  Encoder& u32(uint32_t v);
  Encoder& u64(uint64_t v);
  Encoder& i64(int64_t v) { return u64(static_cast<uint64_t>(v)); }
  Encoder& bytes(std::string_view v);
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Decodes one value; every failure throws Error(kCorrupt) naming `what`.
class Decoder {
 public:
  // Checks the leading format byte against the one this build writes.
  Decoder(std::string_view in, uint8_t expected_format, const char* what);
  uint8_t u8();
  uint32_t u32();
  uint64_t u64();
  int64_t i64() { return static_cast<int64_t>(u64()); }
  std::string bytes();
  void finish() const;  // throws if bytes remain: a value from a newer format

 private:
  const char* need(size_t n);
  std::string_view in_;
  size_t pos_ = 0;
  const char* what_;
};

// Big-endian so that RocksDB's bytewise order is numeric order; the sign bit
// is flipped so negative timestamps sort before positive ones.
void append_be64(std::string* out, uint64_t v);
uint64_t read_be64(std::string_view in);
inline uint64_t ordered_i64(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }
inline int64_t unordered_i64(uint64_t v) { return static_cast<int64_t>(v ^ (uint64_t{1} << 63)); }

}  // namespace kvgate::tenancy
