#include "engine/model/gguf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "base/error.h"
#include "engine/model/float_convert.h"
#include "engine/model/gguf_writer.h"
#include "tests/shared_data.h"

namespace kvgate {
namespace {

using kvgate::testing::shared_path;

std::string error_of(std::span<const std::byte> bytes) {
  try {
    GgufFile::parse(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<std::byte> small_file() {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 2);
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.set("tokenizer.ggml.tokens", {GgufType::ARRAY, GgufArray{GgufType::STRING, {{GgufType::STRING, std::string("a")}, {GgufType::STRING, std::string("b")}}}});
  std::vector<std::byte> data(4 * 8 * sizeof(float));
  for (size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i);
  w.add_tensor("w", {8, 4}, TensorType::F32, data);
  std::vector<std::byte> q(2 * sizeof(BlockQ8_0));
  w.add_tensor("q", {32, 2}, TensorType::Q8_0, q);
  return w.serialize();
}

TEST(Gguf, ReadsStories260K) {
  auto f = GgufFile::open(shared_path("models/stories260K.gguf"));
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_uint("llama.block_count"), 5u);
  EXPECT_FLOAT_EQ(static_cast<float>(f->get_float("llama.attention.layer_norm_rms_epsilon")), 1e-5f);
  EXPECT_EQ(f->get_array("tokenizer.ggml.tokens").items.size(), 512u);
  EXPECT_EQ(f->tensors().size(), 48u);
  const int64_t dims[] = {64, 512};
  const GgufTensor& t = f->tensor("token_embd.weight", dims);
  EXPECT_EQ(t.type, TensorType::F32);
  EXPECT_EQ(t.nbytes, 64u * 512 * 4);
}

TEST(Gguf, ReadsF16Model) {
  auto f = GgufFile::open(shared_path("models/llama-2-tiny-random.gguf"));
  const GgufTensor* t = f->find_tensor("token_embd.weight");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type, TensorType::F16);
  EXPECT_EQ(t->dims, (std::vector<int64_t>{8, 32000}));
}

TEST(Gguf, ReadsVocabOnlyFileWithNoTensors) {
  auto f = GgufFile::open(shared_path("testdata/ggml-vocab-gpt-2.gguf"));
  EXPECT_TRUE(f->tensors().empty());
  EXPECT_EQ(f->get_string("tokenizer.ggml.model"), "gpt2");
}

TEST(Gguf, RejectsVersion1WithAClearMessage) {
  try {
    GgufFile::open(shared_path("testdata/tinyllamas-stories-260k-f32.gguf"));
    FAIL() << "v1 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("version 1"), std::string::npos) << e.what();
  }
}

TEST(Gguf, MissingFileNamesThePath) {
  try {
    GgufFile::open("/nonexistent/model.gguf");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.gguf"), std::string::npos);
  }
}

TEST(Gguf, WriterRoundTrips) {
  auto bytes = small_file();
  auto f = GgufFile::parse(bytes);
  EXPECT_EQ(f->get_uint("llama.block_count"), 2u);
  EXPECT_EQ(std::get<std::string>(f->get_array("tokenizer.ggml.tokens").items[1].v), "b");
  const GgufTensor* w = f->find_tensor("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->rows(), 4);
  EXPECT_EQ(std::memcmp(w->data, bytes.data() + (w->data - bytes.data()), w->nbytes), 0);
  EXPECT_EQ(static_cast<uint8_t>(w->data[5]), 5);
  EXPECT_EQ(f->find_tensor("q")->nbytes, 2 * sizeof(BlockQ8_0));
}

// A Q4_K tensor (256 values a block) in a file, and where its type id and
// its first dimension sit in the header.
struct KQuantFile {
  std::vector<std::byte> bytes;
  size_t dims_at, type_at;
};
KQuantFile k_quant_file() {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.add_tensor("kq", {256, 2}, TensorType::Q4_K, std::vector<std::byte>(2 * sizeof(BlockQ4_K)));
  KQuantFile f{w.serialize(), 0, 0};
  const std::string name = "kq";
  auto at = std::search(f.bytes.begin(), f.bytes.end(), name.begin(), name.end(),
                        [](std::byte b, char c) { return static_cast<char>(b) == c; });
  f.dims_at = static_cast<size_t>(at - f.bytes.begin()) + name.size() + 4;  // past the name and n_dims
  f.type_at = f.dims_at + 2 * 8;
  return f;
}

TEST(Gguf, KQuantTensorsAreReadInPlace) {
  const KQuantFile f = k_quant_file();
  auto g = GgufFile::parse(f.bytes);
  const GgufTensor& t = g->tensors().at(0);
  EXPECT_EQ(t.type, TensorType::Q4_K);
  EXPECT_EQ(t.nbytes, 2 * sizeof(BlockQ4_K));
}

// A type kvgate does not read is refused naming the tensor and the type; a
// k-quant row that is not whole blocks of 256 names the block size.
TEST(Gguf, AnUnreadTypeOrAPartBlockNamesTheTensor) {
  KQuantFile f = k_quant_file();
  const uint32_t q2_k = 10;
  std::memcpy(f.bytes.data() + f.type_at, &q2_k, 4);
  std::string e = error_of(f.bytes);
  EXPECT_NE(e.find("tensor 'kq' has type Q2_K, which kvgate does not read"), std::string::npos) << e;

  f = k_quant_file();
  const uint64_t dims[] = {128, 4};  // as many values, in rows of half a block
  std::memcpy(f.bytes.data() + f.dims_at, dims, sizeof dims);
  e = error_of(f.bytes);
  EXPECT_NE(e.find("tensor 'kq': row length 128 is not a multiple of the Q4_K block size"), std::string::npos) << e;
}

TEST(Gguf, WrongMagic) {
  auto bytes = small_file();
  bytes[0] = std::byte{'X'};
  EXPECT_NE(error_of(bytes).find("wrong magic"), std::string::npos);
}

TEST(Gguf, EveryTruncationIsACleanError) {
  auto bytes = small_file();
  // Padding after the last tensor's data is optional; everything before its end is not.
  auto whole = GgufFile::parse(bytes);
  const GgufTensor& last = whole->tensors().back();
  size_t needed = static_cast<size_t>(last.data - bytes.data()) + last.nbytes;
  EXPECT_NE(error_of(std::span(bytes).first(needed - 1)).find("truncated"), std::string::npos);
  for (size_t n = 0; n < needed; ++n) {
    std::string e = error_of(std::span(bytes).first(n));
    EXPECT_FALSE(e.empty()) << "truncated to " << n << " bytes was accepted";
  }
}

TEST(Gguf, TypeMismatchAndMissingKeyAreNamed) {
  auto f = GgufFile::parse(small_file());
  try {
    f->get_string("llama.block_count");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("llama.block_count"), std::string::npos);
  }
  EXPECT_THROW(f->get_uint("llama.context_length"), Error);
  const int64_t wrong[] = {4, 8};
  try {
    f->tensor("w", wrong);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected [4, 8]"), std::string::npos) << e.what();
  }
}

TEST(Gguf, HugeCountsDoNotAllocate) {
  auto bytes = small_file();
  // metadata count lives at byte 16: claim 2^60 entries.
  uint64_t huge = uint64_t{1} << 60;
  std::memcpy(bytes.data() + 16, &huge, 8);
  EXPECT_NE(error_of(bytes).find("metadata count"), std::string::npos);
}

bool same_scalar(const GgufValue& x, const GgufValue& y) {
  if (x.type != y.type || x.v.index() != y.v.index()) return false;
  if (auto* u = std::get_if<uint64_t>(&x.v)) return *u == std::get<uint64_t>(y.v);
  if (auto* i = std::get_if<int64_t>(&x.v)) return *i == std::get<int64_t>(y.v);
  if (auto* d = std::get_if<double>(&x.v)) return *d == std::get<double>(y.v);
  if (auto* b = std::get_if<bool>(&x.v)) return *b == std::get<bool>(y.v);
  return false;
}

TEST(Gguf, ScalarArraysArePackedAndWriteBackByteForByte) {
  struct Case {
    std::string key;
    GgufType type;
    std::vector<GgufValue> values;
  };
  const std::vector<Case> cases = {
      {"a.bool", GgufType::BOOL, {{GgufType::BOOL, true}, {GgufType::BOOL, false}, {GgufType::BOOL, true}}},
      {"a.f32", GgufType::FLOAT32, {{GgufType::FLOAT32, 0.5}, {GgufType::FLOAT32, -2.25}}},
      {"a.f64", GgufType::FLOAT64, {{GgufType::FLOAT64, -1e300}}},
      {"a.i16", GgufType::INT16, {{GgufType::INT16, int64_t{-32768}}, {GgufType::INT16, int64_t{7}}}},
      {"a.i32", GgufType::INT32, {{GgufType::INT32, int64_t{-5}}, {GgufType::INT32, int64_t{1} << 30}}},
      {"a.i64", GgufType::INT64, {{GgufType::INT64, int64_t{-9223372036854775807 - 1}}}},
      {"a.i8", GgufType::INT8, {{GgufType::INT8, int64_t{-128}}, {GgufType::INT8, int64_t{127}}}},
      {"a.u16", GgufType::UINT16, {{GgufType::UINT16, uint64_t{65535}}}},
      {"a.u32", GgufType::UINT32, {{GgufType::UINT32, uint64_t{4294967295u}}, {GgufType::UINT32, uint64_t{3}}}},
      {"a.u64", GgufType::UINT64, {{GgufType::UINT64, uint64_t{18446744073709551615u}}}},
      {"a.u8", GgufType::UINT8, {{GgufType::UINT8, uint64_t{255}}, {GgufType::UINT8, uint64_t{0}}}},
      {"b.empty_u8", GgufType::UINT8, {}},
  };
  GgufWriter w;
  for (const Case& c : cases) w.set(c.key, {GgufType::ARRAY, GgufArray{c.type, c.values}});
  const std::vector<std::byte> bytes = w.serialize();
  auto f = GgufFile::parse(bytes);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key);
    const GgufArray& a = f->get_array(c.key);
    EXPECT_EQ(a.elem_type, c.type);
    EXPECT_TRUE(a.items.empty());
    EXPECT_EQ(a.packed.size(), c.values.size() * gguf_scalar_size(c.type));
    ASSERT_EQ(a.size(), c.values.size());
    EXPECT_EQ(a.empty(), c.values.empty());
    for (size_t i = 0; i < c.values.size(); ++i) EXPECT_TRUE(same_scalar(a.at(i), c.values[i])) << i;
    EXPECT_THROW(a.at(c.values.size()), std::out_of_range);
  }
  // Parsed (packed) arrays copied into a writer are written as they were read.
  GgufWriter copy;
  for (const auto& [k, v] : f->metadata()) copy.set(k, v);
  EXPECT_EQ(copy.serialize(), bytes);
}

