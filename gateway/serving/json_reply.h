// Answering a Reply with JSON: a body, or an ApiError in OpenAI's shape (or,
// on Anthropic's routes, in Anthropic's). Shared by the API and admin
// routes. Any thread (Reply is thread-safe).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "gateway/anthropic/api_error.h"
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

// 503 for work a bounded BlockingPool shed (`queue`: "admin", "observe"):
// the client retries, nothing was done.
inline void send_shed(server::Reply& reply, std::string_view queue) {
  send_error(reply,
             openai::overloaded("The server's " + std::string(queue) +
                                " work queue is full; retry after the time in the retry-after header."),
             {{"retry-after", "1"}});
}

// The same error in Anthropic's shape and status (anthropic/api_error.h).
inline void send_anthropic_error(server::Reply& reply, const openai::ApiError& e, server::HttpHeaders headers = {}) {
  headers.push_back({"Content-Type", "application/json"});
  reply.send(anthropic::error_status(e), std::move(headers), anthropic::serialize_error(e));
}

// How a route family writes its errors: send_error or send_anthropic_error.
using ErrorSender = void (*)(server::Reply&, const openai::ApiError&, server::HttpHeaders);

// Runs `answer`: an ApiError it throws is answered by `send` (OpenAI's
// shape unless told), any other exception as a 500 with no detail (the
// routes' one error path).
template <class Answer>
void answer_or_error(server::Reply& reply, Answer&& answer, ErrorSender send = send_error) {
  try {
    answer();
  } catch (const openai::ApiError& e) {
    send(reply, e, {});
  } catch (const std::exception& e) {
    // The detail is the operator's (it may name a file or a replica): logged, not answered.
    std::fprintf(stderr, "kvgate: a request failed: %s\n", e.what());
    send(reply, openai::internal_error(), {});
  }
}

}  // namespace kvgate::serving
