// llama.cpp's reference tokenizer vectors (shared/testdata/ggml-vocab-*):
// every input must give exactly the expected ids (no BOS, parse_special off),
// and decoding the expected ids must give back the input byte for byte.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "base/error.h"
#include "engine/text/stream_decoder.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"
#include "tests/shared_data.h"

namespace kvgate {
namespace {

using kvgate::testing::read_file;
using kvgate::testing::shared_path;

struct Vectors {
  std::vector<std::string> inputs;
  std::vector<Tokens> expected;
};

Vectors read_vectors(const std::string& vocab) {
  Vectors v;
  const std::string inp = read_file(shared_path("testdata/" + vocab + ".inp"));
  const std::string sep = "\n__ggml_vocab_test__\n";
  for (size_t pos = 0;;) {
    const size_t next = inp.find(sep, pos);
    if (next == std::string::npos) break;  // the piece after the last separator is not a test
    v.inputs.push_back(inp.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::istringstream out(read_file(shared_path("testdata/" + vocab + ".out")));
  for (std::string line; std::getline(out, line);) {
    std::istringstream ids(line);
    Tokens t;
    for (TokenId id; ids >> id;) t.push_back(id);
    v.expected.push_back(std::move(t));
  }
  return v;
}

std::string show(const Tokens& t) {
  std::string s;
  for (TokenId id : t) {
    s += ' ';
    s += std::to_string(id);
  }
  return s;
}

class TokenizerVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerVectors, EncodeMatchesReferenceAndDecodeRoundTrips) {
  const std::string vocab = GetParam();
  auto file = GgufFile::open(shared_path("testdata/" + vocab));
  auto tok = Tokenizer::from_gguf(*file);
  const Vectors v = read_vectors(vocab);
  ASSERT_EQ(v.inputs.size(), 46u);
  ASSERT_EQ(v.expected.size(), v.inputs.size());
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    const std::string& in = v.inputs[i];
    EXPECT_EQ(show(tok->encode(in, {.add_bos = false, .parse_special = false})), show(v.expected[i]))
        << vocab << " input #" << i << ": '" << in << "'";
    EXPECT_EQ(tok->decode(v.expected[i]), in) << vocab << " decode of #" << i;
    StreamDecoder d(*tok);
    std::string streamed;
    for (TokenId id : v.expected[i]) streamed += d.push(id);
    streamed += d.finish();
    EXPECT_EQ(streamed, utf8_sanitize(in)) << vocab << " stream of #" << i;
  }
}

INSTANTIATE_TEST_SUITE_P(TokenizerVocab, TokenizerVectors,
                         ::testing::Values("ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf",
                                           "ggml-vocab-deepseek-llm.gguf", "ggml-vocab-falcon.gguf",
                                           "ggml-vocab-mpt.gguf", "ggml-vocab-starcoder.gguf",
                                           "ggml-vocab-refact.gguf"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n;  // ggml-vocab-gpt-2.gguf -> gpt_2
                           for (char c : std::string_view(p.param).substr(11)) {
                             if (c == '.') break;
                             n += c == '-' ? '_' : c;
                           }
                           return n;
                         });

}  // namespace
}  // namespace kvgate
