// The Responses API's answers: the response object in each status, its
// usage shape, DELETE's answer, and the stream's events in order with
// their sequence numbers. Serialized and parsed back, so what is compared
// is what a client receives.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "gateway/openai/responses_events.h"
#include "gateway/openai/responses_object.h"

namespace kvgate::openai {
namespace {

namespace json = boost::json;

json::value wire(const json::value& v) { return json::parse(json::serialize(v)); }

ResponseSettings settings() {
  ResponseSettings s;
  s.id = response_id("abc");
  s.message_id = response_message_id("abc");
  s.created_at = 1700000000;
  s.model = "m";
  s.instructions = "be brief";
  s.previous_response_id = "resp_prev";
  s.max_output_tokens = 8;
  s.temperature = 0.5f;
  s.metadata = {{"k", "v"}};
  return s;
}

UsageReport usage() {
  UsageReport u;
  u.prompt_tokens = 40;
  u.completion_tokens = 5;
  u.cached_device_tokens = 32;
  u.fresh_prefill_tokens = 8;
  return u;
}

TEST(ResponsesObject, Completed) {
  const UsageReport u = usage();
  const json::value o = wire(response_object(settings(), ResponseStatus::kCompleted, "hello", &u));
  EXPECT_EQ(o.at("id"), "resp_abc");
  EXPECT_EQ(o.at("object"), "response");
  EXPECT_EQ(o.at("created_at"), 1700000000);
  EXPECT_EQ(o.at("status"), "completed");
  EXPECT_TRUE(o.at("error").is_null());
  EXPECT_TRUE(o.at("incomplete_details").is_null());
  EXPECT_EQ(o.at("instructions"), "be brief");
  EXPECT_EQ(o.at("max_output_tokens"), 8);
  EXPECT_EQ(o.at("previous_response_id"), "resp_prev");
  EXPECT_EQ(o.at("temperature").to_number<double>(), 0.5);
  EXPECT_EQ(o.at("store"), true);
  EXPECT_EQ(o.at("metadata"), (json::object{{"k", "v"}}));
  EXPECT_EQ(o.at("text"), (json::object{{"format", json::object{{"type", "text"}}}}));
  const json::value& item = o.at("output").at(0);
  EXPECT_EQ(item.at("type"), "message");
  EXPECT_EQ(item.at("id"), "msg_abc");
  EXPECT_EQ(item.at("role"), "assistant");
  EXPECT_EQ(item.at("status"), "completed");
  EXPECT_EQ(item.at("content").at(0).at("type"), "output_text");
  EXPECT_EQ(item.at("content").at(0).at("text"), "hello");
  const json::value& used = o.at("usage");
  EXPECT_EQ(used.at("input_tokens"), 40);
  EXPECT_EQ(used.at("input_tokens_details").at("cached_tokens"), 32);
  EXPECT_EQ(used.at("output_tokens"), 5);
  EXPECT_EQ(used.at("output_tokens_details").at("reasoning_tokens"), 0);
  EXPECT_EQ(used.at("total_tokens"), 45);
  EXPECT_EQ(used.at("kvgate").at("fresh_prefill_tokens"), 8);
}

TEST(ResponsesObject, IncompleteInProgressAndFailed) {
  const UsageReport u = usage();
  const json::value cut = wire(response_object(settings(), ResponseStatus::kIncomplete, "hel", &u));
  EXPECT_EQ(cut.at("status"), "incomplete");
  EXPECT_EQ(cut.at("incomplete_details").at("reason"), "max_output_tokens");
  EXPECT_EQ(cut.at("output").at(0).at("status"), "incomplete");

  const json::value begun = wire(response_object(settings(), ResponseStatus::kInProgress, ""));
  EXPECT_EQ(begun.at("status"), "in_progress");
  EXPECT_TRUE(begun.at("output").as_array().empty());
  EXPECT_TRUE(begun.at("usage").is_null());

  const ApiError e = internal_error("request req_1 failed");
  const json::value failed = wire(response_object(settings(), ResponseStatus::kFailed, "", nullptr, &e));
  EXPECT_EQ(failed.at("status"), "failed");
  EXPECT_EQ(failed.at("error").at("code"), "server_error");
  EXPECT_EQ(failed.at("error").at("message"), "request req_1 failed");
  EXPECT_TRUE(failed.at("output").as_array().empty());
}

TEST(ResponsesObject, StatusFromTheFinish) {
  EXPECT_EQ(finished_status(FinishReason::kLength), ResponseStatus::kIncomplete);
  EXPECT_EQ(finished_status(FinishReason::kStop), ResponseStatus::kCompleted);
  EXPECT_EQ(wire(response_deleted("resp_1")), (json::object{{"id", "resp_1"}, {"object", "response"}, {"deleted", true}}));
}

// "event: T\ndata: J\n\n" -> (T, J), checking the type repeats in J.
std::pair<std::string, json::value> parse_frame(const std::string& f) {
  EXPECT_TRUE(f.starts_with("event: ")) << f;
  EXPECT_TRUE(f.ends_with("\n\n")) << f;
  const size_t nl = f.find('\n');
  const std::string type = f.substr(7, nl - 7);
  EXPECT_EQ(f.substr(nl + 1, 6), "data: ");
  json::value data = json::parse(f.substr(nl + 7, f.size() - nl - 9));
  EXPECT_EQ(std::string(data.at("type").as_string()), type);
  return {type, std::move(data)};
}

TEST(ResponsesEvents, InOrderWithSequenceNumbers) {
  ResponseEvents ev(settings());
  std::vector<std::string> frames = ev.start();
  for (std::string& f : ev.text("hel")) frames.push_back(std::move(f));
  EXPECT_TRUE(ev.text("").empty());
  for (std::string& f : ev.text("lo")) frames.push_back(std::move(f));
  for (std::string& f : ev.finish(ResponseStatus::kCompleted, usage())) frames.push_back(std::move(f));
  const std::vector<std::string> types = {"response.created",           "response.in_progress",
                                          "response.output_item.added", "response.content_part.added",
                                          "response.output_text.delta", "response.output_text.delta",
                                          "response.output_text.done",  "response.content_part.done",
                                          "response.output_item.done",  "response.completed"};
  ASSERT_EQ(frames.size(), types.size());
  std::vector<json::value> data;
  for (size_t i = 0; i < frames.size(); ++i) {
    auto [type, d] = parse_frame(frames[i]);
    EXPECT_EQ(type, types[i]);
    EXPECT_EQ(d.at("sequence_number"), i);
    data.push_back(std::move(d));
  }
  EXPECT_EQ(data[0].at("response").at("status"), "in_progress");
  EXPECT_EQ(data[2].at("item").at("id"), "msg_abc");
  EXPECT_EQ(data[3].at("part").at("text"), "");
  EXPECT_EQ(data[4].at("delta"), "hel");
  EXPECT_EQ(data[4].at("item_id"), "msg_abc");
  EXPECT_EQ(data[6].at("text"), "hello");
  EXPECT_EQ(data[7].at("part").at("text"), "hello");
  EXPECT_EQ(data[8].at("item").at("content").at(0).at("text"), "hello");
  EXPECT_EQ(data[9].at("response").at("output").at(0).at("content").at(0).at("text"), "hello");
  EXPECT_EQ(data[9].at("response").at("usage").at("input_tokens_details").at("cached_tokens"), 32);
  EXPECT_EQ(ev.text_so_far(), "hello");
}

TEST(ResponsesEvents, IncompleteAndFailedEndings) {
  ResponseEvents cut(settings());
  cut.start();
  const std::vector<std::string> end = cut.finish(ResponseStatus::kIncomplete, usage());
  EXPECT_EQ(parse_frame(end.back()).first, "response.incomplete");

  ResponseEvents broken(settings());
  broken.start();
  auto [type, d] = parse_frame(broken.failed(internal_error("request req_1 failed")));
  EXPECT_EQ(type, "response.failed");
  EXPECT_EQ(d.at("sequence_number"), 4);
  EXPECT_EQ(d.at("response").at("status"), "failed");
}

}  // namespace
}  // namespace kvgate::openai
