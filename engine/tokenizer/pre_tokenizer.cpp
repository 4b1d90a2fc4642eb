#include "engine/tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>

#include "base/error.h"
#include "engine/tokenizer/gpt2_ascii_match.h"

namespace kvgate {
namespace {

// --- The patterns -----------------------------------------------------------
// Written as PCRE2 syntax; non-ASCII code points as \x{...} so that look-alike
// characters (K vs KELVIN SIGN, Ω vs OHM SIGN) cannot be confused in review.

// GPT-2: contractions, optionally space-led runs of letters / digits / other,
// and whitespace not followed by a non-space (so " word" keeps its space).
constexpr std::string_view kGpt2 =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))re";

// Llama 3: case-insensitive contractions (ASCII only, as llama.cpp adapts
// them), a letter run led by at most one non-letter, digits in threes,
// punctuation runs keeping trailing newlines, newline runs, then spaces.
constexpr std::string_view kLlama3 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Qwen2: Llama 3's pattern with single digits.
constexpr std::string_view kQwen2 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// DeepSeek LLM: an explicit list of cased letters (Lu/Ll/Lt blocks) instead
// of \p{L}, so CJK and other scripts are split by the later passes.
constexpr std::string_view kDeepseekCasedLetters =
    R"re(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293})re"
    R"re(\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A})re"
    R"re(\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556})re"
    R"re(\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF})re"
    R"re(\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D})re"
    R"re(\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D})re"
    R"re(\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3})re"
    R"re(\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107})re"
    R"re(\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D})re"
    R"re(\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184})re"
    R"re(\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D})re"
    R"re(\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF})re"
    R"re(\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F})re"
    R"re(\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2})re"
    R"re(\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)re";
constexpr std::string_view kDeepseekPunct =
    R"re(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)re";
constexpr std::string_view kDeepseekCjk = R"re([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)re";

constexpr std::string_view kDeepseekV3Words =
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// BLOOM-style: a word is anything up to whitespace or sentence punctuation
// (the parentheses and bar inside the class are literal, as in the original).
constexpr std::string_view kBloom =
    R"re( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{964}\x{6D4}\x{60C})]+)re";

// Tekken (Mistral Nemo): PCRE2 can run the original property classes directly.
constexpr std::string_view kTekken =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

struct Spec {
  std::vector<std::string_view> names;
  std::vector<std::string_view> passes;
  bool ignore_merges = false;
};

const std::array<Spec, 12>& specs() {
  static const std::array<Spec, 12> kSpecs = {{
      {{"default", ""},
       {R"re([\p{P}\$\+<=>\^~\|]+)re", kGpt2, R"re(\p{N}+)re", "[0-9][0-9][0-9]"}},
      {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v1-en", "jina-v2-es",
        "jina-v2-de", "jina-v2-code", "roberta-bpe", "mpt", "olmo", "jais"},
       {kGpt2}},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "dbrx", "smaug-bpe"}, {kLlama3}, true},
      {{"qwen2", "megrez", "deepseek-r1-qwen", "stablelm2"}, {kQwen2}},
      {{"deepseek-llm"},
       {"[\\r\\n]", kDeepseekCasedLetters, kDeepseekPunct, R"re(\s+$)re", kDeepseekCjk, R"re(\p{N}+)re"}},
      {{"deepseek-coder"},
       {"[\\r\\n]", R"re(\s?\p{L}+)re", R"re(\s?\p{P}+)re", kDeepseekCjk, R"re(\p{N})re"}},
      {{"deepseek-v3"},
       {R"re(\p{N}{1,3})re", R"re([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)re",
        kDeepseekV3Words}},
      {{"falcon"}, {R"re([\p{P}\$\+<=>\^~\|`]+)re", kGpt2, "[0-9][0-9][0-9]"}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"},
       {R"re(\p{N})re", kGpt2}},
      {{"poro-chat", "bloom", "gpt3-finnish"}, {kBloom}},
      {{"viking"}, {kBloom, R"re(\p{N})re"}},
      {{"tekken"}, {kTekken}, true},
  }};
  return kSpecs;
}

// Per-thread match state: PCRE2 match data and JIT stack must not be shared
// between threads that match at the same time.
struct MatchState {
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;

