// previous_response_id: the conversation a stored response ends, rebuilt
// from the store, oldest turn first, each turn's own input then its answer
// (the text and the token ids the model generated for it), and the prompt
// that continues it.
//
// The prompt begins with exactly the tokens the last turn ran (its prompt,
// then what it generated), which the prefix cache still holds, so a
// continued conversation prefills only its new turn. Re-tokenizing the
// answer's text would not give them: a tokenizer often splits a text into
// other pieces than the model drew. So chain_prompt() builds each turn's
// prompt from the last one's, as the turn itself did: the last prompt's
// ids, the answer's generated ids, then the rest of the render (the end of
// that turn, the next input, the generation prompt) encoded on its own.
// Where that cannot hold (a template that does not render the answer
// verbatim after the last prompt, an answer whose ids do not decode to its
// text, as when a stop string cut it), that turn is encoded whole from its
// render instead, and the chain goes on from there.
//
// A turn's instructions are not part of it (OpenAI's rule: instructions
// apply to their own request only); its input is stored as
// [{"role", "content"}, ...] (encode_turn).
//
// Pure but for the store's reads; any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer.h"
#include "gateway/openai/chat_message.h"
#include "gateway/openai/chat_template.h"
#include "gateway/openai/prompt_encoder.h"
#include "tenancy/response_store.h"

namespace kvgate::serving {

// Turns a chain may have: far past any context kvgate serves (each turn
// adds a few tokens at the least), and a bound on the reads one request
// costs; a longer one is a 400.
inline constexpr std::size_t kMaxChainTurns = 1024;

std::string encode_turn(const std::vector<openai::ChatMessage>& input);
// Throws tenancy::Error(kCorrupt) for bytes encode_turn did not write.
std::vector<openai::ChatMessage> decode_turn(std::string_view stored);

// An answer's generated ids as StoredResponse::output_tokens holds them
// (little-endian int32s); nothing for bytes that are not that.
std::string encode_output_tokens(const Tokens& ids);
std::optional<Tokens> decode_output_tokens(std::string_view stored);

struct ChainTurn {
  std::vector<openai::ChatMessage> input;  // the turn's own
  std::string answer;                      // the text its client was given
  std::optional<Tokens> answer_ids;        // what the model generated for it, when stored
};

// The turns `previous_id` ends, oldest first, as `tenant` stored them.
// Throws ApiError 404 when a response of the chain is unknown, another
// tenant's, expired or deleted (naming it), 400 past kMaxChainTurns.
std::vector<ChainTurn> rebuild_chain(const tenancy::ResponseStore& store, std::string_view tenant,
                                     const std::string& previous_id);

// The prompt of `head` (this request's instructions), the turns, then
// `input`, with the generation prompt (above).
Tokens chain_prompt(const openai::ChatTemplate& chat, const openai::PromptEncoder& encoder, const Tokenizer& tokenizer,
                    const std::vector<openai::ChatMessage>& head, const std::vector<ChainTurn>& turns,
                    const std::vector<openai::ChatMessage>& input);

}  // namespace kvgate::serving
