// HttpApi, the /v1 routes and /health, called as the server calls it (a
// request and a Reply) over the real pipeline on stories260K, answered into
// a ReplyRecorder: what an OpenAI client is told for an unknown route, a
// wrong method, a bad or missing key, a bad body, a parameter kvgate does
// not serve, a quota; a completion's JSON and its usage (the ledger's, to
// the token); a stream's SSE frames; the mounts of other parts; a client
// that goes away.
#include "gateway/serving/http_api.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/version.h"
#include "gateway/openai/chat_template.h"
#include "gateway/server/reply_state.h"
#include "gateway/serving/json_reply.h"
#include "tests/gateway/server/reply_recorder.h"
#include "tests/gateway/server/sse_frames.h"
#include "tests/gateway/server/test_request.h"
#include "tests/gateway/serving/api_error_shape.h"
#include "tests/gateway/serving/full_pool.h"
#include "tests/gateway/serving/pipeline_fixture.h"
#include "tests/tenancy/failing_file_system.h"

namespace kvgate::serving {
namespace {

namespace json = boost::json;
using server::ReplyEvent;
using server::testing::header;
using server::testing::ReplyRecorder;
using server::testing::sse_frames;
using server::testing::test_request;
using testing::is_api_error;
using testing::kModelId;
using testing::kStoryPrompt;
using testing::PipelineStack;
using Kind = ReplyEvent::Kind;

// A completion body: the fields given, over a model and a greedy temperature.
std::string completion(json::object fields) {
  fields.emplace("model", kModelId);
  fields.emplace("temperature", 0);
  return json::serialize(fields);
}

class HttpApiTest : public testing::SuiteStack<HttpApiTest> {
 protected:
  void SetUp() override {
    key_ = stack().new_key(tenant_id());
    steps_before_ = stack().settled_steps();
    make_api(served_model());
  }

  ApiModel served_model() {
    ApiModel m;
    m.id = kModelId;
    m.created_unix = 1700000000;
    m.context_tokens = stack().model_->config().context_length;
    m.weight_type = "F32", m.weight_bytes = 1234, m.parameters = 260000;
    return m;
  }
  void make_api(ApiModel m, std::vector<server::Mount> mounts = {}, BlockingPool* side = nullptr) {
    PipelineStack& s = stack();
    if (!grammars_) grammars_ = std::make_unique<OutputGrammars>(*s.tokenizer_);
    api_ = std::make_unique<HttpApi>(*s.pipeline_, *s.tenancy_, *s.tokenizer_,
                                     openai::ChatTemplate::for_model(s.model_->file()), *grammars_, std::move(m),
                                     side ? *side : s.side_, std::move(mounts));
  }

  // Calls the API; the response's events once it has ended. `gone`: the
  // client has left before the API sees the request.
  std::vector<ReplyEvent> call(const server::HttpRequest& req, bool gone = false) {
    auto rec = std::make_shared<ReplyRecorder>();
    server::Reply reply(rec, 1);
    if (gone) reply.state()->connection_closed();
    (*api_)(req, reply);
    reply = server::Reply();  // only the API's copies are left
    std::vector<ReplyEvent> ev = rec->wait();
    EXPECT_FALSE(ev.empty()) << req.method << " " << req.target << " was never answered";
    return ev;
  }
  // One whole response (kSend).
  ReplyEvent answer(const server::HttpRequest& req) {
    std::vector<ReplyEvent> ev = call(req);
    if (ev.empty()) return {};
    EXPECT_EQ(ev.size(), 1u);
    return ev.front();
  }
  ReplyEvent post(std::string_view path, std::string body, std::optional<std::string> key) {
    return answer(test_request("POST", path, std::move(body), std::move(key)));
  }
  ReplyEvent post(std::string_view path, std::string body) { return post(path, std::move(body), key_); }

  size_t prompt_tokens(const std::string& text) {
    return stack().tokenizer_->encode(text, {.add_bos = true, .parse_special = false}).size();
  }
  tenancy::Tenancy& tenancy() { return *stack().tenancy_; }
  // Engine steps since the test began (0: nothing reached the engine).
  int64_t steps() { return stack().settled_steps() - steps_before_; }

