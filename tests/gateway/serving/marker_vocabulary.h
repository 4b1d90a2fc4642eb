// A tokenizer over a real vocabulary with a family's markup added as
// control tokens, as a converter writes them: what the tool-marker and
// output-grammar tests read markers through. The GGUF (one tiny layer of
// random weights) lives in `dir`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/model/gguf.h"
#include "engine/model/synthetic_model.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/shared_data.h"
#include "tests/temp_dir.h"

namespace kvgate::testing {

struct MarkerVocabulary {
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<Tokenizer> tokenizer;
};

// `from`: a vocabulary file in ../shared/testdata ("ggml-vocab-gpt-2.gguf").
inline MarkerVocabulary marker_vocabulary(const std::string& from, const std::vector<std::string>& controls,
                                          TempDir& dir) {
  SyntheticModelSpec s;
  s.layers = 1, s.dim = 32, s.heads = 1, s.kv_heads = 1, s.ffn = 32;
  s.vocab_from = shared_path("testdata/" + from);
  s.control_tokens = controls;
  const std::string path = dir.sub("model.gguf");
  write_synthetic_model(s, path);
  MarkerVocabulary v{GgufFile::open(path), nullptr};
  v.tokenizer = Tokenizer::from_gguf(*v.file);
  return v;
}

}  // namespace kvgate::testing
