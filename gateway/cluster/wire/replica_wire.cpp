// Invariants: every decoder reads each key of an object through Fields and
// then calls Fields::done(), so a key it does not know is refused, never
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

namespace kvgate::wire {
namespace json = boost::json;
namespace {

[[noreturn]] void fail(const std::string& field, const std::string& what) { throw ReplicaWireError(field, what); }

std::string join(std::string_view path, std::string_view key) {
  std::string out(path);
  if (!out.empty()) out += '.';
  out.append(key);
  return out;
}

std::string index_path(std::string_view path, size_t i) {
  std::string out(path);
  out.append("[").append(std::to_string(i)).append("]");
  return out;
}

const char* kind_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64: return "an integer";
    case json::kind::double_: return "a number with a fraction or exponent";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "a value";
}

[[noreturn]] void wrong_type(const std::string& field, const char* expected, const json::value& got) {
  std::string what = "expected ";
  what.append(expected).append(", got ").append(kind_name(got));
  fail(field, what);
}

int64_t read_integer(const json::value& v, const std::string& field, int64_t min, int64_t max) {
  int64_t x = 0;
  if (v.is_int64()) {
    x = v.get_int64();
  } else if (v.is_uint64()) {
    std::string what = "out of range: ";
    fail(field, what.append(std::to_string(v.get_uint64())));
  } else {
    wrong_type(field, "an integer", v);
  }
  if (x < min || x > max) {
    std::string what = "out of range: ";
    what.append(std::to_string(x)).append(" is not in [").append(std::to_string(min)).append(", ");
    fail(field, what.append(std::to_string(max)).append("]"));
  }
  return x;
}

uint64_t read_unsigned(const json::value& v, const std::string& field) {
  if (v.is_uint64()) return v.get_uint64();
  if (v.is_int64()) {
    if (v.get_int64() < 0) {
      std::string what = "out of range: ";
      fail(field, what.append(std::to_string(v.get_int64())).append(" is negative"));
    }
    return static_cast<uint64_t>(v.get_int64());
  }
  wrong_type(field, "an unsigned integer", v);
}

float read_float(const json::value& v, const std::string& field) {
  double d = 0;
  if (v.is_double())
    d = v.get_double();
  else if (v.is_int64())
    d = static_cast<double>(v.get_int64());
  else if (v.is_uint64())
    d = static_cast<double>(v.get_uint64());
  else
    wrong_type(field, "a number", v);
  if (!std::isfinite(d) || std::fabs(d) > FLT_MAX) fail(field, "out of range for a float");
  return static_cast<float>(d);
}

Tokens read_tokens(const json::value& v, const std::string& field) {
  if (!v.is_array()) wrong_type(field, "an array of token ids", v);
  const json::array& a = v.get_array();
  Tokens out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(static_cast<TokenId>(read_integer(a[i], index_path(field, i), 0, std::numeric_limits<TokenId>::max())));
  return out;
}

json::value float_value(float f, const char* field) {
  if (!std::isfinite(f)) fail(field, "not a finite number");
  return static_cast<double>(f);  // exact; serialized as the shortest text that reads back to it
}

// An object's keys, each taken at most once; done() refuses any left over.
class Fields {
 public:
  // `whole`: what a top-level value (path "") is called in an error.
  Fields(const json::value& v, std::string path, const char* whole = "the body") : path_(std::move(path)) {
    if (!v.is_object()) wrong_type(path_.empty() ? std::string(whole) : path_, "an object", v);
    obj_ = &v.get_object();
  }

  const json::value& need(std::string_view key) {
    const json::value* v = obj_->if_contains(key);
    if (!v) fail(at(key), "missing");
    asked_.push_back(key);
    return *v;
  }
  std::string at(std::string_view key) const { return join(path_, key); }

  int64_t integer(std::string_view key, int64_t min, int64_t max) { return read_integer(need(key), at(key), min, max); }
  int32_t i32(std::string_view key, int32_t min = std::numeric_limits<int32_t>::min()) {
    return static_cast<int32_t>(integer(key, min, std::numeric_limits<int32_t>::max()));
  }
  uint64_t u64(std::string_view key) { return read_unsigned(need(key), at(key)); }
  float f32(std::string_view key) { return read_float(need(key), at(key)); }
  bool boolean(std::string_view key) {
    const json::value& v = need(key);
    if (!v.is_bool()) wrong_type(at(key), "a boolean", v);
    return v.get_bool();
  }
  std::string string(std::string_view key) {
    const json::value& v = need(key);
    if (!v.is_string()) wrong_type(at(key), "a string", v);
    return std::string(v.get_string());
  }
  Tokens tokens(std::string_view key) { return read_tokens(need(key), at(key)); }

  // Every key was asked for: anything else is one this build does not know.
  void done() const {
    for (const auto& kv : *obj_)
      if (std::find(asked_.begin(), asked_.end(), kv.key()) == asked_.end()) fail(at(kv.key()), "unknown key");
  }

