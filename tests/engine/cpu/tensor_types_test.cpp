// Every stored weight type runs through both matmul paths (streaming dot
// products for decode, widening + sgemm for prefill) and lands near the f32
// model made from the same seed: the dequantizing kernels read what the
// writer wrote. And every GGUF metadata value type round-trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "engine/cpu/cpu_backend.h"
#include "base/error.h"
#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/model.h"
#include "engine/model/synthetic_model.h"
#include "tests/shared_data.h"

namespace kvgate {
namespace {

namespace fs = std::filesystem;
using kvgate::testing::shared_path;

std::string make_model(TensorType type, const std::string& tag) {
  const std::string path = (fs::temp_directory_path() / ("kvgate-types-" + std::to_string(getpid()) + "-" + tag + ".gguf")).string();
  SyntheticModelSpec s;
  s.layers = 2, s.dim = 64, s.heads = 4, s.kv_heads = 2, s.ffn = 128, s.context = 256;
  s.type = type;
  s.seed = 99;
  s.vocab_from = shared_path("models/stories260K.gguf");
  write_synthetic_model(s, path);
  return path;
}

// Logits of a 40-token prefill (sgemm path) and then of 3 decode steps for
// two sequences at once (the 2x4 tile path) and of one alone (dot products).
std::vector<std::vector<float>> run(const std::string& path) {
  auto model = Model::load(path);
  fs::remove(path);
  auto be = make_cpu_backend(model, {});
  std::vector<BlockId> a(8), b(8);
  std::iota(a.begin(), a.end(), 0);
  std::iota(b.begin(), b.end(), 8);
  Tokens prompt(40);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<TokenId>(3 + (i * 37) % 500);
  std::vector<std::vector<float>> rows;
  Logits out;
  SequenceStep pa{prompt, 0, a, LogitsWanted::kLast}, pb{prompt, 0, b, LogitsWanted::kLast};
  be->forward({&pa, 1}, out);
  rows.emplace_back(out.row(0).begin(), out.row(0).end());
  be->forward({&pb, 1}, out);
  for (int32_t step = 0; step < 3; ++step) {
    TokenId t[2] = {static_cast<TokenId>(10 + step), static_cast<TokenId>(20 + step)};
    SequenceStep both[2] = {{std::span(&t[0], 1), 40 + step, a, LogitsWanted::kLast},
                            {std::span(&t[1], 1), 40 + step, b, LogitsWanted::kLast}};
    be->forward(both, out);
    rows.emplace_back(out.row(0).begin(), out.row(0).end());
    rows.emplace_back(out.row(1).begin(), out.row(1).end());
  }
  return rows;
}

double rms(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += double{x} * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

void expect_close(TensorType type, const char* tag, double rel_tol) {
  const auto ref = run(make_model(TensorType::F32, std::string(tag) + "-ref"));
  const auto got = run(make_model(type, tag));
  ASSERT_EQ(ref.size(), got.size());
  for (size_t r = 0; r < ref.size(); ++r) {
    std::vector<float> diff(ref[r].size());
    for (size_t i = 0; i < diff.size(); ++i) diff[i] = got[r][i] - ref[r][i];
    EXPECT_LT(rms(diff), rel_tol * rms(ref[r])) << tag << " row " << r;
    EXPECT_GT(rms(diff), 0.0) << tag << " row " << r << ": identical to f32, so the type was not exercised";
  }
}

TEST(TensorTypes, F16RunsCloseToF32) { expect_close(TensorType::F16, "f16", 0.01); }
TEST(TensorTypes, Bf16RunsCloseToF32) { expect_close(TensorType::BF16, "bf16", 0.05); }
TEST(TensorTypes, Q8_0RunsCloseToF32) { expect_close(TensorType::Q8_0, "q8_0", 0.05); }

TEST(GgufMetadata, EveryValueTypeRoundTrips) {
  GgufWriter w;
  w.set("u8", {GgufType::UINT8, uint64_t{255}});
  w.set("i8", {GgufType::INT8, int64_t{-128}});
  w.set("u16", {GgufType::UINT16, uint64_t{65535}});
  w.set("i16", {GgufType::INT16, int64_t{-32768}});
  w.set("u32", {GgufType::UINT32, uint64_t{4294967295u}});
  w.set("i32", {GgufType::INT32, int64_t{-2147483647 - 1}});
  w.set("u64", {GgufType::UINT64, uint64_t{18446744073709551615u}});
  w.set("i64", {GgufType::INT64, int64_t{-9223372036854775807 - 1}});
  w.set("f32", {GgufType::FLOAT32, double{0.5}});
  w.set("f64", {GgufType::FLOAT64, double{-1e300}});
  w.set("bool", {GgufType::BOOL, true});
  w.set("str", {GgufType::STRING, std::string("héllo\0x", 8)});
  GgufArray inner{GgufType::INT16, {{GgufType::INT16, int64_t{-1}}, {GgufType::INT16, int64_t{2}}}};
  w.set("nested", {GgufType::ARRAY, GgufArray{GgufType::ARRAY, {{GgufType::ARRAY, inner}}}});
  const auto bytes = w.serialize();
  auto f = GgufFile::parse(bytes);
  EXPECT_EQ(f->get_uint("u8"), 255u);
  EXPECT_EQ(std::get<int64_t>(f->find("i8")->v), -128);
  EXPECT_EQ(f->get_uint("u16"), 65535u);
  EXPECT_EQ(std::get<int64_t>(f->find("i16")->v), -32768);
  EXPECT_EQ(f->get_uint("u32"), 4294967295u);
  EXPECT_EQ(std::get<int64_t>(f->find("i32")->v), -2147483647 - 1);
  EXPECT_EQ(f->get_uint("u64"), 18446744073709551615u);
  EXPECT_EQ(std::get<int64_t>(f->find("i64")->v), -9223372036854775807 - 1);
  EXPECT_EQ(f->get_float("f32"), 0.5);
  EXPECT_EQ(f->get_float("f64"), -1e300);
  EXPECT_TRUE(f->get_bool("bool"));
  EXPECT_EQ(f->get_string("str"), std::string("héllo\0x", 8));
  const GgufArray& outer = f->get_array("nested");
  ASSERT_EQ(outer.elem_type, GgufType::ARRAY);
  const auto& got_inner = std::get<GgufArray>(outer.items.at(0).v);
  EXPECT_EQ(got_inner.elem_type, GgufType::INT16);
  EXPECT_EQ(std::get<int64_t>(got_inner.at(0).v), -1);
  EXPECT_EQ(f->find("i8")->type, GgufType::INT8);
  // A negative integer is not an unsigned count.
  EXPECT_THROW(f->get_uint("i8"), Error);
}

TEST(GgufMetadata, BoolOtherThanZeroOrOneIsRejected) {
  GgufWriter w;
  w.set_bool("b", true);
  auto bytes = w.serialize();
  bytes.back() = std::byte{7};
  EXPECT_THROW(GgufFile::parse(bytes), Error);
}

}  // namespace
}  // namespace kvgate
