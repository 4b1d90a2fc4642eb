// HttpApi: the routes of `kvgate serve`, as the server's Handler.
//
//   GET  /health                  {"status": "ok"}, no key needed
//   GET  /v1/models               the served model
//   POST /v1/completions          a prompt (text or token ids), streamed or not
//   POST /v1/chat/completions     messages rendered by the model's chat template
//   GET  /v1/usage                the calling tenant's own usage over a period
//   POST /tokenize                vLLM's: the prompt ids a chat or completion body
//                                 would send the engine, and their count
//   POST /v1/messages             Anthropic's Messages API, over the same chat
//                                 template, tools and pipeline (messages_routes.cpp)
//   POST /v1/messages/count_tokens  its prompt's token count; nothing generated or billed
//   POST /v1/responses            OpenAI's Responses API, over the same chat template and
//                                 pipeline; previous_response_id continues a stored one
//                                 (responses_routes.cpp)
//   GET, DELETE /v1/responses/{id}  the calling tenant's stored response (another
//                                 tenant's is a 404, as an unknown id)
//   anything under a mount        that part's own routes (server/mount.h): cli/
//                                 mounts admin/'s (/admin, /metrics, /dashboard)
//                                 and, on a replica, cluster/replica/'s (/internal)
//
// Each /v1 request: the key resolves the tenant (401 otherwise), the body is
// parsed and checked (400 naming the parameter), the prompt is rendered and
// tokenized here, at the edge, and the pipeline checks it against the
// context, admits it (429 with retry-after and x-ratelimit-* headers), and
// runs it (503 when the engine is full). Successful answers carry the
// x-ratelimit-* headers too. A client that goes away cancels its request.
// Anthropic's routes take the key as `x-api-key` too, need the
// anthropic-version header, and answer errors in Anthropic's shape.
// On a replica (`replica_only`) the generation routes are 403:
// its requests come from the route front, which admits and bills them, and
// a tenant must not reach the engine around it.
//
// Thread ownership: called on an I/O thread per request; holds nothing
// mutable of its own (its parts are thread-safe or immutable).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gateway/anthropic/messages_request.h"
#include "gateway/openai/chat_template.h"
#include "gateway/openai/generation_options.h"
#include "gateway/openai/prompt_encoder.h"
#include "gateway/openai/structured_output.h"
#include "gateway/server/http_request.h"
#include "gateway/server/mount.h"
#include "gateway/server/reply.h"
#include "gateway/serving/output_grammars.h"
#include "gateway/serving/json_reply.h"
#include "gateway/serving/pipeline.h"
#include "gateway/serving/reply_sinks.h"
#include "gateway/serving/tool_marker_tokens.h"

namespace kvgate::serving {

struct ApiModel {
  std::string id;               // what /v1/models lists and requests must name
  int64_t created_unix = 0;     // when the server loaded it
  std::string weight_type;      // the weights' file type ("Q4_K_M"), for /v1/models
  uint64_t weight_bytes = 0;
  int64_t parameters = 0;
  int32_t context_tokens = 0;   // the model's context: prompt + output
  int32_t max_prompt_tokens = 0;  // the operator's bound on a prompt; 0 = the context
  int32_t max_output_tokens = 0;  // the operator's bound on max_tokens; 0 = the context
  int32_t completions_default_max_tokens = 16;  // OpenAI's default for /v1/completions
  bool replica_only = false;  // a replica of a route front: no generation routes of its own
  // The shortest prefix a cache_control breakpoint writes and pins
  // (Anthropic's minimum cacheable length); a shorter one is dropped.
  int32_t min_cache_breakpoint_tokens = 1024;
};

class HttpApi {
 public:
  // `grammars` outlives this. `side_work`: a bounded pool (blocking_pool.h)
  // for a tenant's own blocking work outside a generation (its usage totals,
  // deleting a stored response), never the pipeline's billing pool.
  HttpApi(Pipeline& pipeline, tenancy::Tenancy& tenancy, const Tokenizer& tokenizer, openai::ChatTemplate chat,
          OutputGrammars& grammars, ApiModel model, BlockingPool& side_work, std::vector<server::Mount> mounts = {});

