// Invariants: a generate response is either one ordinary response (before
// the engine accepted the request) or a stream of token lines ended by
// exactly one done line; a line made before the stream opened is held and
// sent, in order, when it opens.
#include "gateway/cluster/replica/internal_api.h"

#include <charconv>
#include <memory>

#include "base/error.h"
#include "base/mutex.h"
#include "gateway/openai/api_error.h"
#include "gateway/serving/json_reply.h"
#include "gateway/cluster/wire/replica_wire.h"

namespace kvgate::replica {
namespace {

constexpr std::string_view kBearer = "Bearer ";

void require_token(const server::HttpRequest& req, const wire::InternalToken& token) {
  const std::optional<std::string_view> auth = req.header("authorization");
  if (!auth || !auth->starts_with(kBearer) || !token.matches(auth->substr(kBearer.size())))
    throw openai::ApiError(401, "The internal routes need the route front's token as 'Authorization: Bearer ...'.",
                           "authentication_error", std::nullopt, "invalid_internal_token");
}

// One generate response's stream. The engine may produce tokens, even the
// completion, before submit() returns and the stream can open: those are
// held (the tokens as one line) until open().
class ReplicaStream {
 public:
  explicit ReplicaStream(server::Reply reply) : reply_(std::move(reply)) {}

  void open(RequestId id) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(mu_);
    reply_.start_stream(200, {{"Content-Type", std::string(wire::kReplicaStreamContentType)},
                              {std::string(wire::kReplicaRequestIdHeader), std::to_string(id)}});
    if (!held_tokens_.empty()) reply_.write(wire::encode_token_line(held_tokens_));
    held_tokens_.clear();
    open_ = true;
    if (!held_done_.empty()) {
      reply_.write(std::move(held_done_));
      reply_.finish();
    }
  }
  // On the engine loop: must not block.
  void on_event(TokenId token, const Completion* done) ABSL_LOCKS_EXCLUDED(mu_) {
    if (!done) {
      MutexLock lock(mu_);
      if (!open_) {
        held_tokens_.push_back(token);
        return;
      }
      const TokenId one[] = {token};
      reply_.write(wire::encode_token_line(one));
      return;
    }
    std::string line = wire::encode_done_line(*done);
    MutexLock lock(mu_);
    if (!open_) {
      held_done_ = std::move(line);
      return;
    }
    reply_.write(std::move(line));
    reply_.finish();
  }

 private:
  server::Reply reply_;
  Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  Tokens held_tokens_ ABSL_GUARDED_BY(mu_);
  std::string held_done_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

InternalApi::InternalApi(Engine& engine, wire::InternalToken token, std::string model, cache::KvIdentity identity,
                         std::string block_events, BlockEventPublisher* publisher,
                         serving::OutputGrammars* grammars)
    : engine_(engine),
      token_(std::move(token)),
      model_(std::move(model)),
      identity_(identity),
      block_events_(std::move(block_events)),
      publisher_(publisher),
      grammars_(grammars) {}

void InternalApi::operator()(const server::HttpRequest& req, server::Reply& reply) const {
  serving::answer_or_error(reply, [&] { route(req, reply); });
}

void InternalApi::route(const server::HttpRequest& req, server::Reply& reply) const {
  const std::string_view path = req.path();
  auto only = [&](std::string_view method) {
    if (req.method != method) throw openai::method_not_allowed(req.method, path);
  };
  if (path == wire::kReplicaGeneratePath) {
    only("POST");
    require_token(req, token_);
    return generate(req, reply);
  }
  if (path.starts_with(wire::kReplicaCancelPath)) {
    only("POST");
    require_token(req, token_);
    return cancel(path.substr(wire::kReplicaCancelPath.size()), reply);
  }
  if (path == wire::kReplicaInfoPath) {
    only("GET");
    require_token(req, token_);
    return info(reply);
  }
  if (path == wire::kReplicaBlocksPath) {
    only("GET");
    require_token(req, token_);
    return blocks(reply);
  }
  throw openai::route_not_found(req.method, path);
}

void InternalApi::generate(const server::HttpRequest& req, server::Reply& reply) const {
  wire::ReplicaCall call;
  try {
    call = wire::parse_replica_call(req.body);
  } catch (const wire::ReplicaWireError& e) {
    throw openai::invalid_request(e.what(), e.field().empty() ? std::nullopt : std::optional(e.field()));
  }
  if (!call.output_grammar_spec.empty()) {
    if (!grammars_) throw openai::invalid_request("this replica compiles no output grammars", "output_grammar");
    try {
      call.request.output_grammar = grammars_->compile(call.output_grammar_spec);
    } catch (const Error& e) {
      throw openai::invalid_request(e.what(), "output_grammar");
    }
  }
  auto stream = std::make_shared<ReplicaStream>(reply);
  RequestId id = 0;
  try {
    id = engine_.submit(std::move(call.request), call.who,
                        [stream](TokenId t, const Completion* done) { stream->on_event(t, done); })
             ->id();
  } catch (const EngineBusy& e) {
    return serving::send_error(reply, openai::overloaded(e.what()), {{"retry-after", "1"}});
  } catch (const EngineFailed& e) {
    return serving::send_error(reply, openai::overloaded(e.what()), {{"retry-after", "1"}});
  } catch (const Error& e) {
    throw openai::invalid_request(e.what());  // the engine's limits: the front sent what this engine cannot run
  }
  Engine& engine = engine_;
  reply.on_close([&engine, id] { engine.cancel(id); });  // the front went away: stop spending on it
  stream->open(id);
}

void InternalApi::cancel(std::string_view id_text, server::Reply& reply) const {
  RequestId id = 0;
  const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  if (ec != std::errc() || end != id_text.data() + id_text.size() || id_text.empty())
    throw openai::invalid_request("the request id to cancel must be a decimal number, not '" + std::string(id_text) + "'");
  engine_.cancel(id);
  serving::send_json(reply, 200, {{"cancelled", id}});
}

void InternalApi::info(server::Reply& reply) const {
  wire::ReplicaInfo info;
  info.model = model_;
  info.identity = identity_;
  info.prefix_cache = engine_.cache_identity().has_value();
  info.bounds = engine_.bounds();
  info.block_events = block_events_;
  info.outstanding = engine_.outstanding();
  reply.send(200, {{"Content-Type", "application/json"}}, wire::encode_replica_info(info));
}

void InternalApi::blocks(server::Reply& reply) const {
  if (!publisher_)
    throw openai::ApiError(404, "this replica publishes no block events", "invalid_request_error", std::nullopt,
                           "no_block_events");
  const std::vector<std::byte> bytes = wire::encode(publisher_->snapshot());
  reply.send(200, {{"Content-Type", "application/octet-stream"}},
             std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

}  // namespace kvgate::replica