  std::string key_;  // tenant_id()'s
  int64_t steps_before_ = 0;
  std::unique_ptr<OutputGrammars> grammars_;  // before api_, which holds it
  std::unique_ptr<HttpApi> api_;
};

TEST_F(HttpApiTest, AnUnknownRouteIs404AndAWrongMethod405InOpenAisErrorShape) {
  const ReplyEvent unknown = answer(test_request("POST", "/v1/nothing", "{}", key_));
  EXPECT_TRUE(is_api_error(unknown, 404, "invalid_request_error", "unknown_url"));
  EXPECT_NE(unknown.body.find("POST /v1/nothing"), std::string::npos) << unknown.body;
  EXPECT_TRUE(is_api_error(answer(test_request("GET", "/v1/completions/extra", {}, key_)), 404, "invalid_request_error",
                           "unknown_url"));
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{{"GET", "/v1/completions"},
                                                                                     {"PUT", "/v1/chat/completions"},
                                                                                     {"DELETE", "/v1/models"},
                                                                                     {"POST", "/v1/usage"},
                                                                                     {"POST", "/health"}}) {
    const ReplyEvent e = answer(test_request(method, path, {}, key_));
    EXPECT_TRUE(is_api_error(e, 405, "invalid_request_error", "method_not_allowed")) << method << " " << path;
  }
}

TEST_F(HttpApiTest, HealthNeedsNoKeyAndTheModelListNamesTheServedModel) {
  const ReplyEvent health = answer(test_request("GET", "/health"));
  EXPECT_EQ(health.status, 200);
  // The build's git revision, as `kvgate --version` prints it.
  EXPECT_EQ(json::parse(health.body), (json::value{{"status", "ok"}, {"version", build_version()}}));
  EXPECT_TRUE(build_version().starts_with("git ")) << build_version();

  const ReplyEvent models = answer(test_request("GET", "/v1/models", {}, key_));
  ASSERT_EQ(models.status, 200) << models.body;
  EXPECT_EQ(header(models, "content-type"), "application/json");
  EXPECT_EQ(json::parse(models.body),
            json::parse(R"({"object":"list","data":[{"id":"stories260K","object":"model","created":1700000000,)"
                        R"("owned_by":"kvgate","meta":{"weight_type":"F32","weight_bytes":1234,"parameters":260000,)"
                        R"("context_length":)" +
                        std::to_string(stack().model_->config().context_length) + "}}]}"));
}

TEST_F(HttpApiTest, AMissingUnknownOrRevokedKeyIsTheSame401BeforeTheBodyIsRead) {
  const std::string body = "{not json";  // a key is checked first: nothing of a stranger's body is parsed
  const ReplyEvent none = post("/v1/completions", body, std::nullopt);
  EXPECT_TRUE(is_api_error(none, 401, "authentication_error", "invalid_api_key"));

  const std::string revoked = tenancy().keys().create(tenant_id(), "old").plaintext;
  tenancy().keys().revoke(tenant_id(), tenancy().authenticate(revoked)->key_id);
  std::string suspended = stack().new_key(tenant_id("gone"));
  tenancy::Tenant t = tenancy().tenants().get(tenant_id("gone"));
  t.status = tenancy::TenantStatus::kSuspended;
  tenancy().tenants().update(t);
  for (const std::string& key : {std::string("kvg-not-a-key"), revoked, suspended}) {
    const ReplyEvent e = post("/v1/completions", body, key);
    EXPECT_TRUE(is_api_error(e, 401, "authentication_error", "invalid_api_key")) << key;
    EXPECT_EQ(e.body, none.body) << "a 401 must not say which keys exist";
  }
  server::HttpRequest basic = test_request("POST", "/v1/chat/completions", body);
  basic.headers.push_back({"Authorization", "Basic " + key_});
  EXPECT_TRUE(is_api_error(answer(basic), 401, "authentication_error", "invalid_api_key"));
  for (const char* path : {"/v1/models", "/v1/usage"})
    EXPECT_TRUE(is_api_error(answer(test_request("GET", path)), 401, "authentication_error", "invalid_api_key"));
}

TEST_F(HttpApiTest, ABadBodyIs400NamingTheField) {
  EXPECT_TRUE(is_api_error(post("/v1/completions", "{\"model\": "), 400, "invalid_request_error", "invalid_json"));
  EXPECT_TRUE(is_api_error(post("/v1/completions", "[1, 2]"), 400, "invalid_request_error", "invalid_json"));
  EXPECT_TRUE(is_api_error(post("/v1/completions", json::serialize(json::object{{"model", kModelId}})), 400,
                           "invalid_request_error", "missing_required_parameter", "prompt"));
  EXPECT_TRUE(is_api_error(post("/v1/completions", completion({{"prompt", "Hi"}, {"max_tokens", "ten"}})), 400,
                           "invalid_request_error", "invalid_type", "max_tokens"));
  EXPECT_TRUE(is_api_error(post("/v1/completions", completion({{"prompt", "Hi"}, {"top_p", 3}})), 400,
                           "invalid_request_error", "invalid_value", "top_p"));
  EXPECT_TRUE(is_api_error(post("/v1/completions", completion({{"prompt", json::array{1, 999999}}})), 400,
                           "invalid_request_error", "invalid_value", "prompt[1]"));
  EXPECT_TRUE(
      is_api_error(post("/v1/chat/completions",
                        completion({{"messages", json::array{json::object{{"role", "user"}, {"content", "Hi"}},
                                                             json::object{{"role", "user"}, {"content", 7}}}}})),
                   400, "invalid_request_error", "invalid_type", "messages[1].content"));
  const ReplyEvent model = post("/v1/completions", json::serialize(json::object{{"model", "gpt-4"}, {"prompt", "Hi"}}));
  EXPECT_TRUE(is_api_error(model, 404, "invalid_request_error", "model_not_found", "model"));
  EXPECT_NE(model.body.find("gpt-4"), std::string::npos);
}

TEST_F(HttpApiTest, AParameterKvgateDoesNotServeIsRefusedNamingItAndCostsNothing) {
  const std::vector<std::pair<std::string, json::object>> completions = {
      {"n", {{"n", 2}}},
      {"logprobs", {{"logprobs", 3}}},
      {"echo", {{"echo", true}}},
      {"best_of", {{"best_of", 2}}},
      {"suffix", {{"suffix", "The end."}}},
      {"frequency_penalty", {{"frequency_penalty", 0.5}}},
      {"stream_options", {{"stream_options", json::object{{"include_usage", true}}}}},
  };
  for (const auto& [param, fields] : completions) {
    json::object body = fields;
    body["prompt"] = "Once upon a time";
    const ReplyEvent e = post("/v1/completions", completion(body));
    EXPECT_EQ(e.status, 400) << param;
    EXPECT_TRUE(is_api_error(e, 400, "invalid_request_error", "invalid_value", param));
  }
  const json::array messages{json::object{{"role", "user"}, {"content", "Hi"}}};
  EXPECT_TRUE(is_api_error(post("/v1/chat/completions", completion({{"messages", messages}, {"logprobs", true}})), 400,
                           "invalid_request_error", "invalid_value", "logprobs"));
  EXPECT_TRUE(is_api_error(post("/v1/chat/completions", completion({{"messages", messages}, {"presence_penalty", 1}})),
                           400, "invalid_request_error", "invalid_value", "presence_penalty"));
  EXPECT_EQ(steps(), 0) << "a refused request reached the engine";
  EXPECT_EQ(tenancy().ledger().usage(tenant_id(), 0, std::numeric_limits<int64_t>::max()).requests, 0u);
}

TEST_F(HttpApiTest, TheServersBoundsAre400sNamingThePromptOrMaxTokens) {
  ApiModel m = served_model();
  m.max_prompt_tokens = 8;
  m.max_output_tokens = 16;
  make_api(m);
  const ReplyEvent long_prompt = post("/v1/completions", completion({{"prompt", kStoryPrompt}}));
  EXPECT_TRUE(is_api_error(long_prompt, 400, "invalid_request_error", "context_length_exceeded", "prompt"));
  const json::array messages{json::object{{"role", "user"}, {"content", kStoryPrompt}}};
  EXPECT_TRUE(is_api_error(post("/v1/chat/completions", completion({{"messages", messages}})), 400,
                           "invalid_request_error", "context_length_exceeded", "messages"));
  EXPECT_TRUE(is_api_error(post("/v1/completions", completion({{"prompt", "Once"}, {"max_tokens", 17}})), 400,
                           "invalid_request_error", "invalid_value", "max_tokens"));

  make_api(served_model());  // the model's own context: prompt + max_tokens must fit it
  EXPECT_TRUE(is_api_error(post("/v1/completions", completion({{"prompt", "Once"}, {"max_tokens", 100000}})), 400,
                           "invalid_request_error", "context_length_exceeded", "prompt"));
  EXPECT_EQ(steps(), 0);
}

TEST_F(HttpApiTest, ACompletionIsOneJsonBodyWhoseUsageIsTheLedgers) {
  auto run = [&] {
    const ReplyEvent e =
        post("/v1/completions", completion({{"prompt", kStoryPrompt}, {"max_tokens", 4}, {"ignore_eos", true}}));
    EXPECT_EQ(e.status, 200) << e.body;
    EXPECT_EQ(header(e, "content-type"), "application/json");
    return e;
  };
  const ReplyEvent first = run();
  const json::value body = json::parse(first.body);
  EXPECT_EQ(body.at("object"), "text_completion");
  EXPECT_TRUE(body.at("id").as_string().starts_with("cmpl-"));
  EXPECT_EQ(body.at("model"), kModelId);
  EXPECT_GT(body.at("created").to_number<int64_t>(), 0);
  const json::array& choices = body.at("choices").as_array();
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_EQ(choices[0].at("index"), 0);
  EXPECT_FALSE(choices[0].at("text").as_string().empty());
  EXPECT_TRUE(choices[0].at("logprobs").is_null());
  EXPECT_EQ(choices[0].at("finish_reason"), "length");

  const json::value& usage = body.at("usage");
  const uint64_t n_prompt = prompt_tokens(kStoryPrompt);
  EXPECT_EQ(usage.at("prompt_tokens").to_number<uint64_t>(), n_prompt);
  EXPECT_EQ(usage.at("completion_tokens").to_number<uint64_t>(), 4u);
  EXPECT_EQ(usage.at("total_tokens").to_number<uint64_t>(), n_prompt + 4);
  EXPECT_EQ(usage.at("prompt_tokens_details").at("cached_tokens").to_number<uint64_t>(), 0u);
  EXPECT_EQ(usage.at("kvgate").at("fresh_prefill_tokens").to_number<uint64_t>(), n_prompt);

  // The x-request-id names the ledger record, which holds what the client was told.
  const std::string id = header(first, "x-request-id");
  ASSERT_TRUE(id.starts_with("req_")) << id;
  EXPECT_EQ(body.at("id").as_string(), "cmpl-" + id.substr(4));
  const auto rec = tenancy().ledger().find(id);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->tokens.prompt_tokens, n_prompt);
  EXPECT_EQ(rec->tokens.output_tokens, 4u);
  EXPECT_EQ(rec->cost_micros, usage.at("kvgate").at("cost_micros").to_number<uint64_t>());

