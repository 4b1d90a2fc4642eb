// Tool calls read from a reply, whole or as it streams. Pure.
#include "gateway/openai/tool_call_parser.h"

#include <algorithm>
#include <cctype>

#include <boost/json.hpp>

namespace kvgate::openai {
namespace json = boost::json;

namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";
constexpr std::string_view kSpace = " \t\r\n";

constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kMistralCalls = "[TOOL_CALLS]";
constexpr std::string_view kMistralArgs = "[ARGS]";
constexpr std::string_view kMistralCallId = "[CALL_ID]";
constexpr std::string_view kDeepSeekCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kDeepSeekCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kDeepSeekCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kDeepSeekCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kDeepSeekSep = "<｜tool▁sep｜>";

constexpr std::string_view kLlama3Markers[] = {kPythonTag};
constexpr std::string_view kMistralMarkers[] = {kMistralCalls, kMistralArgs, kMistralCallId};
constexpr std::string_view kDeepSeekMarkers[] = {kDeepSeekCallsBegin, kDeepSeekCallsEnd, kDeepSeekCallBegin,
                                                 kDeepSeekCallEnd, kDeepSeekSep};

std::string_view trim(std::string_view s) {
  const std::size_t a = s.find_first_not_of(kSpace);
  if (a == std::string_view::npos) return {};
  return s.substr(a, s.find_last_not_of(kSpace) - a + 1);
}

bool offered(const ToolCallContext& ctx, std::string_view name) {
  return std::find(ctx.names.begin(), ctx.names.end(), name) != ctx.names.end();
}

std::optional<json::value> parse_json(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(trim(text), ec);
  if (ec) return std::nullopt;
  return v;
}

// A call of an offered function with an object of arguments; none otherwise.
std::optional<ToolCall> make_call(const ToolCallContext& ctx, const json::value* name, const json::value* args,
                                  int index) {
  if (!name || !name->is_string() || !args || !args->is_object()) return std::nullopt;
  const std::string n(name->get_string());
  if (!offered(ctx, n)) return std::nullopt;
  return ToolCall{tool_call_id(ctx, index), n, json::serialize(*args)};
}

// One call's JSON object, {"name": ..., "<args>": {...}}; none if it is not one.
std::optional<ToolCall> call_of(const ToolCallContext& ctx, const json::value& v, int index) {
  if (!v.is_object()) return std::nullopt;
  const json::object& o = v.get_object();
  // Llama 3's templates ask for "parameters"; the others, and Llama 3 at times, write "arguments".
  const json::value* args = o.if_contains(ctx.format == ToolCallFormat::kLlama3 ? "parameters" : "arguments");
  if (!args) args = o.if_contains(ctx.format == ToolCallFormat::kLlama3 ? "arguments" : "parameters");
  return make_call(ctx, o.if_contains("name"), args, index);
}

std::optional<ToolCall> read_call(const ToolCallContext& ctx, std::string_view text, int index) {
  const std::optional<json::value> v = parse_json(text);
  if (!v) return std::nullopt;
  return call_of(ctx, *v, index);
}

// A name, then its arguments' JSON object: the calls of Mistral's newer
// templates and DeepSeek V3.1's.
std::optional<ToolCall> named_call(const ToolCallContext& ctx, std::string_view name, std::string_view args,
                                   int index) {
  const std::optional<json::value> v = parse_json(args);
  const json::value n(std::string(trim(name)));
  return v ? make_call(ctx, &n, &*v, index) : std::nullopt;
}

// The calls after one [TOOL_CALLS]: a JSON array of calls (or one call), or
// "name[ARGS]{...}", maybe with "[CALL_ID]id" before [ARGS] (Small 3.2:
// the model's id is not kept; ours are given as for every call).
std::optional<std::vector<ToolCall>> mistral_calls(const ToolCallContext& ctx, std::string_view text, int first) {
  text = trim(text);
  std::vector<ToolCall> calls;
  if (text.starts_with('[') || text.starts_with('{')) {
    const std::optional<json::value> v = parse_json(text);
    if (!v) return std::nullopt;
    if (!v->is_array()) {
      std::optional<ToolCall> c = call_of(ctx, *v, first);
      if (!c) return std::nullopt;
      calls.push_back(std::move(*c));
      return calls;
    }
    for (const json::value& item : v->get_array()) {
      std::optional<ToolCall> c = call_of(ctx, item, first + static_cast<int>(calls.size()));
      if (!c) return std::nullopt;
      calls.push_back(std::move(*c));
    }
    if (calls.empty()) return std::nullopt;
    return calls;
  }
  const std::size_t args = text.find(kMistralArgs);
  if (args == std::string_view::npos) return std::nullopt;
  std::string_view name = text.substr(0, args);
  if (const std::size_t id = name.find(kMistralCallId); id != std::string_view::npos) name = name.substr(0, id);
  std::optional<ToolCall> c = named_call(ctx, name, text.substr(args + kMistralArgs.size()), first);
  if (!c) return std::nullopt;
  calls.push_back(std::move(*c));
  return calls;
}

// What is between <｜tool▁call▁begin｜> and <｜tool▁call▁end｜>:
// "function<｜tool▁sep｜>name\n```json\n{...}\n```" (V3, R1) or
// "name<｜tool▁sep｜>{...}" (V3.1).
std::optional<ToolCall> deepseek_call(const ToolCallContext& ctx, std::string_view text, int index) {
  const std::size_t sep = text.find(kDeepSeekSep);
  if (sep == std::string_view::npos) return std::nullopt;
  const std::string_view before = text.substr(0, sep);
  const std::string_view after = trim(text.substr(sep + kDeepSeekSep.size()));
  if (after.starts_with('{')) return named_call(ctx, before, after, index);
  const std::size_t fence = after.find("```");
  if (fence == std::string_view::npos) return std::nullopt;
  std::string_view body = after.substr(fence + 3);
  if (body.starts_with("json")) body.remove_prefix(4);
  const std::size_t close = body.rfind("```");
  if (close == std::string_view::npos) return std::nullopt;
  return named_call(ctx, after.substr(0, fence), body.substr(0, close), index);
}

// The longest tail of `s` that is a proper beginning of `marker`.
std::size_t partial_tail(std::string_view s, std::string_view marker) {
  for (std::size_t n = std::min(s.size(), marker.size() - 1); n > 0; --n)
    if (marker.starts_with(s.substr(s.size() - n))) return n;
  return 0;
}

std::string without_markers(std::string_view text, std::span<const std::string_view> markers) {
  std::string out(text);
  for (std::string_view m : markers)
    for (std::size_t at = out.find(m); at != std::string::npos; at = out.find(m, at)) out.erase(at, m.size());
  return out;
}

// Text that can go out now, markers left out: all of `held` when `last`,
// else all but a tail that may still begin a marker.
std::string take_text(std::string& held, std::span<const std::string_view> markers, bool last) {
  std::string text = without_markers(held, markers);
  std::size_t keep = 0;
  if (!last)
    for (std::string_view m : markers) keep = std::max(keep, partial_tail(text, m));
  held = text.substr(text.size() - keep);
  text.resize(text.size() - keep);
  return text;
}

}  // namespace

