// A continued conversation's prompt (response_chain.h): it goes on from the
// ids the last turn ran, the model's own answer ids included, and falls back
// to encoding the render whole where those ids are not the answer's text.
// With stories260K's tokenizer and chat template.
#include "gateway/serving/response_chain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/text/text_stream.h"
#include "tests/engine/test_models.h"

namespace kvgate::serving {
namespace {

using openai::ChatMessage;
using openai::ChatRole;

class ResponseChain : public ::testing::Test {
 protected:
  std::shared_ptr<const Model> model_ = kvgate::testing::stories();
  std::unique_ptr<Tokenizer> tokenizer_ = Tokenizer::from_gguf(model_->file());
  openai::ChatTemplate chat_ = openai::ChatTemplate::for_model(model_->file());
  openai::PromptEncoder encoder_{*tokenizer_, chat_.source()};
  std::vector<ChatMessage> head_{{ChatRole::kSystem, "You tell short stories.", {}, {}}};

  static std::vector<ChatMessage> user(std::string text) { return {{ChatRole::kUser, std::move(text), {}, {}}}; }

  // `text` as byte tokens (<0x..>), one per byte: ids a model may sample,
  // which no tokenizer would choose for the text again.
  Tokens byte_ids(std::string_view text) const {
    Tokens out;
    for (const unsigned char c : text) {
      char piece[8];
      std::snprintf(piece, sizeof piece, "<0x%02X>", c);
      for (TokenId id = 0; id < tokenizer_->n_vocab(); ++id)
        if (tokenizer_->piece(id) == piece) out.push_back(id);
    }
    return out;
  }
  std::string streamed(const Tokens& ids) const {
    TextStream s(*tokenizer_, {}, true);
    std::string text;
    for (const TokenId id : ids) text += s.push(id);
    return text + s.finish(FinishReason::kStop);
  }
  Tokens whole(const std::vector<ChatMessage>& conversation) const {
    return encoder_.encode(chat_.render(openai::ChatInput{conversation, true, nullptr, nullptr}, encoder_));
  }
};

bool begins_with(const Tokens& ids, const Tokens& prefix) {
  return ids.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
}

TEST_F(ResponseChain, TheNextPromptGoesOnFromTheIdsTheModelGenerated) {
  const std::string answer = " The dog ran.";
  const Tokens sampled = byte_ids(answer);
  ASSERT_EQ(sampled.size(), answer.size()) << "stories260K has byte tokens";
  ASSERT_EQ(streamed(sampled), answer);
  const ChainTurn t1{user("Tell me a story."), answer, sampled};
  const Tokens p1 = chain_prompt(chat_, encoder_, *tokenizer_, head_, {}, t1.input);
  std::vector<ChatMessage> c1 = head_;
  c1.insert(c1.end(), t1.input.begin(), t1.input.end());
  EXPECT_EQ(p1, whole(c1)) << "a first turn is its render, encoded";

  const Tokens p2 = chain_prompt(chat_, encoder_, *tokenizer_, head_, {t1}, user("And then?"));
  Tokens ran = p1;
  ran.insert(ran.end(), sampled.begin(), sampled.end());
  EXPECT_TRUE(begins_with(p2, ran)) << "the last prompt, then the answer's own ids";
  EXPECT_GT(p2.size(), ran.size());
  std::vector<ChatMessage> c2 = c1;
  c2.push_back({ChatRole::kAssistant, answer, {}, {}});
  c2.push_back(user("And then?").front());
  EXPECT_FALSE(begins_with(whole(c2), ran)) << "encoding the render again would not give those ids";

  // A third turn goes on from the second's prompt, built the same way.
  const Tokens sampled2 = byte_ids(" Home.");
  const ChainTurn t2{user("And then?"), " Home.", sampled2};
  const Tokens p3 = chain_prompt(chat_, encoder_, *tokenizer_, head_, {t1, t2}, user("The end?"));
  Tokens ran2 = p2;
  ran2.insert(ran2.end(), sampled2.begin(), sampled2.end());
  EXPECT_TRUE(begins_with(p3, ran2));
}

TEST_F(ResponseChain, IdsThatAreNotTheAnswersTextAreNotUsed) {
  // A stop string cut the text the client got; the ids still hold it.
  const ChainTurn cut{user("Tell me a story."), " The dog", byte_ids(" The dog ran. STOP")};
  const ChainTurn unknown{user("Tell me a story."), " The dog", std::nullopt};  // stored before the ids were
  std::vector<ChatMessage> c = head_;
  c.push_back(user("Tell me a story.").front());
  c.push_back({ChatRole::kAssistant, " The dog", {}, {}});
  c.push_back(user("And then?").front());
  for (const ChainTurn& t : {cut, unknown})
    EXPECT_EQ(chain_prompt(chat_, encoder_, *tokenizer_, head_, {t}, user("And then?")), whole(c));
}

TEST(ResponseChainCodec, OutputIdsRoundTripAndBadBytesAreRefused) {
  const Tokens ids{0, 1, 511, 70000, -1};
  EXPECT_EQ(decode_output_tokens(encode_output_tokens(ids)), ids);
  EXPECT_EQ(decode_output_tokens(""), Tokens{});
  EXPECT_FALSE(decode_output_tokens("abc"));
}

}  // namespace
}  // namespace kvgate::serving
