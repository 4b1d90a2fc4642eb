// The Messages API's answer: a message object, its stop_reason and its
// usage, from what the pipeline served.
//
//   {"id": "msg_...", "type": "message", "role": "assistant", "model": M,
//    "content": [{"type": "text", "text": "..."},
//                {"type": "tool_use", "id": "toolu_...", "name": "f", "input": {...}}],
//    "stop_reason": "end_turn" | "max_tokens" | "stop_sequence" | "tool_use",
//    "stop_sequence": the stop sequence that ended it, or null,
//    "usage": {...}}
// content has the text block when there is text or no call (so a reply
// that said nothing is one empty text block), then one tool_use block per
// call.
//
// Usage, exactly the ledger's (DESIGN invariant 8): the prompt's tokens the
// prefix cache served (from a breakpoint's pin or kvgate's automatic cache)
// are reads, those written into the blocks a breakpoint pinned are
// creations, the rest input:
//   input_tokens + cache_creation_input_tokens + cache_read_input_tokens
//     = the prompt's tokens (= count_tokens' input_tokens for the same body)
//   cache_creation = {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens},
//     whose sum is cache_creation_input_tokens
//   output_tokens = the tokens generated
// followed by kvgate's own object (openai/usage_report.h's "kvgate":
// tiers, fresh prefill, tokens written to the cache, cost), which
// Anthropic's clients ignore.
//
// Pure; any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "engine/finish_reason.h"
#include "gateway/openai/chat_message.h"
#include "gateway/openai/usage_report.h"

namespace kvgate::anthropic {

struct MessageMeta {
  std::string id;  // "msg_<unique>"
  std::string model;
};

std::string message_id(std::string_view unique);  // "msg_" + unique

enum class StopReason { kEndTurn, kMaxTokens, kStopSequence, kToolUse };

// "end_turn", "max_tokens", "stop_sequence", "tool_use".
std::string_view stop_reason_name(StopReason r);

// A reply that made calls is tool_use; else a matched stop sequence (not
// empty) is stop_sequence, max_tokens is max_tokens, and EOS end_turn.
StopReason stop_reason(FinishReason finish, std::string_view stop_sequence, bool made_calls);

// The usage object above.
boost::json::object usage_json(const openai::UsageReport& u);

// {"type": "tool_use", "id", "name", "input": the arguments as an object}.
boost::json::object tool_use_block(const openai::ToolCall& call);

boost::json::value message_response(const MessageMeta& meta, std::string_view text,
                                    std::span<const openai::ToolCall> calls, StopReason stop,
                                    std::string_view stop_sequence, const openai::UsageReport& usage);

// POST /v1/messages/count_tokens' answer: {"input_tokens": N}.
boost::json::value count_tokens_response(std::size_t prompt_tokens);

}  // namespace kvgate::anthropic