  // The same prompt again: its prefix is cached, billed as such, and the text does not change.
  const ReplyEvent second = run();
  const json::value again = json::parse(second.body);
  const json::value& u2 = again.at("usage");
  const uint64_t cached = u2.at("prompt_tokens_details").at("cached_tokens").to_number<uint64_t>();
  EXPECT_GT(cached, 0u);
  EXPECT_EQ(cached + u2.at("kvgate").at("fresh_prefill_tokens").to_number<uint64_t>(), n_prompt);
  EXPECT_EQ(again.at("choices").at(0).at("text"), choices[0].at("text"));
  const auto rec2 = tenancy().ledger().find(header(second, "x-request-id"));
  ASSERT_TRUE(rec2);
  EXPECT_EQ(rec2->tokens.cached(), cached);
  EXPECT_EQ(rec2->cost_micros, u2.at("kvgate").at("cost_micros").to_number<uint64_t>());
  EXPECT_NE(header(second, "x-request-id"), id);
}

TEST_F(HttpApiTest, AChatCompletionIsTheAssistantsMessage) {
  const json::array messages{json::object{{"role", "system"}, {"content", "Tell a story."}},
                             json::object{{"role", "user"}, {"content", "Once upon a time"}}};
  const ReplyEvent e = post("/v1/chat/completions",
                            completion({{"messages", messages}, {"max_completion_tokens", 3}, {"ignore_eos", true}}));
  ASSERT_EQ(e.status, 200) << e.body;
  const json::value body = json::parse(e.body);
  EXPECT_EQ(body.at("object"), "chat.completion");
  EXPECT_TRUE(body.at("id").as_string().starts_with("chatcmpl-"));
  const json::value& choice = body.at("choices").at(0);
  EXPECT_EQ(choice.at("message").at("role"), "assistant");
  EXPECT_TRUE(choice.at("message").at("content").is_string());
  EXPECT_EQ(choice.at("finish_reason"), "length");
  EXPECT_EQ(body.at("usage").at("completion_tokens"), 3);
  EXPECT_EQ(body.at("usage").at("prompt_tokens").to_number<uint64_t>(),
            prompt_tokens("System: Tell a story.\nUser: Once upon a time\nAssistant:"));
}

