// A streamed response as the Responses API's server-sent events, each frame
// "event: <type>\ndata: <json>\n\n" with the type, and a sequence_number
// counting from 0, in the JSON:
//
//   response.created              {"response": the object, in_progress, no output, usage null}
//   response.in_progress          {"response": the same}
//   response.output_item.added    {"output_index": 0, "item": the message, in_progress, no content}
//   response.content_part.added   {"item_id", "output_index": 0, "content_index": 0,
//                                  "part": {"type": "output_text", "text": "", "annotations": []}}
//   response.output_text.delta    {"item_id", "output_index", "content_index", "delta"}, per piece of text
//   response.output_text.done     {"item_id", "output_index", "content_index", "text": all of it}
//   response.content_part.done    {..., "part": the part with all the text}
//   response.output_item.done     {"output_index": 0, "item": the finished message}
//   response.completed            {"response": the finished object, with usage}; or
//   response.incomplete           the same, when max_output_tokens ended it (as OpenAI sends)
//   response.failed               {"response": failed, with its error}, instead of the end, on a failure
//
// Unlike chat completions' stream there is no "data: [DONE]": the last
// event ends it, as OpenAI's Responses stream does.
//
// Pure; a ResponseEvents belongs to one response.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "gateway/openai/responses_object.h"

namespace kvgate::openai {

class ResponseEvents {
 public:
  explicit ResponseEvents(ResponseSettings settings) : s_(std::move(settings)) {}

  // created, in_progress, output_item.added, content_part.added.
  std::vector<std::string> start();
  // An output_text.delta (none for empty text).
  std::vector<std::string> text(std::string_view delta);
  // The done events, then completed or incomplete, with `usage`.
  std::vector<std::string> finish(ResponseStatus status, const UsageReport& usage);
  // response.failed.
  std::string failed(const ApiError& error);

  const std::string& text_so_far() const { return text_; }
  const ResponseSettings& settings() const { return s_; }

 private:
  std::string frame(std::string_view type, boost::json::object data);
  boost::json::object at_part() const;  // item_id, output_index, content_index

  const ResponseSettings s_;
  uint64_t sequence_ = 0;
  std::string text_;
};

}  // namespace kvgate::openai
