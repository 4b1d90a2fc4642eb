// Invariants: every decoder reads each key of an object through the shared
// FieldReader (gateway/json/field_reader.h) under its exact convention and
// then calls refuse_unread_keys(), so a key it does not know is refused, never
// skipped; integers are range-checked before they are narrowed; a float
// travels as the double it converts to exactly, so it comes back bit for bit.
#include "gateway/cluster/wire/replica_wire.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>

#include "gateway/json/field_reader.h"

namespace kvgate::wire {
namespace json = boost::json;
namespace {

[[noreturn]] void fail(const std::string& field, const std::string& what) { throw ReplicaWireError(field, what); }

[[noreturn]] void wrong_type(const std::string& field, std::string_view expected, std::string_view got) {
  fail(field, "expected " + std::string(expected) + ", got " + std::string(got));
}

[[noreturn]] void wrong_type(const std::string& field, std::string_view expected, const json::value& got) {
  wrong_type(field, expected, json_fields::json_kind_name(got, json_fields::Convention::kExact));
}

// The shared reader's faults as this wire names them: "sampling.top_k: expected an integer, got a string".
class WireFieldErrors final : public json_fields::FieldErrors {
 public:
  [[noreturn]] void missing(const std::string& path) const override { fail(path, "missing"); }
  [[noreturn]] void wrong_type(const std::string& path, std::string_view expected,
                               std::string_view got) const override {
    kvgate::wire::wrong_type(path, expected, got);
  }
  [[noreturn]] void bad_value(const std::string& path, std::string_view why) const override {
    fail(path, std::string(why));
  }
};

constinit const WireFieldErrors kWireFieldErrors;

using json_fields::FieldReader;
using json_fields::index_path;

json::value parse_json(std::string_view text, const char* what) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) {
    std::string msg = "not JSON (";
    fail(what, msg.append(ec.message()).append(")"));
  }
  return v;
}

// A reader of the object a body or line holds; `whole` names it in errors.
FieldReader top_fields(const json::value& v, const char* whole) {
  if (!v.is_object()) wrong_type(whole, "an object", v);
  return FieldReader(v.get_object(), "", kWireFieldErrors, json_fields::Convention::kExact);
}

Tokens read_tokens(const FieldReader& f, std::string_view key) {
  const json::value& v = f.need(key);
  const std::string field = f.path(key);
  if (!v.is_array()) wrong_type(field, "an array of token ids", v);
  const json::array& a = v.get_array();
  Tokens out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(static_cast<TokenId>(f.integer_in(a[i], index_path(field, i), 0, std::numeric_limits<TokenId>::max())));
  return out;
}

// [[tokens, ttl_s], ...]: Request::pins, each pair non-negative (the
// engine checks the rest against the prompt).
std::vector<PinSpan> read_pins(const FieldReader& f, std::string_view key) {
  const json::value& v = f.need(key);
  const std::string field = f.path(key);
  if (!v.is_array()) wrong_type(field, "an array of [tokens, ttl_s] pairs", v);
  std::vector<PinSpan> out;
  for (size_t i = 0; i < v.get_array().size(); ++i) {
    const json::value& p = v.get_array()[i];
    const std::string at = index_path(field, i);
    if (!p.is_array() || p.get_array().size() != 2) wrong_type(at, "a [tokens, ttl_s] pair", p);
    const auto tokens = f.integer_in(p.get_array()[0], at + "[0]", 0, std::numeric_limits<int32_t>::max());
    const auto ttl = f.integer_in(p.get_array()[1], at + "[1]", 0, std::numeric_limits<int64_t>::max());
    out.push_back({static_cast<int32_t>(tokens), std::chrono::seconds(ttl)});
  }
  return out;
}

int32_t read_i32(const FieldReader& f, std::string_view key, int32_t min = std::numeric_limits<int32_t>::min()) {
  return static_cast<int32_t>(f.need_integer(key, min, std::numeric_limits<int32_t>::max()));
}

// A float travels as the double it converts to exactly.
float read_float(const FieldReader& f, std::string_view key) {
  const double d = f.need_number(key);
  if (std::fabs(d) > FLT_MAX) fail(f.path(key), "out of range for a float");
  return static_cast<float>(d);
}

json::value float_value(float f, const char* field) {
  if (!std::isfinite(f)) fail(field, "not a finite number");
  return static_cast<double>(f);  // exact; serialized as the shortest text that reads back to it
}

// The ids a request carries: negative ones are refused at both ends.
json::array checked_ids(std::span<const TokenId> ids, const char* field) {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0) fail(index_path(field, i), "a negative token id");
  json::array a;
  a.reserve(ids.size());
  for (TokenId t : ids) a.emplace_back(t);
  return a;
}

json::array token_array(std::span<const TokenId> ids) {
  json::array a;
  a.reserve(ids.size());
  for (TokenId t : ids) a.emplace_back(t);
  return a;
}

