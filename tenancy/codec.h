// The on-disk encoding of every tenancy record: a leading format byte, then
// fixed-width little-endian integers and u32-length-prefixed byte strings, in
// a fixed order per record type. Explicit and boring on purpose: a reader can
// decode a value by hand, and a decoder rejects truncated or trailing bytes
// instead of guessing. Keys that must sort by number use big-endian helpers.
//
// Each record's order is written down once, in a field list (described
// below) that the encoder and the decoder both walk, so the two directions
// cannot drift apart. tests/tenancy/codec_test.cpp pins the bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

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

// A record's field list is a struct like
//
//   struct PlanFields {
//     using Record = PricePlan;
//     static constexpr uint8_t kFormat = 1;               // the leading byte
//     static constexpr const char* kWhat = "price plan";  // names decode errors
//     template <class R, class Field>  // R: Record or const Record
//     static void visit(R& p, Field& f) { f(p.id); f(p.fresh_input_per_mtok); ... }
//   };
//
// visit() names every field once, in on-disk order. encode_record() drives it
// with a FieldWriter, decode_record() with a FieldReader. The field's C++
// type picks its encoding, identically in both directions: std::string ->
// bytes, uint64_t -> u64, int64_t -> i64, uint32_t -> u32, bool -> u8 (writes
// 0 or 1, reads nonzero as true), an enum over uint8_t -> u8 (not range
// checked; the record's decoder checks what it must). Any other type is a
// compile error, so a new field cannot silently pick a width.
namespace codec_detail {
template <class T>
inline constexpr bool kIsU8Enum = [] {
  if constexpr (std::is_enum_v<T>) return std::is_same_v<std::underlying_type_t<T>, uint8_t>;
  return false;
}();
template <class T>
inline constexpr bool kUnsupported = false;
}  // namespace codec_detail

class FieldWriter {
 public:
  explicit FieldWriter(uint8_t format) : e_(format) {}
  template <class T>
  void operator()(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      e_.bytes(v);
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      e_.u64(v);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      e_.i64(v);
    } else if constexpr (std::is_same_v<T, uint32_t>) {
      e_.u32(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      e_.u8(v ? 1 : 0);
    } else if constexpr (codec_detail::kIsU8Enum<T>) {
      e_.u8(static_cast<uint8_t>(v));
    } else {
      static_assert(codec_detail::kUnsupported<T>, "no encoding for this field type");
    }
  }
  std::string take() { return e_.take(); }

 private:
  Encoder e_;
};

class FieldReader {
 public:
  FieldReader(std::string_view in, uint8_t expected_format, const char* what)
      : d_(in, expected_format, what) {}
  template <class T>
  void operator()(T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      v = d_.bytes();
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      v = d_.u64();
    } else if constexpr (std::is_same_v<T, int64_t>) {
      v = d_.i64();
    } else if constexpr (std::is_same_v<T, uint32_t>) {
      v = d_.u32();
    } else if constexpr (std::is_same_v<T, bool>) {
      v = d_.u8() != 0;
    } else if constexpr (codec_detail::kIsU8Enum<T>) {
      v = static_cast<T>(d_.u8());
    } else {
      static_assert(codec_detail::kUnsupported<T>, "no decoding for this field type");
    }
  }
  void finish() const { d_.finish(); }

 private:
  Decoder d_;
};

template <class Fields>
std::string encode_record(const typename Fields::Record& r) {
  FieldWriter w(Fields::kFormat);
  Fields::visit(r, w);
  return w.take();
}

// Throws Error(kCorrupt) naming Fields::kWhat on a wrong format byte,
// truncation or trailing bytes.
template <class Fields>
typename Fields::Record decode_record(std::string_view v) {
  FieldReader rd(v, Fields::kFormat, Fields::kWhat);
  typename Fields::Record r;
  Fields::visit(r, rd);
  rd.finish();
  return r;
}

// The format byte a record starts with (0 for an empty value): how a record
// type that still reads an older format picks its field list.
inline uint8_t record_format(std::string_view v) { return v.empty() ? 0 : static_cast<uint8_t>(v[0]); }

// Big-endian so that RocksDB's bytewise order is numeric order; the sign bit
// is flipped so negative timestamps sort before positive ones.
void append_be64(std::string* out, uint64_t v);
uint64_t read_be64(std::string_view in);
inline uint64_t ordered_i64(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }
inline int64_t unordered_i64(uint64_t v) { return static_cast<int64_t>(v ^ (uint64_t{1} << 63)); }

}  // namespace kvgate::tenancy