// vLLM's /tokenize: the very ids a chat or completion body sends the engine.
TEST_F(HttpApiTest, TokenizeGivesTheIdsAGenerationWouldSend) {
  const json::array messages{json::object{{"role", "user"}, {"content", "Once upon a time"}}};
  const ReplyEvent chat = post("/tokenize", completion({{"messages", messages}}));
  ASSERT_EQ(chat.status, 200) << chat.body;
  const json::value c = json::parse(chat.body);
  const Tokens want = stack().tokenizer_->encode("User: Once upon a time\nAssistant:", {.add_bos = true});
  json::array want_json;
  for (TokenId id : want) want_json.push_back(id);
  EXPECT_EQ(c.at("tokens"), want_json);
  EXPECT_EQ(c.at("count"), want.size());
  EXPECT_EQ(c.at("max_model_len"), stack().model_->config().context_length);

  const ReplyEvent prompt = post("/tokenize", completion({{"prompt", "Once upon a time"}}));
  ASSERT_EQ(prompt.status, 200) << prompt.body;
  EXPECT_EQ(json::parse(prompt.body).at("count"), prompt_tokens("Once upon a time"));

  EXPECT_TRUE(is_api_error(post("/tokenize", completion({{"messages", messages}}), std::nullopt), 401,
                           "authentication_error", "invalid_api_key"));
  EXPECT_TRUE(is_api_error(post("/tokenize", completion({{"messages", messages}, {"tools", json::array{1}}})), 400,
                           "invalid_request_error", "invalid_type", "tools[0]"));
  EXPECT_EQ(steps(), 0);  // nothing reached the engine
}

