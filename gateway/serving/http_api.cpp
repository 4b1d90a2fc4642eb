// The routes; every failure is an ApiError answered in OpenAI's shape.
#include "gateway/serving/http_api.h"

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/error.h"
#include "base/version.h"
#include "gateway/openai/api_error.h"
#include "gateway/openai/chat_request.h"
#include "gateway/openai/completion_request.h"
#include "gateway/openai/context_budget.h"
#include "gateway/openai/json_body.h"
#include "gateway/openai/model_list.h"
#include "gateway/openai/response_meta.h"
#include "gateway/serving/credentials.h"
#include "gateway/serving/hex_text.h"
#include "gateway/serving/period_usage.h"
#include "tenancy/random_bytes.h"

namespace kvgate::serving {
namespace {

using server::HttpHeaders;

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void add_window(HttpHeaders& h, const char* what, const tenancy::RateWindow& w) {
  if (w.limit == 0) return;  // unlimited: nothing to report
  h.push_back({std::string("x-ratelimit-limit-") + what, std::to_string(w.limit)});
  h.push_back({std::string("x-ratelimit-remaining-") + what, std::to_string(w.remaining)});
  h.push_back({std::string("x-ratelimit-reset-") + what, std::to_string(w.reset_s) + "s"});
}

// The request field a prompt-length error names.
const char* input_field(openai::Endpoint endpoint) {
  return endpoint == openai::Endpoint::kChatCompletions ? "messages" : "prompt";
}

HttpHeaders rate_headers(tenancy::Tenancy& t, const tenancy::Tenant& tenant) {
  const tenancy::RateStatus st = t.quotas().rate_status(tenant);
  HttpHeaders h;
  add_window(h, "requests", st.requests);
  add_window(h, "tokens", st.tokens);
  return h;
}

}  // namespace

HttpApi::HttpApi(Pipeline& pipeline, tenancy::Tenancy& tenancy, const Tokenizer& tokenizer, openai::ChatTemplate chat,
                 OutputGrammars& grammars, ApiModel model, BlockingPool& side_work, std::vector<server::Mount> mounts)
    : pipeline_(pipeline),
      tenancy_(tenancy),
      tokenizer_(tokenizer),
      chat_(std::move(chat)),
      tool_markers_(tokenizer, openai::tool_call_markers(chat_.tool_format())),
      encoder_(tokenizer, chat_.source()),
      grammars_(grammars),
      model_(std::move(model)),
      side_work_(side_work),
      mounts_(std::move(mounts)) {}

void HttpApi::operator()(server::HttpRequest req, server::Reply reply) const {
  // Anthropic's clients read errors in Anthropic's shape, a 404 or 405 of
  // the route included.
  const bool anthropic = req.path() == "/v1/messages" || req.path().starts_with("/v1/messages/");
  answer_or_error(reply, [&] { dispatch(req, reply); }, anthropic ? send_anthropic_error : send_error);
}

void HttpApi::dispatch(const server::HttpRequest& req, server::Reply& reply) const {
  const std::string_view path = req.path();
  if (const server::MountedRoutes* routes = server::find_mount(mounts_, path)) return (*routes)(req, reply);
  auto only = [&](std::string_view method) {
    if (req.method != method) throw openai::method_not_allowed(req.method, path);
  };
  if (path == "/health") {
    only("GET");
    // A failed device: 503, so a load balancer takes this replica out.
    if (const std::string f = pipeline_.engine_failure(); !f.empty())
      return send_json(reply, 503, {{"status", "error"}, {"error", f}, {"version", build_version()}});
    // A ledger that cannot write: 503 too, since this server takes no request.
    if (const std::optional<std::string> f = tenancy_.billing_fault())
      return send_json(reply, 503, {{"status", "error"}, {"error", *f}, {"version", build_version()}});
    return send_json(reply, 200, {{"status", "ok"}, {"version", build_version()}});
  }
  if (path == "/v1/models") {
    only("GET");
    return models(req, reply);
  }
  if (path == "/v1/completions") {
    only("POST");
    return generate(req, reply, openai::Endpoint::kCompletions);
  }
  if (path == "/v1/chat/completions") {
    only("POST");
    return generate(req, reply, openai::Endpoint::kChatCompletions);
  }
  if (path == "/v1/usage") {
    only("GET");
    return usage(req, reply);
  }
  if (path == "/tokenize") {
    only("POST");
    return tokenize(req, reply);
  }
  if (path == "/v1/messages") {
    only("POST");
    return messages(req, reply);
  }
  if (path == "/v1/messages/count_tokens") {
    only("POST");
    return count_tokens(req, reply);
  }
  if (path == "/v1/responses") {
    only("POST");
    return create_response(req, reply);
  }
  if (constexpr std::string_view kResponses = "/v1/responses/"; path.starts_with(kResponses)) {
    const std::string_view id = path.substr(kResponses.size());
    if (id.empty() || id.find('/') != std::string_view::npos) throw openai::route_not_found(req.method, path);
    if (req.method == "GET") return retrieve_response(req, reply, id);
    if (req.method == "DELETE") return delete_response(req, reply, id);
    throw openai::method_not_allowed(req.method, path);
  }
  throw openai::route_not_found(req.method, path);
}

void HttpApi::models(const server::HttpRequest& req, server::Reply& reply) const {
  const tenancy::Principal who = require_tenant(req, tenancy_);
  openai::ModelCard card{model_.id, model_.created_unix};
  card.meta = openai::ModelMeta{model_.weight_type, model_.weight_bytes, model_.parameters, model_.context_tokens};
  send_json(reply, 200, openai::model_list({&card, 1}), rate_headers(tenancy_, who.tenant));
}

// The totals are read from the ledger's hourly rollups (a scan of records
// only in the partial hours at each end): on the side pool, never the I/O
// thread. Totals span at most a year; buckets come a page at a time.
void HttpApi::usage(const server::HttpRequest& req, server::Reply& reply) const {
  const tenancy::Principal who = require_tenant(req, tenancy_);
  const UsagePeriod period = usage_period(req.target);
  std::optional<BucketPage> page = bucket_page(req.target, period);
  if (!page) check_totals_period(period);
  const bool queued = side_work_.try_post([&ledger = tenancy_.ledger(), reply, tenant = who.tenant.id, period,
                                           page = std::move(page)]() mutable {
    answer_or_error(reply, [&] {
      if (!page)
        return send_json(reply, 200, usage_json(tenant, period, ledger.usage(tenant, period.start_ns(), period.end_ns())));
      const std::vector<tenancy::UsageBucket> buckets = ledger.usage_buckets(
          tenant, page->page_start * 1'000'000'000, period.end_ns(), page->width_s * 1'000'000'000, page->limit);
      send_json(reply, 200, usage_page_json(tenant, period, *page, buckets));
    });
  });
  if (!queued) send_shed(reply, "side");
}

// vLLM's /tokenize: the ids a chat (messages) or a completion (prompt)
// body would send the engine, through the same parse as generation.
void HttpApi::tokenize(const server::HttpRequest& req, server::Reply& reply) const {
  if (!arrive(require_tenant(req, tenancy_), reply, send_error)) return;
  const boost::json::object body = openai::parse_json_object(req.body);
  const bool chat = body.if_contains("messages") && !body.at("messages").is_null();
  Parsed p = parse(req, chat ? openai::Endpoint::kChatCompletions : openai::Endpoint::kCompletions);
  if (p.model != model_.id) throw openai::model_not_found(p.model);
  boost::json::array tokens;
  tokens.reserve(p.serve.prompt.size());
  for (TokenId id : p.serve.prompt) tokens.push_back(id);
  send_json(reply, 200,
            {{"count", p.serve.prompt.size()}, {"max_model_len", model_.context_tokens}, {"tokens", std::move(tokens)}});
}

HttpApi::Parsed HttpApi::parse(const server::HttpRequest& req, openai::Endpoint endpoint) const {
  Parsed p;
  if (endpoint == openai::Endpoint::kChatCompletions) {
    openai::ChatCompletionRequest r = openai::parse_chat_completion_request(req.body);
    p.model = std::move(r.model);
    p.options = std::move(r.options);
    const openai::ChatInput input{r.messages, r.add_generation_prompt,
                                  r.template_kwargs ? &*r.template_kwargs : nullptr, r.tools ? &*r.tools : nullptr};
    p.serve.prompt = encoder_.encode(chat_.render(input, encoder_));
    p.constraint = openai::output_constraint(r.response_format, r.tools, chat_.tool_format());
    if (r.tools && r.tools->choice != openai::ToolChoice::kNone) {
      p.tool_names = r.tools->names;
      p.parallel_tool_calls = r.tools->parallel;
    }
    p.serve.continuation = true;  // the assistant's turn follows the rendered conversation
    return p;
  }
  openai::CompletionRequest r = openai::parse_completion_request(req.body);
  p.model = std::move(r.model);
  p.options = std::move(r.options);
  if (auto* text = std::get_if<std::string>(&r.prompt)) {
    p.serve.prompt = tokenizer_.encode(*text, {.add_bos = true, .parse_special = false});
    p.serve.continuation = !text->empty();
  } else {
    p.serve.prompt = std::get<Tokens>(std::move(r.prompt));
    openai::check_prompt_tokens(p.serve.prompt, tokenizer_.n_vocab());
    p.serve.continuation = !tokenizer_.decode(p.serve.prompt).empty();
  }
  if (!p.options.max_tokens) p.options.max_tokens = model_.completions_default_max_tokens;
  return p;
}

// Everything checkable before any engine work or quota charge: a 400 here.
void HttpApi::check_bounds(Parsed& p, openai::Endpoint endpoint) const {
  if (p.model != model_.id) throw openai::model_not_found(p.model);
  if (p.serve.prompt.empty()) throw openai::invalid_request("the prompt is empty", "prompt");
  const auto n_prompt = static_cast<int64_t>(p.serve.prompt.size());
  if (model_.max_prompt_tokens > 0 && n_prompt > model_.max_prompt_tokens)
    throw openai::invalid_request("the prompt has " + std::to_string(n_prompt) + " tokens; this server takes at most " +
                                      std::to_string(model_.max_prompt_tokens),
                                  input_field(endpoint), "context_length_exceeded");
  if (model_.max_output_tokens > 0 && p.options.max_tokens && *p.options.max_tokens > model_.max_output_tokens)
    throw openai::invalid_value("max_tokens", "this server generates at most " +
                                                  std::to_string(model_.max_output_tokens) + " tokens per request");
  // Prompt + max_tokens past the context; without max_tokens, what the context leaves.
  p.options.max_tokens = openai::completion_budget(p.options.max_tokens, n_prompt, model_.context_tokens, endpoint);
}

bool HttpApi::arrive(const tenancy::Principal& who, server::Reply& reply, ErrorSender send) const {
  const std::optional<tenancy::Refusal> refused = tenancy_.arrive(who.tenant);
  if (!refused) return true;
  pipeline_.metrics().refused(who.tenant.id, refused->limit);
  answer_not_started({NotStarted::Why::kQuota, refused->message, *refused}, who.tenant, "", reply, send);
  return false;
}

void HttpApi::answer_not_started(const NotStarted& no, const tenancy::Tenant& tenant, const char* input_field,
                                 server::Reply& reply, ErrorSender send) const {
  switch (no.why) {
    case NotStarted::Why::kBadRequest: {
      // The engine's limits: the prompt or max_tokens does not fit the context.
      const bool output = no.message.find("max_tokens") != std::string::npos;
      throw openai::invalid_request(no.message, output ? "max_tokens" : input_field, "context_length_exceeded");
    }
    case NotStarted::Why::kBusy: return send(reply, openai::overloaded(no.message), {{"retry-after", "1"}});
    case NotStarted::Why::kUnavailable:
      return send(reply, openai::service_unavailable(no.message), {{"retry-after", "5"}});
    case NotStarted::Why::kQuota: {
      HttpHeaders h = rate_headers(tenancy_, tenant);
      if (!no.quota->never_fits) h.push_back({"retry-after", std::to_string(std::max<uint64_t>(1, no.quota->retry_after_s))});
      return send(reply, openai::rate_limited(no.message), std::move(h));
    }
  }
}

HttpApi::Prepared HttpApi::prepare(Parsed p, const tenancy::Principal& who, std::string_view call_id_prefix) const {
  const openai::GenerationOptions& opt = p.options;
  Prepared run;
  ServeRequest& sr = run.serve;
  sr = std::move(p.serve);
  uint64_t seed = 0;
  const std::string seed_bytes = tenancy::random_bytes(sizeof seed);
  std::memcpy(&seed, seed_bytes.data(), sizeof seed);
  sr.who = who;
  sr.arrived = true;
  sr.request_id = "req_" + to_hex(tenancy::random_bytes(12));
  sr.model = model_.id;
  sr.sampling = openai::sampling_params(opt, seed);
  sr.max_tokens = opt.max_tokens.value_or(0);
  sr.stop = opt.stop;
  sr.cache_salt = opt.cache_salt;
  sr.prompt_cache_key = opt.prompt_cache_key;
  sr.ignore_eos = opt.ignore_eos;
  if (opt.pin_ttl.count() > 0) sr.pins = {{static_cast<int32_t>(sr.prompt.size()), opt.pin_ttl}};
  if (p.constraint) {
    try {
      sr.output_grammar = grammars_.compile(p.constraint->spec);
    } catch (const Error& e) {
      throw openai::invalid_value(p.constraint->field, e.what());
    }
    run.constrained = p.constraint->kind;
  }
  run.unique = sr.request_id.substr(4);
  if (!p.tool_names.empty()) {
    sr.tool_markers = &tool_markers_;
    run.tools = openai::ToolCallContext{chat_.tool_format(), std::string(call_id_prefix) + run.unique + "_",
                                        std::move(p.tool_names), p.parallel_tool_calls};
    run.count_tool_reply = [&metrics = pipeline_.metrics(), tenant = who.tenant.id,
                            parser = std::string(openai::tool_call_format_name(chat_.tool_format()))](
                               std::string_view outcome) { metrics.tool_reply(tenant, parser, outcome); };
  }
  return run;
}

void HttpApi::launch(Prepared run, const std::shared_ptr<ReplySink>& sink, const tenancy::Principal& who,
                     const char* input_field, server::Reply& reply, ErrorSender send) const {
  const auto started = pipeline_.start(std::move(run.serve), sink);
  if (const auto* no = std::get_if<NotStarted>(&started))
    return answer_not_started(*no, who.tenant, input_field, reply, send);
  const RequestId id = std::get<RequestId>(started);
  if (run.constrained) pipeline_.metrics().structured_output(who.tenant.id, openai::output_kind_name(*run.constrained));
  Pipeline& pipeline = pipeline_;
  reply.on_close([&pipeline, id] { pipeline.cancel(id); });  // the client went away: stop spending on it
  // The rate windows as admission left them, this request counted; the
  // sinks hold their response until now.
  sink->open(rate_headers(tenancy_, who.tenant));
}

void HttpApi::generate(const server::HttpRequest& req, server::Reply& reply, openai::Endpoint endpoint) const {
  if (model_.replica_only)
    throw openai::permission_denied(
        "This server is a replica that serves only its kvgate route front; send requests to the front.");
  const tenancy::Principal who = require_tenant(req, tenancy_);
  if (!arrive(who, reply, send_error)) return;
  Parsed p = parse(req, endpoint);
  check_bounds(p, endpoint);
  const bool stream = p.options.stream, include_usage = p.options.include_usage;
  Prepared run = prepare(std::move(p), who, "call_");
  const openai::ResponseMeta meta{endpoint == openai::Endpoint::kChatCompletions ? openai::chat_completion_id(run.unique)
                                                                                 : openai::text_completion_id(run.unique),
                                  unix_now(), model_.id};
  HttpHeaders headers{{"x-request-id", run.serve.request_id}};
  std::shared_ptr<ReplySink> sink;
  if (stream)
    sink = std::make_shared<StreamReplySink>(reply, endpoint, openai::StreamContext{meta, include_usage},
                                             std::move(headers), std::move(run.tools), std::move(run.count_tool_reply));
  else
    sink = std::make_shared<WholeReplySink>(reply, endpoint, meta, std::move(headers), std::move(run.tools),
                                            std::move(run.count_tool_reply));
  launch(std::move(run), sink, who, input_field(endpoint), reply, send_error);
}

}  // namespace kvgate::serving