  MatchState() {
    data = pcre2_match_data_create(1, nullptr);
    context = pcre2_match_context_create(nullptr);
    // The default 32 KiB machine stack is enough for these patterns on
    // normal text; the larger one keeps megabyte-long runs of one class
    // (a pasted log of spaces, a base64 blob) from failing.
    jit_stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
    if (!data || !context || !jit_stack) throw Error("pre-tokenizer: out of memory for PCRE2 match state");
    pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  ~MatchState() {
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
  MatchState(const MatchState&) = delete;
  MatchState& operator=(const MatchState&) = delete;
};

MatchState& match_state() {
  thread_local MatchState state;
  return state;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  if (pcre2_get_error_message(code, buf, sizeof buf) < 0) return "PCRE2 error " + std::to_string(code);
  return reinterpret_cast<const char*>(buf);
}

}  // namespace

class PreTokenizer::Pattern {
 public:
  Pattern(std::string_view pre, std::string_view pattern, bool fast_paths)
      : pre_(pre), gpt2_ascii_(fast_paths && pattern == kGpt2) {
    int err = 0;
    PCRE2_SIZE err_offset = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                          PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY,
                          &err, &err_offset, nullptr);
    if (!code_)
      throw Error("pre-tokenizer '" + pre_ + "': pattern does not compile at offset " +
                  std::to_string(err_offset) + ": " + pcre2_message(err));
    // JIT is an optimisation: without it (unsupported CPU) the interpreter runs.
    jit_ = pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE) == 0;
  }
  ~Pattern() { pcre2_code_free(code_); }
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;

  // Cuts `piece` (at `base` in the whole text) into matches and the gaps
  // between them, appending [begin, end) offsets to `out`.
  void cut(std::string_view text, size_t base, size_t len, std::vector<std::pair<size_t, size_t>>& out) const {
    MatchState& st = match_state();
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + base);
    size_t pos = 0, emitted = 0;
    while (pos < len) {
      if (gpt2_ascii_) {
        size_t b = 0, e = 0;
        const AsciiMatch m = gpt2_ascii_match({text.data() + base, len}, pos, &b, &e);
        if (m == AsciiMatch::NoMatch) {  // the regex search would go on at pos + 1
          ++pos;
          continue;
        }
        if (m == AsciiMatch::Match) {
          if (b > emitted) out.emplace_back(base + emitted, base + b);
          out.emplace_back(base + b, base + e);
          pos = emitted = e;
          continue;
        }
      }
      const int rc = jit_ ? pcre2_jit_match(code_, subject, len, pos, 0, st.data, st.context)
                          : pcre2_match(code_, subject, len, pos, 0, st.data, st.context);
      if (rc == PCRE2_ERROR_NOMATCH) break;
      if (rc < 0)
        throw Error("pre-tokenizer '" + pre_ + "': matching failed on a " + std::to_string(len) +
                    "-byte piece: " + pcre2_message(rc));
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
      const size_t begin = ov[0], end = ov[1];
      if (end == begin) {  // none of the patterns can match empty; never loop on one
        pos = begin + 1;
        continue;
      }
      if (begin > emitted) out.emplace_back(base + emitted, base + begin);
      out.emplace_back(base + begin, base + end);
      pos = emitted = end;
    }
    if (emitted < len) out.emplace_back(base + emitted, base + len);
  }

 private:
  std::string pre_;
  bool gpt2_ascii_;  // decide ASCII text with gpt2_ascii_match, PCRE2 for the rest
  pcre2_code* code_ = nullptr;
  bool jit_ = false;
};

PreTokenizer::PreTokenizer(std::string_view name, bool fast_paths) : name_(name) {
  for (const Spec& spec : specs()) {
    for (std::string_view n : spec.names) {
      if (n != name) continue;
      ignore_merges_ = spec.ignore_merges;
      for (std::string_view p : spec.passes) passes_.push_back(std::make_unique<Pattern>(name, p, fast_paths));
      return;
    }
  }
  std::string known;
  for (std::string_view n : known_names()) known += (known.empty() ? "" : ", ") + std::string(n);
  throw Error("unknown pre-tokenizer '" + std::string(name) +
              "' (tokenizer.ggml.pre); kvgate knows: " + known);
}

PreTokenizer::~PreTokenizer() = default;

std::vector<std::string_view> PreTokenizer::known_names() {
  std::vector<std::string_view> names;
  for (const Spec& spec : specs())
    for (std::string_view n : spec.names)
      if (!n.empty()) names.push_back(n);
  return names;
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& words) const {
  if (text.empty()) return;
  thread_local std::vector<std::pair<size_t, size_t>> cur, next;
  cur.assign(1, {0, text.size()});
  for (const auto& pass : passes_) {
    next.clear();
    for (auto [b, e] : cur) pass->cut(text, b, e - b, next);
    cur.swap(next);
  }
  for (auto [b, e] : cur) words.push_back(text.substr(b, e - b));
}

}  // namespace kvgate