TEST_F(HttpApiTest, AStreamIsSseDataFramesEndingInTheFinishTheUsageAndDone) {
  const json::object fields{{"prompt", kStoryPrompt}, {"max_tokens", 5}, {"ignore_eos", true}};
  json::object streamed = fields;
  streamed["stream"] = true;
  streamed["stream_options"] = json::object{{"include_usage", true}};
  const std::vector<ReplyEvent> ev = call(test_request("POST", "/v1/completions", completion(streamed), key_));
  ASSERT_GE(ev.size(), 4u);
  EXPECT_EQ(ev.front().kind, Kind::kStart);
  EXPECT_EQ(ev.front().status, 200);
  EXPECT_EQ(header(ev.front(), "content-type"), "text/event-stream");
  EXPECT_EQ(ev.back().kind, Kind::kFinish);
  const server::testing::SseFrames frames = sse_frames(ev);
  EXPECT_TRUE(frames.well_formed) << "every write is one \"data: ...\\n\\n\" event";
  ASSERT_GE(frames.data.size(), 3u);
  EXPECT_EQ(frames.data.back(), "[DONE]");

  const std::string id = "cmpl-" + header(ev.front(), "x-request-id").substr(4);
  std::string text;
  std::vector<json::value> chunks;
  for (size_t i = 0; i + 1 < frames.data.size(); ++i) chunks.push_back(json::parse(frames.data[i]));
  for (size_t i = 0; i < chunks.size(); ++i) {
    const json::value& c = chunks[i];
    EXPECT_EQ(c.at("object"), "text_completion");
    EXPECT_EQ(c.at("id"), json::value(id)) << "every chunk carries the response's id";
    if (i + 1 == chunks.size()) break;  // the usage chunk
    EXPECT_TRUE(c.at("usage").is_null());
    const json::value& choice = c.at("choices").at(0);
    text += choice.at("text").as_string();
    const bool last = i + 2 == chunks.size();  // the finish: the only one with a reason
    EXPECT_EQ(choice.at("finish_reason"), last ? json::value("length") : json::value(nullptr)) << frames.data[i];
  }
  const json::value& usage_chunk = chunks.back();
  EXPECT_TRUE(usage_chunk.at("choices").as_array().empty());
  EXPECT_EQ(usage_chunk.at("usage").at("completion_tokens"), 5);
  const auto rec = tenancy().ledger().find(header(ev.front(), "x-request-id"));
  ASSERT_TRUE(rec);
  EXPECT_EQ(usage_chunk.at("usage").at("prompt_tokens").to_number<uint64_t>(), rec->tokens.prompt_tokens);
  EXPECT_EQ(usage_chunk.at("usage").at("kvgate").at("cost_micros").to_number<uint64_t>(), rec->cost_micros);

  // The streamed text is the text a whole response gives for the same request.
  const ReplyEvent whole = post("/v1/completions", completion(fields));
  ASSERT_EQ(whole.status, 200) << whole.body;
  EXPECT_EQ(text, json::parse(whole.body).at("choices").at(0).at("text").as_string());
}

TEST_F(HttpApiTest, AChatStreamOpensWithTheAssistantsRoleAndEndsWithAnEmptyDeltaFinish) {
  const json::array messages{json::object{{"role", "user"}, {"content", "Once upon a time"}}};
  const std::vector<ReplyEvent> ev = call(test_request(
      "POST", "/v1/chat/completions",
      completion({{"messages", messages}, {"max_tokens", 3}, {"ignore_eos", true}, {"stream", true}}), key_));
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.front().kind, Kind::kStart);
  EXPECT_EQ(ev.back().kind, Kind::kFinish);
  const server::testing::SseFrames frames = sse_frames(ev);
  EXPECT_TRUE(frames.well_formed);
  ASSERT_GE(frames.data.size(), 3u);
  EXPECT_EQ(frames.data.back(), "[DONE]");
  const json::value role = json::parse(frames.data.front());
  EXPECT_EQ(role.at("object"), "chat.completion.chunk");
  EXPECT_EQ(role.at("choices").at(0).at("delta"), json::parse(R"({"role":"assistant","content":""})"));
  const json::value finish = json::parse(frames.data[frames.data.size() - 2]);
  EXPECT_EQ(finish.at("choices").at(0).at("delta"), json::object());
  EXPECT_EQ(finish.at("choices").at(0).at("finish_reason"), "length");
  EXPECT_FALSE(finish.as_object().contains("usage")) << "no usage chunk unless stream_options asks";
}

