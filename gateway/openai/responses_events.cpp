// The Responses stream's events, numbered in the order they are made.
// Pure; any thread.
#include "gateway/openai/responses_events.h"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

namespace kvgate::openai {
namespace json = boost::json;

namespace {

json::object text_part(std::string_view text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}};
}

}  // namespace

std::string ResponseEvents::frame(std::string_view type, json::object data) {
  data["type"] = type;
  data["sequence_number"] = sequence_++;
  std::string f = "event: ";
  f.append(type);
  f.append("\ndata: ");
  f.append(json::serialize(data));  // one line: serialize writes no newline
  f.append("\n\n");
  return f;
}

json::object ResponseEvents::at_part() const {
  return {{"item_id", s_.message_id}, {"output_index", 0}, {"content_index", 0}};
}

std::vector<std::string> ResponseEvents::start() {
  const json::object begun = response_object(s_, ResponseStatus::kInProgress, "");
  std::vector<std::string> out;
  out.push_back(frame("response.created", {{"response", begun}}));
  out.push_back(frame("response.in_progress", {{"response", begun}}));
  out.push_back(frame("response.output_item.added",
                      {{"output_index", 0}, {"item", response_message(s_, ResponseStatus::kInProgress, "")}}));
  json::object part = at_part();
  part["part"] = text_part("");
  out.push_back(frame("response.content_part.added", std::move(part)));
  return out;
}

std::vector<std::string> ResponseEvents::text(std::string_view delta) {
  if (delta.empty()) return {};
  text_.append(delta);
  json::object d = at_part();
  d["delta"] = delta;
  return {frame("response.output_text.delta", std::move(d))};
}

std::vector<std::string> ResponseEvents::finish(ResponseStatus status, const UsageReport& usage) {
  std::vector<std::string> out;
  json::object done = at_part();
  done["text"] = text_;
  out.push_back(frame("response.output_text.done", std::move(done)));
  json::object part = at_part();
  part["part"] = text_part(text_);
  out.push_back(frame("response.content_part.done", std::move(part)));
  out.push_back(frame("response.output_item.done", {{"output_index", 0}, {"item", response_message(s_, status, text_)}}));
  const char* type = status == ResponseStatus::kIncomplete ? "response.incomplete" : "response.completed";
  out.push_back(frame(type, {{"response", response_object(s_, status, text_, &usage)}}));
  return out;
}

std::string ResponseEvents::failed(const ApiError& error) {
  return frame("response.failed",
               {{"response", response_object(s_, ResponseStatus::kFailed, text_, nullptr, &error)}});
}

}  // namespace kvgate::openai