std::string hex128(const cache::Hash128& h) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016" PRIx64 "%016" PRIx64, h.hi, h.lo);
  return buf;
}

cache::Hash128 parse_hex128(const std::string& text, const std::string& field) {
  auto half = [&](std::string_view s) {
    uint64_t x = 0;
    for (char c : s) {
      int d = 0;
      if (c >= '0' && c <= '9')
        d = c - '0';
      else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
      else
        fail(field, "not 32 lowercase hex digits");
      x = x << 4 | static_cast<uint64_t>(d);
    }
    return x;
  };
  if (text.size() != 32) fail(field, "not 32 lowercase hex digits");
  const std::string_view s = text;
  return {.lo = half(s.substr(16)), .hi = half(s.substr(0, 16))};
}

FinishReason parse_finish(const std::string& name, const std::string& field) {
  for (FinishReason r : {FinishReason::kStop, FinishReason::kLength, FinishReason::kCancelled, FinishReason::kError})
    if (finish_reason_name(r) == name) return r;
  std::string what = "unknown finish reason '";
  fail(field, what.append(name).append("'"));
}

// Microseconds from arrival, -1 for a milestone not reached (RequestTiming
// leaves those at the clock's epoch).
int64_t offset_us(SteadyClock::time_point arrival, SteadyClock::time_point t) {
  if (t == SteadyClock::time_point{}) return -1;
  return std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::microseconds>(t - arrival).count());
}

}  // namespace

// ---- the request

std::string encode_replica_call(const Request& r, const Submitter& who) {
  if (!r.scope) fail("scope", "a request without a cache scope cannot be sent (the engine refuses it)");
  // Only what parse_replica_call() takes back: a value it refuses is the
  // sender's bug, told here rather than as the replica's 400.
  if (who.cache_quota_blocks < 0) fail("cache_quota_blocks", "negative");
  if (who.pin_quota_blocks < 0) fail("pin_quota_blocks", "negative");
  if (r.max_tokens < 0) fail("max_tokens", "negative");
  for (size_t i = 0; i < r.pins.size(); ++i)
    if (r.pins[i].tokens < 0 || r.pins[i].ttl.count() < 0) fail(index_path("pins", i), "negative");
  json::object sampling;
  sampling["temperature"] = float_value(r.sampling.temperature, "sampling.temperature");
  sampling["top_k"] = r.sampling.top_k;
  sampling["top_p"] = float_value(r.sampling.top_p, "sampling.top_p");
  sampling["seed"] = r.sampling.seed;
  json::object o;
  o["prompt"] = checked_ids(r.prompt, "prompt");
  o["scope"] = hex128(*r.scope);
  o["tenant"] = who.tenant;
  o["priority"] = who.priority;
  o["cache_quota_blocks"] = who.cache_quota_blocks;
  o["pin_quota_blocks"] = who.pin_quota_blocks;
  o["max_tokens"] = r.max_tokens;
  o["ignore_eos"] = r.ignore_eos;
  o["use_cache"] = r.use_cache;
  o["cache_salt"] = r.cache_salt;
  json::array pins;
  for (const PinSpan& p : r.pins) pins.emplace_back(json::array{p.tokens, static_cast<int64_t>(p.ttl.count())});
  o["pins"] = std::move(pins);
  o["stop_ids"] = checked_ids(r.stop_ids, "stop_ids");
  o["sampling"] = std::move(sampling);
  if (r.output_grammar) o["output_grammar"] = r.output_grammar->spec;
  return json::serialize(o);
}

ReplicaCall parse_replica_call(std::string_view body) {
  const json::value v = parse_json(body, "");
  const FieldReader f = top_fields(v, "the body");
  ReplicaCall c;
  Request& r = c.request;
  r.prompt = read_tokens(f, "prompt");
  r.scope = parse_hex128(f.need_string("scope"), "scope");
  c.who.tenant = f.need_unsigned("tenant");
  c.who.priority = read_i32(f, "priority");
  c.who.cache_quota_blocks = f.need_integer("cache_quota_blocks", 0, std::numeric_limits<int64_t>::max());
  c.who.pin_quota_blocks = f.need_integer("pin_quota_blocks", 0, std::numeric_limits<int64_t>::max());
  r.max_tokens = read_i32(f, "max_tokens", 0);
  r.ignore_eos = f.need_boolean("ignore_eos");
  r.use_cache = f.need_boolean("use_cache");
  r.cache_salt = f.need_string("cache_salt");
  r.pins = read_pins(f, "pins");
  r.stop_ids = read_tokens(f, "stop_ids");
  const FieldReader s = f.need_object("sampling");
  r.sampling.temperature = read_float(s, "temperature");
  r.sampling.top_k = read_i32(s, "top_k");
  r.sampling.top_p = read_float(s, "top_p");
  r.sampling.seed = s.need_unsigned("seed");
  if (f.find("output_grammar")) c.output_grammar_spec = f.need_string("output_grammar");
  s.refuse_unread_keys();
  f.refuse_unread_keys();
  return c;
}