  void operator()(server::HttpRequest req, server::Reply reply) const;

 private:
  void dispatch(const server::HttpRequest& req, server::Reply& reply) const;
  // Counts the request against the tenant's requests/minute before its body
  // is parsed or tokenized (Quotas::arrive); false when that refused it,
  // its 429 sent through `send`.
  bool arrive(const tenancy::Principal& who, server::Reply& reply, ErrorSender send) const;
  // A generation request, parsed and its prompt encoded; then checked.
  struct Parsed {
    ServeRequest serve;
    openai::GenerationOptions options;
    std::string model;
    std::vector<std::string> tool_names;  // a chat's functions, when its reply is read for calls
    bool parallel_tool_calls = true;
    std::optional<openai::OutputConstraint> constraint;  // what the output is held to, if anything
  };
  Parsed parse(const server::HttpRequest& req, openai::Endpoint endpoint) const;
  // An Anthropic request, rendered and encoded as a chat; to be created,
  // with its cache_control breakpoints as pins (cache_breakpoints.h).
  Parsed parse(anthropic::MessagesRequest r, anthropic::Purpose purpose) const;
  void check_bounds(Parsed& p, openai::Endpoint endpoint) const;
  // A checked request, ready to start: what every API's route does alike.
  struct Prepared {
    ServeRequest serve;
    std::string unique;  // the random part of the request id, for the response's ids
    std::optional<openai::ToolCallContext> tools;  // its reply is read for calls
    ToolReplyCounter count_tool_reply;
    std::optional<openai::OutputKind> constrained;  // its output is held to a grammar
  };
  // `call_id_prefix`: what its calls' ids begin with ("call_", "toolu_").
  // Every route that prepares a request has called arrive() first.
  Prepared prepare(Parsed p, const tenancy::Principal& who, std::string_view call_id_prefix) const;
  // Starts it, answering through `sink`, or answers why not through `send`
  // (`input_field`: what a prompt too long is blamed on).
  void launch(Prepared run, const std::shared_ptr<ReplySink>& sink, const tenancy::Principal& who,
              const char* input_field, server::Reply& reply, ErrorSender send) const;
  void answer_not_started(const NotStarted& no, const tenancy::Tenant& tenant, const char* input_field,
                          server::Reply& reply, ErrorSender send) const;
  void generate(const server::HttpRequest& req, server::Reply& reply, openai::Endpoint endpoint) const;
  void messages(const server::HttpRequest& req, server::Reply& reply) const;
  void count_tokens(const server::HttpRequest& req, server::Reply& reply) const;
  void create_response(const server::HttpRequest& req, server::Reply& reply) const;
  void retrieve_response(const server::HttpRequest& req, server::Reply& reply, std::string_view id) const;
  void delete_response(const server::HttpRequest& req, server::Reply& reply, std::string_view id) const;
  void models(const server::HttpRequest& req, server::Reply& reply) const;
  void usage(const server::HttpRequest& req, server::Reply& reply) const;
  void tokenize(const server::HttpRequest& req, server::Reply& reply) const;

  Pipeline& pipeline_;
  tenancy::Tenancy& tenancy_;
  const Tokenizer& tokenizer_;
  const openai::ChatTemplate chat_;
  const ToolMarkerTokens tool_markers_;  // chat_'s tool-call format's, in tokenizer_'s vocabulary
  const openai::PromptEncoder encoder_;
  OutputGrammars& grammars_;  // thread-safe
  const ApiModel model_;
  BlockingPool& side_work_;
  const std::vector<server::Mount> mounts_;
};

}  // namespace kvgate::serving
