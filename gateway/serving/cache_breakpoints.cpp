// Breakpoint positions by rendering the request cut at each. Pure.
#include "gateway/serving/cache_breakpoints.h"

#include <algorithm>
#include <optional>
#include <string>

#include "gateway/openai/api_error.h"
#include "gateway/template/text_mark.h"

namespace kvgate::serving {
namespace {

// The bytes `a` and `b` begin with alike, backed off to a whole UTF-8
// character and off a text mark, which belongs to the character after it.
size_t common_text(std::string_view a, std::string_view b) {
  size_t n = static_cast<size_t>(std::mismatch(a.begin(), a.begin() + std::min(a.size(), b.size()), b.begin()).first -
                                 a.begin());
  while (n > 0 && n < b.size() && (static_cast<unsigned char>(b[n]) & 0xC0) == 0x80) --n;
  if (b.substr(0, n).ends_with(jinja::kTextMark)) n -= jinja::kTextMark.size();
  return n;
}

// The render of the request cut at `at`, or none when the template refuses it.
std::optional<std::string> render_cut(const anthropic::MessagesRequest& r, const anthropic::CacheBreakpoint& at,
                                      const openai::ChatTemplate& chat, const openai::PromptEncoder& encoder) {
  std::vector<openai::ChatMessage> messages(r.messages.begin(),
                                            r.messages.begin() + static_cast<std::ptrdiff_t>(
                                                                     std::min(at.messages, r.messages.size())));
  if (!messages.empty() && at.content_bytes < messages.back().content.size())
    messages.back().content.resize(at.content_bytes);
  std::optional<openai::ChatTools> tools = r.tools;
  if (tools && at.tools < tools->names.size()) {
    tools->definitions.resize(at.tools);
    tools->names.resize(at.tools);
  }
  try {
    return chat.render({messages, false, nullptr, tools ? &*tools : nullptr}, encoder);
  } catch (const openai::ApiError&) {
    return std::nullopt;
  }
}

}  // namespace

std::vector<PinSpan> breakpoint_pins(const anthropic::MessagesRequest& request, const openai::ChatTemplate& chat,
                                     const openai::PromptEncoder& encoder, std::string_view rendered,
                                     const Tokens& prompt, int32_t min_tokens) {
  std::vector<PinSpan> pins;
  for (const anthropic::CacheBreakpoint& at : request.breakpoints) {
    const std::optional<std::string> cut = render_cut(request, at, chat, encoder);
    if (!cut) continue;
    const Tokens prefix = encoder.encode(rendered.substr(0, common_text(*cut, rendered)));
    const auto n = std::mismatch(prefix.begin(), prefix.begin() + std::min(prefix.size(), prompt.size()), prompt.begin())
                       .first -
                   prefix.begin();
    if (n >= std::max<int32_t>(min_tokens, 1)) pins.push_back({static_cast<int32_t>(n), at.ttl});
  }
  return pins;
}

}  // namespace kvgate::serving