// ---- the response stream

std::string encode_token_line(std::span<const TokenId> tokens) {
  json::object o;
  o["tokens"] = token_array(tokens);
  std::string line = json::serialize(o);
  line += '\n';
  return line;
}

std::string encode_done_line(const Completion& c) {
  const RequestResult& r = c.result;
  json::object result;
  result["finish"] = finish_reason_name(r.finish);
  result["prompt_tokens"] = r.prompt_tokens;
  result["cached_tokens"] = r.cached_tokens;
  result["cached_device_tokens"] = r.cached_device_tokens;
  result["cached_host_tokens"] = r.cached_host_tokens;
  result["cached_disk_tokens"] = r.cached_disk_tokens;
  result["fresh_prefill_tokens"] = r.fresh_prefill_tokens;
  result["cache_written_tokens"] = r.cache_written_tokens;
  result["preemptions"] = r.preemptions;
  result["recomputed_tokens"] = r.recomputed_tokens;
  result["resumed_restored_tokens"] = r.resumed_restored_tokens;
  result["pinned_tokens"] = r.pinned_tokens;
  result["pin_refused"] = r.pin_refused;
  const RequestTiming& t = c.timing;
  json::object timing;
  timing["admitted_us"] = offset_us(t.arrival, t.admitted);
  timing["first_token_us"] = offset_us(t.arrival, t.first_token);
  timing["finished_us"] = offset_us(t.arrival, t.finished);
  timing["arrival_step"] = t.arrival_step;
  timing["admitted_step"] = t.admitted_step;
  timing["first_token_step"] = t.first_token_step;
  timing["finished_step"] = t.finished_step;
  json::object done;
  done["result"] = std::move(result);
  done["error"] = c.error;
  done["timing"] = std::move(timing);
  json::object o;
  o["done"] = std::move(done);
  std::string line = json::serialize(o);
  line += '\n';
  return line;
}

ReplicaStreamReader::ReplicaStreamReader(SteadyClock::time_point arrival, std::function<void(TokenId)> on_token,
                                         std::function<void(Completion)> on_done)
    : arrival_(arrival), on_token_(std::move(on_token)), on_done_(std::move(on_done)) {}

void ReplicaStreamReader::feed(std::string_view bytes, SteadyClock::time_point now) {
  if (spent_) fail("", "the stream was already refused");
  try {
    split(bytes, now);
  } catch (...) {
    spent_ = true;
    throw;
  }
}

void ReplicaStreamReader::split(std::string_view bytes, SteadyClock::time_point now) {
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (partial_.size() + piece.size() > kReplicaMaxLine)
      fail("", "a response line is longer than " + std::to_string(kReplicaMaxLine) + " bytes");
    if (nl == std::string_view::npos) {
      partial_.append(piece);
      return;
    }
    bytes.remove_prefix(nl + 1);
    if (partial_.empty()) {
      line(piece, now);
    } else {
      partial_.append(piece);
      const std::string whole = std::move(partial_);
      partial_.clear();
      line(whole, now);
    }
  }
}