TEST_F(HttpApiTest, OverItsQuotaATenantGets429WithRetryAfterAndItsRateHeaders) {
  const std::string tight = stack().new_key(tenant_id("tight"), {.requests_per_minute = 2});
  const std::string body = completion({{"prompt", "Once"}, {"max_tokens", 1}});
  const ReplyEvent ok = post("/v1/completions", body, tight);
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(header(ok, "x-ratelimit-limit-requests"), "2");
  EXPECT_EQ(header(ok, "x-ratelimit-remaining-requests"), "1") << "the windows count the request they answer";
  EXPECT_EQ(header(ok, "x-ratelimit-limit-tokens"), "") << "no token limit, no token headers";
  const ReplyEvent last = post("/v1/completions", body, tight);
  ASSERT_EQ(last.status, 200);
  EXPECT_EQ(header(last, "x-ratelimit-remaining-requests"), "0");
  const ReplyEvent over = post("/v1/completions", body, tight);
  EXPECT_TRUE(is_api_error(over, 429, "rate_limit_error", "rate_limit_exceeded"));
  EXPECT_GE(std::stoi(header(over, "retry-after")), 1);
  EXPECT_EQ(header(over, "x-ratelimit-remaining-requests"), "0");
  EXPECT_EQ(post("/v1/completions", body).status, 200) << "another tenant is not held back";
}

// A body that fails its checks after the parse (here an unknown model) was
// parsed and tokenized for its tenant: it counts against requests/minute,
// and past the limit the next is refused before its body is read at all.
TEST_F(HttpApiTest, RequestsRefusedAfterTheParseStillCountAgainstTheRequestRate) {
  const std::string tight = stack().new_key(tenant_id("tight"), {.requests_per_minute = 3});
  const std::string wrong_model = json::serialize(json::object{{"model", "not-this-one"}, {"prompt", "Once"}});
  EXPECT_EQ(post("/v1/completions", wrong_model, tight).status, 404);
  EXPECT_EQ(post("/v1/chat/completions", "{not json", tight).status, 400);
  EXPECT_EQ(post("/tokenize", completion({{"prompt", "Once"}}), tight).status, 200);
  const ReplyEvent over = post("/v1/completions", completion({{"prompt", "Once"}, {"max_tokens", 1}}), tight);
  EXPECT_TRUE(is_api_error(over, 429, "rate_limit_error", "rate_limit_exceeded")) << over.body;
  EXPECT_EQ(header(over, "x-ratelimit-remaining-requests"), "0");
  EXPECT_GE(std::stoi(header(over, "retry-after")), 1);
  EXPECT_EQ(post("/v1/completions", completion({{"prompt", "Once"}, {"max_tokens", 1}})).status, 200)
      << "another tenant is not held back";
}

TEST_F(HttpApiTest, UsageIsTheCallingTenantsOwn) {
  const std::string other = stack().new_key(tenant_id("other"));
  ASSERT_EQ(post("/v1/completions", completion({{"prompt", "Once"}, {"max_tokens", 2}, {"ignore_eos", true}})).status,
            200);
  ASSERT_EQ(post("/v1/completions", completion({{"prompt", kStoryPrompt}, {"max_tokens", 1}}), other).status, 200);
  const ReplyEvent e = answer(test_request("GET", "/v1/usage", {}, key_));
  ASSERT_EQ(e.status, 200) << e.body;
  const json::value u = json::parse(e.body);
  EXPECT_EQ(u.at("object"), "usage");
  EXPECT_EQ(u.at("tenant"), json::value(tenant_id()));
  EXPECT_EQ(u.at("requests"), 1);
  EXPECT_EQ(u.at("prompt_tokens").to_number<uint64_t>(), prompt_tokens("Once"));
  EXPECT_EQ(u.at("completion_tokens"), 2);
  EXPECT_TRUE(is_api_error(answer(test_request("GET", "/v1/usage?start_time=soon", {}, key_)), 400,
                           "invalid_request_error", "invalid_value", "start_time"));
}

