// HttpApi's Anthropic routes, /v1/messages and /v1/messages/count_tokens:
// the same template, tools, bounds, pipeline, quotas and ledger as
// /v1/chat/completions (http_api.cpp), with Anthropic's request, answer,
// events and error shape (gateway/anthropic/). HttpApi's operator() answers
// their errors in Anthropic's shape.
#include <memory>

#include "gateway/anthropic/message_response.h"
#include "gateway/openai/api_error.h"
#include "gateway/serving/cache_breakpoints.h"
#include "gateway/serving/credentials.h"
#include "gateway/serving/http_api.h"
#include "gateway/serving/message_sinks.h"

namespace kvgate::serving {
namespace {

// What every Anthropic route checks before the body: the key (x-api-key
// or Bearer), the version, no betas.
tenancy::Principal admit_headers(const server::HttpRequest& req, tenancy::Tenancy& tenancy) {
  tenancy::Principal who = require_tenant_or_x_api_key(req, tenancy);
  anthropic::check_api_version(req.header("anthropic-version"));
  anthropic::refuse_betas(req.header("anthropic-beta"));
  return who;
}

}  // namespace

HttpApi::Parsed HttpApi::parse(anthropic::MessagesRequest r, anthropic::Purpose purpose) const {
  Parsed p;
  p.model = std::move(r.model);
  p.options = std::move(r.options);
  const openai::ChatInput input{r.messages, true, nullptr, r.tools ? &*r.tools : nullptr};
  const std::string rendered = chat_.render(input, encoder_);
  p.serve.prompt = encoder_.encode(rendered);
  if (purpose == anthropic::Purpose::kCreate)
    p.serve.pins = breakpoint_pins(r, chat_, encoder_, rendered, p.serve.prompt, model_.min_cache_breakpoint_tokens);
  p.constraint = openai::output_constraint(openai::ResponseFormat{}, r.tools, chat_.tool_format());
  if (r.tools && r.tools->choice != openai::ToolChoice::kNone) {
    p.tool_names = r.tools->names;
    p.parallel_tool_calls = r.tools->parallel;
  }
  p.serve.continuation = true;  // the assistant's turn follows the rendered conversation
  return p;
}

void HttpApi::messages(const server::HttpRequest& req, server::Reply& reply) const {
  if (model_.replica_only)
    throw openai::permission_denied(
        "This server is a replica that serves only its kvgate route front; send requests to the front.");
  const tenancy::Principal who = admit_headers(req, tenancy_);
  if (!arrive(who, reply, send_anthropic_error)) return;
  Parsed p = parse(anthropic::parse_messages_request(req.body, anthropic::Purpose::kCreate), anthropic::Purpose::kCreate);
  check_bounds(p, openai::Endpoint::kChatCompletions);
  const bool stream = p.options.stream;
  const auto prompt_tokens = static_cast<uint64_t>(p.serve.prompt.size());
  Prepared run = prepare(std::move(p), who, "toolu_");
  const anthropic::MessageMeta meta{anthropic::message_id(run.unique), model_.id};
  server::HttpHeaders headers{{"x-request-id", run.serve.request_id}, {"request-id", run.serve.request_id}};
  std::shared_ptr<ReplySink> sink;
  if (stream)
    sink = std::make_shared<MessageStreamSink>(reply, meta, prompt_tokens, std::move(headers), std::move(run.tools),
                                               std::move(run.count_tool_reply));
  else
    sink = std::make_shared<MessageWholeSink>(reply, meta, std::move(headers), std::move(run.tools),
                                              std::move(run.count_tool_reply));
  launch(std::move(run), sink, who, "messages", reply, send_anthropic_error);
}

// The prompt's tokens through the same parse, template and encoder as a
// message would be; nothing runs on the engine and nothing is billed.
void HttpApi::count_tokens(const server::HttpRequest& req, server::Reply& reply) const {
  if (!arrive(admit_headers(req, tenancy_), reply, send_anthropic_error)) return;
  const Parsed p = parse(anthropic::parse_messages_request(req.body, anthropic::Purpose::kCountTokens),
                         anthropic::Purpose::kCountTokens);
  if (p.model != model_.id) throw openai::model_not_found(p.model);
  send_json(reply, 200, anthropic::count_tokens_response(p.serve.prompt.size()));
}

}  // namespace kvgate::serving
