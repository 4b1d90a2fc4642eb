// previous_response_id: the conversation a stored response ends, rebuilt
// from the store, oldest turn first, each turn's own input then its answer
// as an assistant message. Rendered through the same template as the first
// turn was, the rebuilt conversation begins with the tokens the last turn
// ran (its prompt, then what it generated), which the prefix cache still
// holds, so a continued conversation prefills only its new turn.
//
// A turn's instructions are not part of it (OpenAI's rule: instructions
// apply to their own request only); its input is stored as
// [{"role", "content"}, ...] (encode_turn).
//
// Pure but for the store's reads; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/openai/chat_message.h"
#include "tenancy/response_store.h"

namespace kvgate::serving {

// Turns a chain may have: far past any context kvgate serves (each turn
// adds a few tokens at the least), and a bound on the reads one request
// costs; a longer one is a 400.
inline constexpr std::size_t kMaxChainTurns = 1024;

std::string encode_turn(const std::vector<openai::ChatMessage>& input);
// Throws tenancy::Error(kCorrupt) for bytes encode_turn did not write.
std::vector<openai::ChatMessage> decode_turn(std::string_view stored);

// The conversation `previous_id` ends, as `tenant` stored it. Throws ApiError
// 404 when a response of the chain is unknown, another tenant's, expired or
// deleted (naming it), 400 past kMaxChainTurns.
std::vector<openai::ChatMessage> rebuild_conversation(const tenancy::ResponseStore& store, std::string_view tenant,
                                                      const std::string& previous_id);

}  // namespace kvgate::serving
