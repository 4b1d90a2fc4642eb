// Tool calls read from a reply, whole or as it streams. Pure.
#include "gateway/openai/tool_call_parser.h"

#include <algorithm>

#include <boost/json.hpp>

namespace kvgate::openai {
namespace json = boost::json;

namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";
constexpr std::string_view kSpace = " \t\r\n";

std::string_view trim(std::string_view s) {
  const std::size_t a = s.find_first_not_of(kSpace);
  if (a == std::string_view::npos) return {};
  return s.substr(a, s.find_last_not_of(kSpace) - a + 1);
}

// One call's JSON, {"name": ..., "<args>": {...}}; none if it is not one.
std::optional<ToolCall> read_call(const ToolCallContext& ctx, std::string_view text, int index) {
  boost::system::error_code ec;
  const json::value v = json::parse(trim(text), ec);
  if (ec || !v.is_object()) return std::nullopt;
  const json::object& o = v.get_object();
  const json::value* name = o.if_contains("name");
  // Llama 3's templates ask for "parameters"; the others, and Llama 3 at times, write "arguments".
  const json::value* args = o.if_contains(ctx.format == ToolCallFormat::kLlama3 ? "parameters" : "arguments");
  if (!args) args = o.if_contains(ctx.format == ToolCallFormat::kLlama3 ? "arguments" : "parameters");
  if (!name || !name->is_string() || !args || !args->is_object()) return std::nullopt;
  const std::string n(name->get_string());
  if (std::find(ctx.names.begin(), ctx.names.end(), n) == ctx.names.end()) return std::nullopt;
  return ToolCall{ctx.id_prefix + std::to_string(index), n, json::serialize(*args)};
}

// The longest tail of `s` that is a proper beginning of `marker`.
std::size_t partial_tail(std::string_view s, std::string_view marker) {
  for (std::size_t n = std::min(s.size(), marker.size() - 1); n > 0; --n)
    if (marker.starts_with(s.substr(s.size() - n))) return n;
  return 0;
}

}  // namespace

std::string_view tool_call_format_name(ToolCallFormat f) {
  switch (f) {
    case ToolCallFormat::kUnread: return "unread";
    case ToolCallFormat::kHermes: return "hermes";
    case ToolCallFormat::kLlama3: return "llama3";
    case ToolCallFormat::kGeneric: return "generic";
  }
  return "unread";
}

ToolReply parse_tool_reply(const ToolCallContext& ctx, std::string_view text) {
  ToolReply r;
  if (ctx.format == ToolCallFormat::kHermes) {
    std::string content;
    std::size_t at = 0;
    while (true) {
      const std::size_t open = text.find(kOpen, at);
      content.append(text.substr(at, open == std::string_view::npos ? std::string_view::npos : open - at));
      if (open == std::string_view::npos) break;
      const std::size_t body = open + kOpen.size();
      const std::size_t close = text.find(kClose, body);
      std::optional<ToolCall> call;
      if (close != std::string_view::npos)
        call = read_call(ctx, text.substr(body, close - body), static_cast<int>(r.calls.size()));
      if (!call) return ToolReply{std::string(text), {}, true};
      r.calls.push_back(std::move(*call));
      at = close + kClose.size();
    }
    r.content = r.calls.empty() ? std::move(content) : std::string(trim(content));
    if (!ctx.parallel && r.calls.size() > 1) r.calls.resize(1);
    return r;
  }
  if (ctx.format == ToolCallFormat::kUnread) return ToolReply{std::string(text), {}, false};
  // llama3, generic: a reply that opens with "{" is a call or (if not one) text.
  if (!trim(text).starts_with('{')) return ToolReply{std::string(text), {}, false};
  std::optional<ToolCall> call = read_call(ctx, text, 0);
  if (!call) return ToolReply{std::string(text), {}, true};
  r.calls.push_back(std::move(*call));
  return r;
}

ToolCallStream::Step ToolCallStream::push(std::string_view text) {
  if (ctx_.format == ToolCallFormat::kHermes) return push_hermes(text);
  Step step;
  if (ctx_.format == ToolCallFormat::kUnread) {
    step.content = text;
    return step;
  }
  held_.append(text);
  if (!decided_) {
    const std::size_t first = held_.find_first_not_of(kSpace);
    if (first == std::string::npos) return step;  // only spaces yet: they may lead a call
    decided_ = true;
    whole_json_ = held_[first] == '{';
  }
  if (!whole_json_) step.content = std::exchange(held_, {});
  return step;
}

ToolCallStream::Step ToolCallStream::push_hermes(std::string_view text) {
  Step step;
  held_.append(text);
  while (true) {
    if (in_call_) {
      const std::size_t close = held_.find(kClose);
      if (close == std::string::npos) return step;
      std::optional<ToolCall> call = read_call(ctx_, std::string_view(held_).substr(0, close), calls_made_);
      if (call) {
        if (ctx_.parallel || calls_made_ == 0) step.calls.push_back(std::move(*call));
        ++calls_made_;
      } else {
        unparsed_ = true;
        step.content += std::string(kOpen) + held_.substr(0, close + kClose.size());
      }
      held_.erase(0, close + kClose.size());
      in_call_ = false;
      continue;
    }
    const std::size_t open = held_.find(kOpen);
    if (open != std::string::npos) {
      const std::string_view before = std::string_view(held_).substr(0, open);
      // After a call, only text that says something is content.
      if (calls_made_ == 0 || !trim(before).empty()) step.content += before;
      held_.erase(0, open + kOpen.size());
      in_call_ = true;
      continue;
    }
    const std::size_t keep = partial_tail(held_, kOpen);
    const std::string_view ready = std::string_view(held_).substr(0, held_.size() - keep);
    if (calls_made_ == 0 || !trim(ready).empty()) {
      step.content += ready;
      held_.erase(0, held_.size() - keep);
    }
    return step;
  }
}

ToolCallStream::Step ToolCallStream::finish() {
  Step step;
  if (ctx_.format == ToolCallFormat::kHermes) {
    if (in_call_) {  // never closed: text, as it came
      unparsed_ = true;
      step.content = std::string(kOpen) + held_;
    } else if (calls_made_ == 0 || !trim(held_).empty()) {
      step.content = held_;
    }
    held_.clear();
    return step;
  }
  if (whole_json_) {
    ToolReply r = parse_tool_reply(ctx_, held_);
    unparsed_ = r.unparsed;
    calls_made_ = static_cast<int>(r.calls.size());
    step.content = std::move(r.content);
    step.calls = std::move(r.calls);
  } else {
    step.content = std::move(held_);
  }
  held_.clear();
  return step;
}

}  // namespace kvgate::openai
