// Feeds arbitrary bytes (invalid UTF-8 included) through every vocabulary's
// encode and decode. Must hold for any input:
//  - no crash, no sanitizer report; encode throws nothing;
//  - every id is inside the vocabulary;
//  - decode(encode(x)) == x, byte for byte, for valid UTF-8 x; for SPM only
//    when x has no U+2581 (SentencePiece decodes '▁' as a space; the
//    dummy-prefix space is dropped again by decode). Invalid UTF-8 is not
//    always recoverable: deepseek-llm spells the bytes that never occur in
//    UTF-8 (C0, C1, F5..FF) with user-defined tokens that decode as text.
//    Bytes a BPE vocabulary has no character for (falcon lacks several
//    control bytes, starcoder F1) are dropped, as in llama.cpp and HF, so
//    text holding them is exempt too.
//  - the streaming decoder yields valid UTF-8 equal to utf8_sanitize(decode).
// Input layout: byte 0 picks the vocabulary (low bits) and the mode: bit 7
// parses special tokens, bit 6 reads the rest as little-endian ids to decode.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "engine/tokenizer/gpt2_byte_map.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/text/stream_decoder.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"

namespace {

struct Vocabulary {
  std::unique_ptr<kvgate::GgufFile> file;
  std::unique_ptr<kvgate::Tokenizer> tok;
  std::array<bool, 256> byte_known{};  // BPE: the byte's character is a token
};

std::vector<Vocabulary>& vocabularies() {
  static std::vector<Vocabulary> all = [] {
    const char* env = std::getenv("KVGATE_SHARED");
    const std::string root = env && *env ? env : KVGATE_SHARED_DIR;
    std::vector<Vocabulary> v;
    for (const char* rel : {"testdata/ggml-vocab-llama-spm.gguf", "models/stories260K.gguf",
                            "testdata/ggml-vocab-gpt-2.gguf", "testdata/ggml-vocab-deepseek-llm.gguf",
                            "testdata/ggml-vocab-falcon.gguf", "testdata/ggml-vocab-mpt.gguf",
                            "testdata/ggml-vocab-starcoder.gguf", "testdata/ggml-vocab-refact.gguf"}) {
      Vocabulary voc;
      voc.file = kvgate::GgufFile::open(root + "/" + rel);
      voc.tok = kvgate::Tokenizer::from_gguf(*voc.file);
      for (int b = 0; b < 256; ++b)
        voc.byte_known[b] = voc.tok->vocab().kind() == kvgate::VocabKind::Spm ||
                            voc.tok->vocab().find(kvgate::gpt2_byte_to_text(static_cast<uint8_t>(b))) != kvgate::kNoToken;
      v.push_back(std::move(voc));
    }
    return v;
  }();
  return all;
}

[[noreturn]] void fail(const char* what, const kvgate::Tokenizer& tok) {
  std::fprintf(stderr, "tokenizer_fuzz: %s (vocabulary %s, pre '%s')\n", what,
               tok.vocab().source().c_str(), tok.vocab().pre().c_str());
  std::abort();
}

void check_stream(const kvgate::Tokenizer& tok, const kvgate::Tokens& ids, const std::string& decoded) {
  kvgate::StreamDecoder d(tok);
  std::string streamed;
  for (kvgate::TokenId id : ids) {
    const std::string part = d.push(id);
    if (!kvgate::utf8_is_valid(part)) fail("StreamDecoder::push returned invalid UTF-8", tok);
    streamed += part;
  }
  streamed += d.finish();
  if (streamed != kvgate::utf8_sanitize(decoded)) fail("stream != sanitize(decode)", tok);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto& all = vocabularies();
  const uint8_t mode = data[0];
  const Vocabulary& voc = all[mode % all.size()];
  const kvgate::Tokenizer& tok = *voc.tok;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  if (mode & 0x40) {  // decode arbitrary ids
    kvgate::Tokens ids;
    for (size_t i = 0; i + 2 <= text.size(); i += 2)
      ids.push_back(static_cast<kvgate::TokenId>((static_cast<uint8_t>(text[i]) |
                                                  static_cast<uint8_t>(text[i + 1]) << 8) % tok.n_vocab()));
    check_stream(tok, ids, tok.decode(ids));
    return 0;
  }

  // The hand-written ASCII matcher must split exactly as PCRE2 alone does.
  static const kvgate::PreTokenizer fast("gpt-2"), slow("gpt-2", /*fast_paths=*/false);
  std::vector<std::string_view> a, b;
  fast.split(text, a);
  slow.split(text, b);
  if (a != b) fail("gpt-2 ASCII fast path disagrees with PCRE2", tok);

  const bool parse_special = mode & 0x80;
  kvgate::Tokens ids;
  try {
    ids = tok.encode(text, {.add_bos = true, .parse_special = parse_special});
  } catch (const kvgate::Error&) {
    fail("encode threw", tok);
  }
  for (kvgate::TokenId id : ids)
    if (id < 0 || id >= tok.n_vocab()) fail("id outside the vocabulary", tok);

  const std::string decoded = tok.decode(ids);
  check_stream(tok, ids, decoded);
  if (parse_special) return 0;  // special tokens decode to nothing: no round trip
  const bool spm = tok.vocab().kind() == kvgate::VocabKind::Spm;
  bool round_trips =
      kvgate::utf8_is_valid(text) && (!spm || text.find("\xE2\x96\x81") == std::string_view::npos);
  for (char c : text) round_trips = round_trips && voc.byte_known[static_cast<uint8_t>(c)];
  if (round_trips && decoded != text) fail("decode(encode(x)) != x", tok);
  return 0;
}