TEST(Gguf, WriterRejectsPackedBytesThatAreNotWholeElements) {
  GgufWriter w;
  w.set("odd", {GgufType::ARRAY, GgufArray{GgufType::UINT16, {}, {std::byte{1}}}});
  EXPECT_THROW(w.serialize(), Error);
  w.set("odd", {GgufType::ARRAY, GgufArray{GgufType::STRING, {}, {std::byte{1}}}});
  EXPECT_THROW(w.serialize(), Error);
}

TEST(Gguf, HandBuiltScalarArraysReadThroughSizeAndAt) {
  const GgufArray a{GgufType::INT16, {{GgufType::INT16, int64_t{-1}}, {GgufType::INT16, int64_t{2}}}};
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(std::get<int64_t>(a.at(1).v), 2);
  EXPECT_THROW(a.at(2), std::out_of_range);
  const GgufArray strings{GgufType::STRING, {{GgufType::STRING, std::string("x")}}};
  EXPECT_EQ(strings.size(), 1u);
  EXPECT_EQ(std::get<std::string>(strings.at(0).v), "x");
}

// A bool that is neither 0 nor 1 is rejected wherever it is, and the error
// names the byte just past it, as for a single bool value.
TEST(Gguf, BadBoolInAnArrayNamesItsByte) {
  GgufWriter w;
  w.set("flags", {GgufType::ARRAY, GgufArray{GgufType::BOOL, {{GgufType::BOOL, true}, {GgufType::BOOL, false},
                                                               {GgufType::BOOL, true}}}});
  w.set("flag", {GgufType::BOOL, true});
  std::vector<std::byte> bytes = w.serialize();
  auto f = GgufFile::parse(bytes);  // well formed as written
  // The three array bytes follow the array's 8-byte length; the single value is the last byte.
  const std::byte run[] = {std::byte{1}, std::byte{0}, std::byte{1}};
  auto at = std::search(bytes.begin(), bytes.end(), std::begin(run), std::end(run));
  ASSERT_NE(at, bytes.end());
  const size_t second = static_cast<size_t>(at - bytes.begin()) + 1;
  bytes[second] = std::byte{2};
  EXPECT_NE(error_of(bytes).find("bool value 2 is neither 0 nor 1 (at byte " + std::to_string(second + 1) + ")"),
            std::string::npos)
      << error_of(bytes);
  bytes[second] = std::byte{0};
  bytes.back() = std::byte{7};
  EXPECT_NE(error_of(bytes).find("bool value 7 is neither 0 nor 1 (at byte " + std::to_string(bytes.size()) + ")"),
            std::string::npos)
      << error_of(bytes);
}