// Totals span at most a year (a longer period was one scan of every
// record before the rollups); buckets come a bounded page at a time, and
// paging through them adds up to the totals.
TEST_F(HttpApiTest, UsageTotalsSpanAtMostAYearAndBucketsComeInPages) {
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(post("/v1/completions", completion({{"prompt", "Once"}, {"max_tokens", 1}})).status, 200);
  const auto get = [&](const std::string& target) { return answer(test_request("GET", target, {}, key_)); };
  EXPECT_TRUE(is_api_error(get("/v1/usage?start_time=0"), 400, "invalid_request_error", "invalid_value", "start_time"));

  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string period = "start_time=" + std::to_string(now - 5 * 3600 - 17) + "&end_time=" + std::to_string(now + 60);
  std::string target = "/v1/usage?bucket_width=1h&limit=2&" + period;
  int64_t requests = 0, pages = 0, last_end = now - 5 * 3600 - 17;
  for (;;) {
    const ReplyEvent e = get(target);
    ASSERT_EQ(e.status, 200) << e.body;
    const json::object page = json::parse(e.body).as_object();
    EXPECT_EQ(page.at("object"), "page");
    EXPECT_EQ(page.at("bucket_width"), "1h");
    const json::array& data = page.at("data").as_array();
    EXPECT_LE(data.size(), 2u);
    for (const json::value& b : data) {
      EXPECT_EQ(b.at("start_time").to_number<int64_t>(), last_end) << "buckets meet";
      last_end = b.at("end_time").to_number<int64_t>();
      requests += b.at("requests").to_number<int64_t>();
    }
    ++pages;
    if (!page.at("has_more").as_bool()) {
      EXPECT_TRUE(page.at("next_page").is_null());
      break;
    }
    ASSERT_LT(pages, 10);
    target = "/v1/usage?bucket_width=1h&limit=2&" + period + "&page=" + std::string(page.at("next_page").as_string());
  }
  EXPECT_EQ(requests, 3);
  EXPECT_EQ(last_end, now + 60);
  const int64_t start = now - 5 * 3600 - 17, end = now + 60;
  const int64_t hours = (end + 3599) / 3600 - start / 3600;  // 6 or 7, as the clock falls
  EXPECT_EQ(pages, (hours + 1) / 2) << hours << " hours, 2 to a page";

  const ReplyEvent days = get("/v1/usage?bucket_width=1d&start_time=0");
  ASSERT_EQ(days.status, 200) << "a page of days may start anywhere: " << days.body;
  EXPECT_EQ(json::parse(days.body).at("data").as_array().size(), 7u);
  EXPECT_TRUE(json::parse(days.body).at("has_more").as_bool());
  EXPECT_TRUE(is_api_error(get("/v1/usage?bucket_width=2h"), 400, "invalid_request_error", "invalid_value", "bucket_width"));
  EXPECT_TRUE(is_api_error(get("/v1/usage?bucket_width=1h&limit=169"), 400, "invalid_request_error", "invalid_value", "limit"));
  EXPECT_TRUE(is_api_error(get("/v1/usage?bucket_width=1d&limit=0"), 400, "invalid_request_error", "invalid_value", "limit"));
  EXPECT_TRUE(is_api_error(get("/v1/usage?bucket_width=1d&start_time=100&end_time=200&page=50"), 400,
                           "invalid_request_error", "invalid_value", "page"));
}

// The usage totals scan the ledger: on the bounded side pool, never the
// I/O thread; with that pool full the call is a 503 to retry, not a wait.
TEST_F(HttpApiTest, UsageIsAnsweredFromTheSidePoolAndShedWhenItIsFull) {
  testing::FullPool full;
  ASSERT_TRUE(full.full());
  make_api(served_model(), {}, &full.pool());
  const ReplyEvent e = answer(test_request("GET", "/v1/usage", {}, key_));
  EXPECT_TRUE(is_api_error(e, 503, "server_error", "overloaded")) << e.body;
  EXPECT_EQ(header(e, "retry-after"), "1");
  EXPECT_TRUE(is_api_error(answer(test_request("GET", "/v1/usage", {}, std::nullopt)), 401, "authentication_error",
                           "invalid_api_key"))
      << "the key is checked before anything is queued";
}

TEST_F(HttpApiTest, AReplicaRefusesTheGenerationRoutesWith403) {
  ApiModel m = served_model();
  m.replica_only = true;
  make_api(m);
  EXPECT_TRUE(is_api_error(post("/v1/completions", completion({{"prompt", "Once"}})), 403, "permission_error",
                           "permission_denied"));
  EXPECT_TRUE(is_api_error(post("/v1/chat/completions", completion({{"messages", json::array{}}})), 403,
                           "permission_error", "permission_denied"));
  EXPECT_EQ(answer(test_request("GET", "/v1/models", {}, key_)).status, 200);
  EXPECT_EQ(answer(test_request("GET", "/health")).status, 200);
}

TEST_F(HttpApiTest, AMountAnswersItsPrefixAndWhatItThrowsIsAnOpenAiError) {
  std::vector<server::Mount> mounts;
  mounts.push_back({"/admin", [](const server::HttpRequest& req, server::Reply& reply) {
                      if (req.path() == "/admin/forbidden") throw openai::permission_denied("not yours");
                      if (req.path() == "/admin/broken") throw std::runtime_error("the disk is on fire");
                      send_json(reply, 200, {{"mounted", req.target}});
                    }});
  make_api(served_model(), std::move(mounts));
  for (const char* target : {"/admin", "/admin/tenants?x=1"}) {
    const ReplyEvent e = answer(test_request("GET", target));
    EXPECT_EQ(e.status, 200) << target;
    EXPECT_EQ(json::parse(e.body).at("mounted"), json::value(target));
  }
  EXPECT_TRUE(is_api_error(answer(test_request("GET", "/administrator")), 404, "invalid_request_error", "unknown_url"));
  EXPECT_TRUE(
      is_api_error(answer(test_request("GET", "/admin/forbidden")), 403, "permission_error", "permission_denied"));
  const ReplyEvent broken = answer(test_request("GET", "/admin/broken"));
  EXPECT_TRUE(is_api_error(broken, 500, "server_error", "internal_error"));
}