std::string_view tool_call_format_name(ToolCallFormat f) {
  switch (f) {
    case ToolCallFormat::kUnread: return "unread";
    case ToolCallFormat::kHermes: return "hermes";
    case ToolCallFormat::kLlama3: return "llama3";
    case ToolCallFormat::kMistral: return "mistral";
    case ToolCallFormat::kDeepSeek: return "deepseek";
    case ToolCallFormat::kGeneric: return "generic";
  }
  return "unread";
}

std::optional<ToolCallFormat> tool_call_format_named(std::string_view name) {
  for (ToolCallFormat f : {ToolCallFormat::kHermes, ToolCallFormat::kLlama3, ToolCallFormat::kMistral,
                           ToolCallFormat::kDeepSeek, ToolCallFormat::kGeneric})
    if (tool_call_format_name(f) == name) return f;
  return std::nullopt;
}

std::span<const std::string_view> tool_call_markers(ToolCallFormat f) {
  switch (f) {
    case ToolCallFormat::kLlama3: return kLlama3Markers;
    case ToolCallFormat::kMistral: return kMistralMarkers;
    case ToolCallFormat::kDeepSeek: return kDeepSeekMarkers;
    default: return {};
  }
}

std::string tool_call_id(const ToolCallContext& ctx, int n) {
  if (ctx.format != ToolCallFormat::kMistral) return ctx.id_prefix + std::to_string(n);
  // Mistral's templates (Nemo, Small 3.2) raise unless every id is 9
  // alphanumeric characters when the call comes back in the next turn's
  // history: the prefix's last 7 (the request's random hex), then n in
  // base 36 on two.
  constexpr std::string_view kDigits = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string id;
  for (char c : ctx.id_prefix)
    if (std::isalnum(static_cast<unsigned char>(c))) id.push_back(c);
  id = id.size() >= 7 ? id.substr(id.size() - 7) : std::string(7 - id.size(), '0') + id;
  id.push_back(kDigits[static_cast<std::size_t>(n / 36 % 36)]);
  id.push_back(kDigits[static_cast<std::size_t>(n % 36)]);
  return id;
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
  const std::span<const std::string_view> markers = tool_call_markers(ctx.format);
  if (ctx.format == ToolCallFormat::kMistral || ctx.format == ToolCallFormat::kDeepSeek) {
    // The stream's reading, whole: all calls or all text.
    ToolCallStream s(ctx);
    for (const ToolCallStream::Step& step : {s.push(text), s.finish()}) {
      r.content += step.content;
      r.calls.insert(r.calls.end(), step.calls.begin(), step.calls.end());
    }
    if (s.unparsed()) return ToolReply{without_markers(text, markers), {}, true};
    if (!r.calls.empty()) r.content = std::string(trim(r.content));
    return r;
  }
  // llama3, generic: a reply that opens with "{" (or Llama's <|python_tag|>) is a call or (if not one) text.
  std::string_view json = trim(text);
  const bool tagged = ctx.format == ToolCallFormat::kLlama3 && json.starts_with(kPythonTag);
  if (tagged) json.remove_prefix(kPythonTag.size());
  if (!tagged && !json.starts_with('{')) return ToolReply{without_markers(text, markers), {}, false};
  std::optional<ToolCall> call = read_call(ctx, json, 0);
  if (!call) return ToolReply{without_markers(text, markers), {}, true};
  r.calls.push_back(std::move(*call));
  return r;
}

