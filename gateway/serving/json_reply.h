// Answering a Reply with JSON: a body, or an ApiError in OpenAI's shape.
// Shared by the API and admin routes. Any thread (Reply is thread-safe).
#pragma once

#include <cstdio>

#include <boost/json.hpp>

#include "gateway/openai/api_error.h"
#include "gateway/server/reply.h"

namespace kvgate::serving {

inline void send_json(server::Reply& reply, int status, const boost::json::value& body,
                      server::HttpHeaders headers = {}) {
  headers.push_back({"Content-Type", "application/json"});
  reply.send(status, std::move(headers), boost::json::serialize(body));
}

inline void send_error(server::Reply& reply, const openai::ApiError& e, server::HttpHeaders headers = {}) {
  headers.push_back({"Content-Type", "application/json"});
  reply.send(e.status, std::move(headers), openai::serialize(e));
}

// Runs `answer`: an ApiError it throws is answered in OpenAI's shape, any
// other exception as a 500 with its message (the routes' one error path).
template <class Answer>
void answer_or_error(server::Reply& reply, Answer&& answer) {
  try {
    answer();
  } catch (const openai::ApiError& e) {
    send_error(reply, e);
  } catch (const std::exception& e) {
    // The detail is the operator's (it may name a file or a replica): logged, not answered.
    std::fprintf(stderr, "kvgate: a request failed: %s\n", e.what());
    send_error(reply, openai::internal_error());
  }
}

}  // namespace kvgate::serving