void ReplicaStreamReader::line(std::string_view text, SteadyClock::time_point now) {
  if (done_) fail("", "a line after the done line");
  const json::value v = parse_json(text, "the response line");
  const FieldReader top = top_fields(v, "the response line");
  if (v.get_object().contains("tokens")) {
    const Tokens ids = read_tokens(top, "tokens");
    top.refuse_unread_keys();
    if (ids.empty()) fail("tokens", "an empty array");
    for (TokenId id : ids) {
      output_.push_back(id);
      token_times_.push_back(now);
      on_token_(id);
    }
    return;
  }
  const FieldReader d = top.need_object("done");
  top.refuse_unread_keys();
  Completion c;
  const FieldReader r = d.need_object("result");
  RequestResult& res = c.result;
  res.finish = parse_finish(r.need_string("finish"), "done.result.finish");
  res.prompt_tokens = read_i32(r, "prompt_tokens", 0);
  res.cached_tokens = read_i32(r, "cached_tokens", 0);
  res.cached_device_tokens = read_i32(r, "cached_device_tokens", 0);
  res.cached_host_tokens = read_i32(r, "cached_host_tokens", 0);
  res.cached_disk_tokens = read_i32(r, "cached_disk_tokens", 0);
  res.fresh_prefill_tokens = read_i32(r, "fresh_prefill_tokens", 0);
  res.cache_written_tokens = read_i32(r, "cache_written_tokens", 0);
  res.preemptions = read_i32(r, "preemptions", 0);
  res.recomputed_tokens = read_i32(r, "recomputed_tokens", 0);
  res.resumed_restored_tokens = read_i32(r, "resumed_restored_tokens", 0);
  res.pinned_tokens = read_i32(r, "pinned_tokens", 0);
  res.pin_refused = r.need_boolean("pin_refused");
  r.refuse_unread_keys();
  c.error = d.need_string("error");
  const FieldReader t = d.need_object("timing");
  constexpr int64_t kMaxUs = std::numeric_limits<int64_t>::max();
  const int64_t admitted_us = t.need_integer("admitted_us", -1, kMaxUs);
  t.need_integer("first_token_us", -1, kMaxUs);  // the front's own clock says when tokens came
  t.need_integer("finished_us", -1, kMaxUs);
  RequestTiming& tm = c.timing;
  tm.arrival_step = t.need_integer("arrival_step", -1, std::numeric_limits<int64_t>::max());
  tm.admitted_step = t.need_integer("admitted_step", -1, std::numeric_limits<int64_t>::max());
  tm.first_token_step = t.need_integer("first_token_step", -1, std::numeric_limits<int64_t>::max());
  tm.finished_step = t.need_integer("finished_step", -1, std::numeric_limits<int64_t>::max());
  t.refuse_unread_keys();
  d.refuse_unread_keys();

  // On the front's clock: what it saw, and the replica's queueing offset
  // placed between arrival and the first thing the front saw after it.
  tm.arrival = arrival_;
  tm.finished = now;
  tm.token_times = std::move(token_times_);
  if (!tm.token_times.empty()) tm.first_token = tm.token_times.front();
  if (admitted_us >= 0) {
    const SteadyClock::time_point latest = tm.token_times.empty() ? now : tm.first_token;
    const int64_t room = std::chrono::duration_cast<std::chrono::microseconds>(latest - arrival_).count();
    tm.admitted = arrival_ + std::chrono::microseconds(std::clamp<int64_t>(admitted_us, 0, std::max<int64_t>(0, room)));
  }
  res.output = std::move(output_);
  done_ = true;
  on_done_(std::move(c));
}

// ---- the replica's description

std::string encode_replica_info(const ReplicaInfo& info) {
  const cache::KvIdentity& id = info.identity;
  json::object identity;
  identity["model_fingerprint"] = hex128(id.model);
  identity["n_layers"] = id.n_layers;
  identity["n_kv_heads"] = id.n_kv_heads;
  identity["head_dim"] = id.head_dim;
  identity["kv_type"] = id.kv_type;
  identity["block_size"] = id.block_size;
  identity["hash_scheme"] = id.hash_scheme;
  json::object bounds;
  bounds["context_length"] = info.bounds.context_length;
  bounds["vocab_size"] = info.bounds.vocab_size;
  bounds["block_size"] = info.bounds.block_size;
  bounds["pool_blocks"] = info.bounds.pool_blocks;
  json::object o;
  o["model"] = info.model;
  o["identity"] = std::move(identity);
  o["prefix_cache"] = info.prefix_cache;
  o["bounds"] = std::move(bounds);
  o["block_events"] = info.block_events;
  o["outstanding"] = info.outstanding;
  return json::serialize(o);
}

ReplicaInfo parse_replica_info(std::string_view body) {
  const json::value v = parse_json(body, "");
  const FieldReader f = top_fields(v, "the body");
  ReplicaInfo info;
  info.model = f.need_string("model");
  const FieldReader id = f.need_object("identity");
  info.identity.model = parse_hex128(id.need_string("model_fingerprint"), "identity.model_fingerprint");
  info.identity.n_layers = read_i32(id, "n_layers");
  info.identity.n_kv_heads = read_i32(id, "n_kv_heads");
  info.identity.head_dim = read_i32(id, "head_dim");
  info.identity.kv_type = static_cast<uint8_t>(id.need_integer("kv_type", 0, std::numeric_limits<uint8_t>::max()));
  info.identity.block_size = read_i32(id, "block_size");
  info.identity.hash_scheme =
      static_cast<uint32_t>(id.need_integer("hash_scheme", 0, std::numeric_limits<uint32_t>::max()));
  id.refuse_unread_keys();
  info.prefix_cache = f.need_boolean("prefix_cache");
  const FieldReader b = f.need_object("bounds");
  info.bounds.context_length = read_i32(b, "context_length");
  info.bounds.vocab_size = read_i32(b, "vocab_size");
  info.bounds.block_size = read_i32(b, "block_size");
  info.bounds.pool_blocks = read_i32(b, "pool_blocks");
  b.refuse_unread_keys();
  info.block_events = f.need_string("block_events");
  info.outstanding = f.need_integer("outstanding", 0, std::numeric_limits<int64_t>::max());
  f.refuse_unread_keys();
  return info;
}

}  // namespace kvgate::wire