 private:
  std::string path_;
  const json::object* obj_ = nullptr;
  std::vector<std::string_view> asked_;  // views of the caller's literals
};

json::value parse_json(std::string_view text, const char* what) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) {
    std::string msg = "not JSON (";
    fail(what, msg.append(ec.message()).append(")"));
  }
  return v;
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
  if (r.max_tokens < 0) fail("max_tokens", "negative");
  if (r.pin_ttl.count() < 0) fail("pin_ttl_s", "negative");
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
  o["max_tokens"] = r.max_tokens;
  o["ignore_eos"] = r.ignore_eos;
  o["use_cache"] = r.use_cache;
  o["cache_salt"] = r.cache_salt;
  o["pin_ttl_s"] = static_cast<int64_t>(r.pin_ttl.count());
  o["stop_ids"] = checked_ids(r.stop_ids, "stop_ids");
  o["sampling"] = std::move(sampling);
  return json::serialize(o);
}

ReplicaCall parse_replica_call(std::string_view body) {
  const json::value v = parse_json(body, "");
  Fields f(v, "");
  ReplicaCall c;
  Request& r = c.request;
  r.prompt = f.tokens("prompt");
  r.scope = parse_hex128(f.string("scope"), "scope");
  c.who.tenant = f.u64("tenant");
  c.who.priority = f.i32("priority");
  c.who.cache_quota_blocks = f.integer("cache_quota_blocks", 0, std::numeric_limits<int64_t>::max());
  r.max_tokens = f.i32("max_tokens", 0);
  r.ignore_eos = f.boolean("ignore_eos");
  r.use_cache = f.boolean("use_cache");
  r.cache_salt = f.string("cache_salt");
  r.pin_ttl = std::chrono::seconds(f.integer("pin_ttl_s", 0, std::numeric_limits<int64_t>::max()));
  r.stop_ids = f.tokens("stop_ids");
  Fields s(f.need("sampling"), "sampling");
  r.sampling.temperature = s.f32("temperature");
  r.sampling.top_k = s.i32("top_k");
  r.sampling.top_p = s.f32("top_p");
  r.sampling.seed = s.u64("seed");
  s.done();
  f.done();
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
  Fields top(v, "", "the response line");
  if (v.get_object().contains("tokens")) {
    const Tokens ids = top.tokens("tokens");
    top.done();
    if (ids.empty()) fail("tokens", "an empty array");
    for (TokenId id : ids) {
      output_.push_back(id);
      token_times_.push_back(now);
      on_token_(id);
    }
    return;
  }
  Fields d(top.need("done"), "done");
  top.done();
  Completion c;
  Fields r(d.need("result"), "done.result");
  RequestResult& res = c.result;
  res.finish = parse_finish(r.string("finish"), "done.result.finish");
  res.prompt_tokens = r.i32("prompt_tokens", 0);
  res.cached_tokens = r.i32("cached_tokens", 0);
  res.cached_device_tokens = r.i32("cached_device_tokens", 0);
  res.cached_host_tokens = r.i32("cached_host_tokens", 0);
  res.cached_disk_tokens = r.i32("cached_disk_tokens", 0);
  res.fresh_prefill_tokens = r.i32("fresh_prefill_tokens", 0);
  res.cache_written_tokens = r.i32("cache_written_tokens", 0);
  res.preemptions = r.i32("preemptions", 0);
  res.recomputed_tokens = r.i32("recomputed_tokens", 0);
  res.resumed_restored_tokens = r.i32("resumed_restored_tokens", 0);
  res.pinned_tokens = r.i32("pinned_tokens", 0);
  res.pin_refused = r.boolean("pin_refused");
  r.done();
  c.error = d.string("error");
  Fields t(d.need("timing"), "done.timing");
  constexpr int64_t kMaxUs = std::numeric_limits<int64_t>::max();
  const int64_t admitted_us = t.integer("admitted_us", -1, kMaxUs);
  t.integer("first_token_us", -1, kMaxUs);  // the front's own clock says when tokens came
  t.integer("finished_us", -1, kMaxUs);
  RequestTiming& tm = c.timing;
  tm.arrival_step = t.integer("arrival_step", -1, std::numeric_limits<int64_t>::max());
  tm.admitted_step = t.integer("admitted_step", -1, std::numeric_limits<int64_t>::max());
  tm.first_token_step = t.integer("first_token_step", -1, std::numeric_limits<int64_t>::max());
  tm.finished_step = t.integer("finished_step", -1, std::numeric_limits<int64_t>::max());
  t.done();
  d.done();

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
  Fields f(v, "");
  ReplicaInfo info;
  info.model = f.string("model");
  Fields id(f.need("identity"), "identity");
  info.identity.model = parse_hex128(id.string("model_fingerprint"), "identity.model_fingerprint");
  info.identity.n_layers = id.i32("n_layers");
  info.identity.n_kv_heads = id.i32("n_kv_heads");
  info.identity.head_dim = id.i32("head_dim");
  info.identity.kv_type = static_cast<uint8_t>(id.integer("kv_type", 0, std::numeric_limits<uint8_t>::max()));
  info.identity.block_size = id.i32("block_size");
  info.identity.hash_scheme =
      static_cast<uint32_t>(id.integer("hash_scheme", 0, std::numeric_limits<uint32_t>::max()));
  id.done();
  info.prefix_cache = f.boolean("prefix_cache");
  Fields b(f.need("bounds"), "bounds");
  info.bounds.context_length = b.i32("context_length");
  info.bounds.vocab_size = b.i32("vocab_size");
  info.bounds.block_size = b.i32("block_size");
  info.bounds.pool_blocks = b.i32("pool_blocks");
  b.done();
  info.block_events = f.string("block_events");
  info.outstanding = f.integer("outstanding", 0, std::numeric_limits<int64_t>::max());
  f.done();
  return info;
}

}  // namespace kvgate::wire