ToolCallStream::Step ToolCallStream::push(std::string_view text) {
  if (ctx_.format == ToolCallFormat::kHermes) return push_hermes(text);
  if (ctx_.format == ToolCallFormat::kMistral || ctx_.format == ToolCallFormat::kDeepSeek) return push_marked(text);
  Step step;
  if (ctx_.format == ToolCallFormat::kUnread) {
    step.content = text;
    return step;
  }
  held_.append(text);
  if (!decided_) {
    const std::size_t first = held_.find_first_not_of(kSpace);
    if (first == std::string::npos) return step;  // only spaces yet: they may lead a call
    const std::string_view rest = std::string_view(held_).substr(first);
    const bool llama3 = ctx_.format == ToolCallFormat::kLlama3;
    if (llama3 && rest.size() < kPythonTag.size() && kPythonTag.starts_with(rest)) return step;  // may be the tag
    decided_ = true;
    whole_json_ = rest.starts_with('{') || (llama3 && rest.starts_with(kPythonTag));
  }
  if (!whole_json_) step.content = take_text(held_, tool_call_markers(ctx_.format), false);
  return step;
}

bool ToolCallStream::take_calls(std::string_view text, Step& step) {
  std::vector<ToolCall> calls;
  if (ctx_.format == ToolCallFormat::kMistral) {
    std::optional<std::vector<ToolCall>> c = mistral_calls(ctx_, text, calls_made_);
    if (!c) return false;
    calls = std::move(*c);
  } else {
    std::optional<ToolCall> c = deepseek_call(ctx_, text, calls_made_);
    if (!c) return false;
    calls.push_back(std::move(*c));
  }
  for (ToolCall& c : calls) {
    if (ctx_.parallel || calls_made_ == 0) step.calls.push_back(std::move(c));
    ++calls_made_;
  }
  return true;
}