TEST_F(HttpApiTest, AClientThatGoesAwayCancelsItsRequestAndFreesItsBlocks) {
  // Gone before the request starts: the API's on_close runs as it is set,
  // so the cancel cannot race a fast engine to the request's end.
  const std::vector<ReplyEvent> ev = call(
      test_request("POST", "/v1/completions",
                   completion({{"prompt", kStoryPrompt}, {"max_tokens", 400}, {"ignore_eos", true}, {"stream", true}}),
                   key_),
      /*gone=*/true);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().kind, Kind::kFinish) << "the stream still ends (the session drops what the client missed)";
  EXPECT_LT(steps(), 400) << "it ran to its end instead of being cancelled";
  EXPECT_EQ(stack().engine_->outstanding(), 0);
  EXPECT_EQ(stack().engine_->available_blocks(), stack().engine_->num_blocks());
  if (const auto rec = tenancy().ledger().find(header(ev.front(), "x-request-id"))) {
    EXPECT_EQ(rec->finish_reason, tenancy::FinishReason::kCancelled);  // billed for what it used
    EXPECT_LT(rec->tokens.output_tokens, 400u);
  }
}

// The bill fails closed (tenancy/held_records.h): while the ledger cannot
// write, a new request is a 503 that says why without the store's path,
// /health is a 503 too (a load balancer stops sending), and the request that
// was running when the disk failed is answered and recorded once it is back.
class LedgerDownTest : public HttpApiTest {
 protected:
  static void SetUpTestSuite() {
    store_fs_ = fs_ = std::make_shared<tenancy::testing::FailingFileSystem>();
    HttpApiTest::SetUpTestSuite();
  }
  static void TearDownTestSuite() {
    HttpApiTest::TearDownTestSuite();
    store_fs_ = fs_ = nullptr;
  }
  static inline std::shared_ptr<tenancy::testing::FailingFileSystem> fs_;
};

TEST_F(LedgerDownTest, NewRequestsAre503AndHealthSaysSoUntilTheHeldRecordsAreWritten) {
  using Failure = tenancy::testing::FailingFileSystem::Failure;
  const std::string body = completion({{"prompt", "Once"}, {"max_tokens", 2}});
  ASSERT_EQ(post("/v1/completions", body).status, 200);

  fs_->fail(Failure::kIoError);
  const ReplyEvent running = post("/v1/completions", body);  // its ledger write fails: held
  ASSERT_EQ(running.status, 200) << running.body;
  const std::string held_id = header(running, "x-request-id");  // the ledger's id for it
  EXPECT_TRUE(tenancy().billing_fault().has_value());

  const ReplyEvent refused = post("/v1/completions", body);
  EXPECT_TRUE(is_api_error(refused, 503, "server_error", "service_unavailable"));
  EXPECT_NE(refused.body.find("ledger cannot write"), std::string::npos) << refused.body;
  EXPECT_EQ(refused.body.find(stack().dir_.path()), std::string::npos) << "no path for clients: " << refused.body;
  EXPECT_EQ(header(refused, "retry-after"), "5");
  const ReplyEvent sick = answer(test_request("GET", "/health"));
  EXPECT_EQ(sick.status, 503);
  EXPECT_EQ(json::parse(sick.body).at("status"), "error");
  ServingMetrics& metrics = stack().metrics_;
  metrics.collect_ledger(tenancy());
  EXPECT_NE(metrics.exposition().find("\nkvgate_ledger_pending_records 1\n"), std::string::npos);
  EXPECT_NE(metrics.exposition().find("\nkvgate_ledger_held_records_total 1\n"), std::string::npos);

  fs_->fail(Failure::kNone);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (tenancy().billing_fault()) {
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "the held record was never written";
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(answer(test_request("GET", "/health")).status, 200);
  metrics.collect_ledger(tenancy());
  EXPECT_NE(metrics.exposition().find("\nkvgate_ledger_pending_records 0\n"), std::string::npos);
  EXPECT_NE(metrics.exposition().find("\nkvgate_ledger_dropped_records_total 0\n"), std::string::npos);
  EXPECT_TRUE(tenancy().ledger().find(held_id).has_value()) << held_id;
  EXPECT_EQ(post("/v1/completions", body).status, 200);
  EXPECT_EQ(tenancy().ledger().usage(tenant_id(), 0, INT64_MAX).requests, 3u) << "the refused one is not billed";
}

}  // namespace
}  // namespace kvgate::serving