TEST(Gguf, HugeArrayLengthIsRejectedBeforeAllocating) {
  GgufWriter w;
  w.set("big", {GgufType::ARRAY, GgufArray{GgufType::UINT8, {{GgufType::UINT8, uint64_t{1}}}}});
  std::vector<std::byte> bytes = w.serialize();
  // The array's length is the 8 bytes before its single element, the last byte.
  const uint64_t huge = uint64_t{1} << 60;
  std::memcpy(bytes.data() + bytes.size() - 9, &huge, 8);
  EXPECT_NE(error_of(bytes).find("array length 1152921504606846976 exceeds the bytes left"), std::string::npos)
      << error_of(bytes);
}

TEST(FloatConvert, RoundTrips) {
  EXPECT_EQ(f16_to_f32(f32_to_f16(1.5f)), 1.5f);
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(-2.0f)), -2.0f);
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[i] = std::sin(i * 0.37f) * 3;
  std::vector<BlockQ8_0> q(2);
  quantize_row(TensorType::Q8_0, x.data(), q.data(), 64);
  std::vector<float> y(64);
  dequantize_row(TensorType::Q8_0, q.data(), y.data(), 64);
  for (int i = 0; i < 64; ++i) EXPECT_NEAR(x[i], y[i], 3.0 / 127);
}

}  // namespace
}  // namespace kvgate