ToolCallStream::Step ToolCallStream::push_marked(std::string_view text) {
  Step step;
  const std::span<const std::string_view> markers = tool_call_markers(ctx_.format);
  const bool mistral = ctx_.format == ToolCallFormat::kMistral;
  held_.append(text);
  while (true) {
    switch (phase_) {
      case Phase::kText: {
        // Mistral's calls open with [TOOL_CALLS]; DeepSeek's with
        // <｜tool▁calls▁begin｜>, which R1 at times leaves out.
        std::size_t open = held_.find(mistral ? kMistralCalls : kDeepSeekCallsBegin);
        std::size_t skip = mistral ? kMistralCalls.size() : kDeepSeekCallsBegin.size();
        if (!mistral) {
          if (const std::size_t call = held_.find(kDeepSeekCallBegin); call < open) open = call, skip = 0;
        }
        if (open == std::string::npos) {
          step.content += take_text(held_, markers, false);
          return step;
        }
        std::string before = held_.substr(0, open);
        step.content += take_text(before, markers, true);
        held_.erase(0, open + skip);
        phase_ = Phase::kCalls;
        continue;
      }
      case Phase::kCalls: {
        if (mistral) {  // a call ends where the next begins, or with the reply
          const std::size_t next = held_.find(kMistralCalls);
          if (next == std::string::npos) return step;
          if (!take_calls(std::string_view(held_).substr(0, next), step)) {
            phase_ = Phase::kFailed;
            continue;
          }
          held_.erase(0, next + kMistralCalls.size());
          continue;
        }
        const std::size_t first = held_.find_first_not_of(kSpace);
        if (first == std::string::npos) return step;
        const std::string_view rest = std::string_view(held_).substr(first);
        if (rest.starts_with(kDeepSeekCallsEnd)) {
          held_.erase(0, first + kDeepSeekCallsEnd.size());
          phase_ = Phase::kAfter;
          continue;
        }
        if (rest.starts_with(kDeepSeekCallBegin)) {
          const std::size_t end = rest.find(kDeepSeekCallEnd);
          if (end == std::string_view::npos) return step;
          const std::size_t body = kDeepSeekCallBegin.size();
          if (!take_calls(rest.substr(body, end - body), step)) {
            phase_ = Phase::kFailed;
            continue;
          }
          held_.erase(0, first + end + kDeepSeekCallEnd.size());
          continue;
        }
        if (kDeepSeekCallsEnd.starts_with(rest) || kDeepSeekCallBegin.starts_with(rest)) return step;
        phase_ = Phase::kFailed;  // something else between the calls
        continue;
      }
      case Phase::kAfter: {
        // After the calls, only text that says something is content.
        std::string ready = take_text(held_, markers, false);
        if (!trim(ready).empty()) {
          step.content += ready;
        } else {
          held_.insert(0, ready);
        }
        return step;
      }
      case Phase::kFailed:  // not a call: all text, at the end
        unparsed_ = true;
        return step;
    }
  }
}

ToolCallStream::Step ToolCallStream::finish_marked() {
  Step step;
  const std::span<const std::string_view> markers = tool_call_markers(ctx_.format);
  if (phase_ == Phase::kCalls) {
    if (ctx_.format == ToolCallFormat::kMistral) {
      if (take_calls(held_, step)) held_.clear();
      else phase_ = Phase::kFailed;
    } else if (!trim(held_).empty()) {
      phase_ = Phase::kFailed;  // a call never closed
    }
  }
  if (phase_ == Phase::kFailed) unparsed_ = true;
  std::string rest = take_text(held_, markers, true);
  if (phase_ != Phase::kAfter || !trim(rest).empty()) step.content += rest;
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
  if (ctx_.format == ToolCallFormat::kMistral || ctx_.format == ToolCallFormat::kDeepSeek) return finish_marked();
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
    step.content = take_text(held_, tool_call_markers(ctx_.format), true);
  }
  held_.clear();
  return step;
}

}  // namespace kvgate::openai
