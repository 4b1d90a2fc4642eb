// HttpApi's Responses API routes: POST /v1/responses over the same
// template, bounds, pipeline, quotas and ledger as /v1/chat/completions
// (http_api.cpp), with the Responses request, object and events
// (openai/responses_*.h); GET and DELETE /v1/responses/{id} over the
// tenancy store's responses (tenancy/response_store.h). Errors in OpenAI's
// shape, as the chat route answers them.
#include <chrono>
#include <memory>

#include <boost/json.hpp>

#include "gateway/openai/api_error.h"
#include "gateway/openai/responses_object.h"
#include "gateway/openai/responses_request.h"
#include "gateway/serving/credentials.h"
#include "gateway/serving/http_api.h"
#include "gateway/serving/response_chain.h"
#include "gateway/serving/responses_sinks.h"

namespace kvgate::serving {
namespace {

openai::ApiError response_not_found(std::string_view id) {
  std::string message = "No response found with id '";
  message.append(id);
  message.append("'.");
  return openai::not_found(std::move(message));
}

}  // namespace

void HttpApi::create_response(const server::HttpRequest& req, server::Reply& reply) const {
  if (model_.replica_only)
    throw openai::permission_denied(
        "This server is a replica that serves only its kvgate route front; send requests to the front.");
  const tenancy::Principal who = require_tenant(req, tenancy_);
  if (!arrive(who, reply, send_error)) return;
  openai::ResponsesRequest r = openai::parse_responses_request(req.body);
  // This request's instructions, then the conversation it continues, then its own input.
  std::vector<openai::ChatMessage> head;
  if (r.instructions) head.push_back({openai::ChatRole::kSystem, *r.instructions, {}, {}});
  std::vector<ChainTurn> turns;
  if (!r.previous_response_id.empty()) turns = rebuild_chain(tenancy_.responses(), who.tenant.id, r.previous_response_id);

  Parsed p;
  p.model = r.model;
  p.options = r.options;
  p.serve.prompt = chain_prompt(chat_, encoder_, tokenizer_, head, turns, r.input);
  p.serve.continuation = true;  // the assistant's turn follows the rendered conversation
  try {
    check_bounds(p, openai::Endpoint::kChatCompletions);
  } catch (openai::ApiError& e) {
    if (e.param == "messages") e.param = "input";  // the chat check names chat's field
    throw;
  }
  const bool stream = p.options.stream;
  Prepared run = prepare(std::move(p), who, "call_");

  openai::ResponseSettings settings;
  settings.id = openai::response_id(run.unique);
  settings.message_id = openai::response_message_id(run.unique);
  settings.created_at =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  settings.model = model_.id;
  settings.instructions = std::move(r.instructions);
  settings.previous_response_id = r.previous_response_id;
  settings.store = r.store;
  settings.max_output_tokens = r.options.max_tokens;
  settings.temperature = r.options.temperature;
  settings.top_p = r.options.top_p;
  settings.user = r.options.user;
  settings.metadata = std::move(r.metadata);
  ResponseKeeper keeper;
  if (r.store) keeper = ResponseKeeper(tenancy_.responses(), who.tenant.id, encode_turn(r.input));

  server::HttpHeaders headers{{"x-request-id", run.serve.request_id}};
  std::shared_ptr<ReplySink> sink;
  if (stream)
    sink = std::make_shared<ResponseStreamSink>(reply, std::move(settings), std::move(keeper), std::move(headers));
  else
    sink = std::make_shared<ResponseWholeSink>(reply, std::move(settings), std::move(keeper), std::move(headers));
  launch(std::move(run), sink, who, "input", reply, send_error);
}

// GET answers on this thread: one point read, as authentication's.
void HttpApi::retrieve_response(const server::HttpRequest& req, server::Reply& reply, std::string_view id) const {
  const tenancy::Principal who = require_tenant(req, tenancy_);
  const std::optional<tenancy::StoredResponse> r = tenancy_.responses().get(who.tenant.id, id);
  if (!r) throw response_not_found(id);
  send_json(reply, 200, boost::json::parse(r->object));
}

// DELETE is a synced write: on the side pool, never an I/O thread (nor the
// billing pool, which a flood of deletes must not delay).
void HttpApi::delete_response(const server::HttpRequest& req, server::Reply& reply, std::string_view id) const {
  const tenancy::Principal who = require_tenant(req, tenancy_);
  const bool queued = side_work_.try_post([&store = tenancy_.responses(), reply, tenant = who.tenant.id, id = std::string(id)]() mutable {
    answer_or_error(reply, [&] {
      if (!store.remove(tenant, id)) throw response_not_found(id);
      send_json(reply, 200, openai::response_deleted(id));
    });
  });
  if (!queued) send_shed(reply, "side");
}

}  // namespace kvgate::serving
