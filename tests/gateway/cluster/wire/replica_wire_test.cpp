// The front <-> replica wire (replica_wire.h): a request comes back exactly
// as it was sent, every bad field is refused by name, the reader takes a
// response cut at any byte, and the completion's timing is rebuilt on the
// front's clock.
#include "gateway/cluster/wire/replica_wire.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace kvgate {

// The engine's structs have no equality of their own; the wire's round trip
// is checked field by field.
static bool operator==(const SamplingParams& a, const SamplingParams& b) {
  // Bit for bit: a float must come back as the same float.
  return std::memcmp(&a.temperature, &b.temperature, sizeof(float)) == 0 && a.top_k == b.top_k &&
         std::memcmp(&a.top_p, &b.top_p, sizeof(float)) == 0 && a.seed == b.seed;
}
static bool operator==(const Request& a, const Request& b) {
  return a.prompt == b.prompt && a.sampling == b.sampling && a.max_tokens == b.max_tokens && a.stop_ids == b.stop_ids &&
         a.ignore_eos == b.ignore_eos && a.scope == b.scope && a.cache_salt == b.cache_salt &&
         a.use_cache == b.use_cache && a.prompt_chain == b.prompt_chain && a.pins == b.pins;
}
static bool operator==(const Submitter& a, const Submitter& b) {
  return a.tenant == b.tenant && a.priority == b.priority && a.cache_quota_blocks == b.cache_quota_blocks &&
         a.pin_quota_blocks == b.pin_quota_blocks;
}
static bool operator==(const RequestResult& a, const RequestResult& b) {
  return a.id == b.id && a.output == b.output && a.finish == b.finish && a.prompt_tokens == b.prompt_tokens &&
         a.cached_tokens == b.cached_tokens && a.cached_device_tokens == b.cached_device_tokens &&
         a.cached_host_tokens == b.cached_host_tokens &&
         a.cached_disk_tokens == b.cached_disk_tokens && a.fresh_prefill_tokens == b.fresh_prefill_tokens &&
         a.cache_written_tokens == b.cache_written_tokens && a.preemptions == b.preemptions &&
         a.recomputed_tokens == b.recomputed_tokens && a.resumed_restored_tokens == b.resumed_restored_tokens &&
         a.pinned_tokens == b.pinned_tokens && a.pin_refused == b.pin_refused;
}
static bool operator==(const RequestBounds& a, const RequestBounds& b) {
  return a.context_length == b.context_length && a.vocab_size == b.vocab_size && a.block_size == b.block_size &&
         a.pool_blocks == b.pool_blocks;
}

namespace wire {
namespace {

namespace json = boost::json;
using std::chrono::microseconds;

std::string random_text(std::mt19937_64& rng) {
  // UTF-8, as every salt is (it arrived in a JSON string), with what JSON escapes.
  static const char* const kPieces[] = {"a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\xc3\xa9", "\xe2\x82\xac"};
  std::string s;
  for (size_t n = rng() % 12; n > 0; --n) s += kPieces[rng() % std::size(kPieces)];
  return s;
}

float random_float(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: return 0.0f;
    case 1: return 1.0f;
    case 2: return std::nextafter(0.7f, 2.0f);
    default: {
      float f = 0;
      do {
        const auto bits = static_cast<uint32_t>(rng());
        std::memcpy(&f, &bits, sizeof f);
      } while (!std::isfinite(f));
      return f;
    }
  }
}

Tokens random_ids(std::mt19937_64& rng, size_t max_n) {
  Tokens t(rng() % (max_n + 1));
  for (TokenId& id : t) id = static_cast<TokenId>(rng() % 3 == 0 ? std::numeric_limits<TokenId>::max() - rng() % 3
                                                                  : rng() % 32000);
  return t;
}

ReplicaCall random_call(std::mt19937_64& rng) {
  ReplicaCall c;
  Request& r = c.request;
  r.prompt = random_ids(rng, 40);
  r.sampling = {random_float(rng), static_cast<int32_t>(rng()), random_float(rng), rng()};
  r.max_tokens = static_cast<int32_t>(rng() % (uint64_t{1} << 31));
  r.stop_ids = random_ids(rng, 3);
  r.ignore_eos = rng() % 2;
  r.scope = cache::ScopeId{rng(), rng()};
  r.cache_salt = random_text(rng);
  r.use_cache = rng() % 2;
  if (rng() % 2) r.pins = {{static_cast<int32_t>(rng() >> 33), std::chrono::seconds(static_cast<int64_t>(rng() >> 1))}};
  c.who.tenant = rng() % 2 ? rng() : rng() % 10;  // labels are XXH3-64: above 2^63 as often as not
  c.who.priority = static_cast<int32_t>(rng());
  c.who.cache_quota_blocks = static_cast<int64_t>(rng() >> (rng() % 63 + 1));
  c.who.pin_quota_blocks = static_cast<int64_t>(rng() >> (rng() % 63 + 1));
  return c;
}

TEST(ReplicaWire, ARequestComesBackExactly) {
  std::mt19937_64 rng(17);
  for (int i = 0; i < 500; ++i) {
    const ReplicaCall sent = random_call(rng);
    const std::string body = encode_replica_call(sent.request, sent.who);
    const ReplicaCall got = parse_replica_call(body);
    ASSERT_EQ(got.request, sent.request) << body;
    ASSERT_EQ(got.who, sent.who) << body;
  }
}

TEST(ReplicaWire, AnOutputGrammarTravelsAsItsSpecForTheReplicaToCompile) {
  Request r;
  r.prompt = {1, 2, 3};
  r.scope = cache::ScopeId{1, 2};
  const std::string spec = R"({"json_schema":{"type":"integer"}})";
  r.output_grammar = grammar::OutputGrammar{nullptr, nullptr, spec};
  const ReplicaCall got = parse_replica_call(encode_replica_call(r, {}));
  EXPECT_EQ(got.output_grammar_spec, spec);
  EXPECT_FALSE(got.request.output_grammar);  // compiled by the replica, against its own vocabulary
  r.output_grammar.reset();
  EXPECT_EQ(parse_replica_call(encode_replica_call(r, {})).output_grammar_spec, "");
  json::value wrong = json::parse(encode_replica_call(r, {}));
  wrong.as_object()["output_grammar"] = 7;
  EXPECT_THROW(
      {
        try {
          parse_replica_call(json::serialize(wrong));
        } catch (const ReplicaWireError& e) {
          EXPECT_EQ(e.field(), "output_grammar");
          throw;
        }
      },
      ReplicaWireError);
}

TEST(ReplicaWire, ThePromptChainIsNotSentAndTheScopeIsHiThenLo) {
  Request r;
  r.prompt = {1, 2, 3};
  r.scope = cache::ScopeId{.lo = 0x0123456789abcdefULL, .hi = 0xfedcba9876543210ULL};
  r.prompt_chain = {cache::BlockHash{1, 2}};
  const std::string body = encode_replica_call(r, {});
  EXPECT_EQ(json::parse(body).at("scope").as_string(), "fedcba98765432100123456789abcdef");
  EXPECT_EQ(body.find("chain"), std::string::npos);
  EXPECT_TRUE(parse_replica_call(body).request.prompt_chain.empty());
}

TEST(ReplicaWire, ARequestTheReplicaWouldRefuseIsNotSent) {
  Request r;
  r.prompt = {1};
  try {
    encode_replica_call(r, {});
    FAIL();
  } catch (const ReplicaWireError& e) {
    EXPECT_EQ(e.field(), "scope");
  }
  r.scope = cache::ScopeId{1, 2};
  r.sampling.top_p = std::numeric_limits<float>::quiet_NaN();
  try {
    encode_replica_call(r, {});
    FAIL();
  } catch (const ReplicaWireError& e) {
    EXPECT_EQ(e.field(), "sampling.top_p");
  }
  r.sampling.top_p = 1;
  // What the replica would refuse is not sent either.
  const auto refused = [](const Request& q, const Submitter& w) {
    try {
      encode_replica_call(q, w);
    } catch (const ReplicaWireError& e) {
      return e.field();
    }
    return std::string("(sent)");
  };
  EXPECT_EQ(refused(r, {.cache_quota_blocks = -1}), "cache_quota_blocks");
  EXPECT_EQ(refused(r, {.pin_quota_blocks = -1}), "pin_quota_blocks");
  Request q = r;
  q.max_tokens = -1;
  EXPECT_EQ(refused(q, {}), "max_tokens");
  q = r;
  q.pins = {{1, std::chrono::seconds(-1)}};
  EXPECT_EQ(refused(q, {}), "pins[0]");
  q = r;
  q.prompt = {1, -1};
  EXPECT_EQ(refused(q, {}), "prompt[1]");
  q = r;
  q.stop_ids = {-1};
  EXPECT_EQ(refused(q, {}), "stop_ids[0]");
}

// The field a ReplicaWireError names for `body`, or "(accepted)".
template <typename Parse>
std::string refused_field(Parse parse, const json::value& body) {
  try {
    parse(json::serialize(body));
  } catch (const ReplicaWireError& e) {
    EXPECT_NE(std::string(e.what()).find(e.field()), std::string::npos) << e.what();
    return e.field();
  }
  return "(accepted)";
}

json::value& at_path(json::value& root, std::string_view path) {
  json::value* v = &root;
  while (true) {
    const size_t dot = path.find('.');
    if (dot == std::string_view::npos) return v->as_object()[path];
    v = &v->as_object()[path.substr(0, dot)];
    path.remove_prefix(dot + 1);
  }
}

void erase_path(json::value& root, std::string_view path) {
  const size_t dot = path.rfind('.');
  json::value& parent = dot == std::string_view::npos ? root : at_path(root, path.substr(0, dot));
  parent.as_object().erase(dot == std::string_view::npos ? path : path.substr(dot + 1));
}

TEST(ReplicaWire, EveryRequestFieldMissingOrOfTheWrongTypeIsRefusedByName) {
  Request r;
  r.prompt = {1, 2};
  r.stop_ids = {5};
  r.scope = cache::ScopeId{3, 4};
  const json::value good = json::parse(encode_replica_call(r, {.tenant = 9, .priority = 1, .cache_quota_blocks = 2}));
  const auto parse = [](const std::string& b) { return parse_replica_call(b); };
  ASSERT_EQ(refused_field(parse, good), "(accepted)");
  const std::vector<std::string> fields = {
      "prompt", "scope", "tenant", "priority", "cache_quota_blocks", "pin_quota_blocks", "max_tokens", "ignore_eos", "use_cache",
      "cache_salt", "pins", "stop_ids", "sampling", "sampling.temperature", "sampling.top_k", "sampling.top_p",
      "sampling.seed"};
  for (const std::string& f : fields) {
    json::value missing = good;
    erase_path(missing, f);
    EXPECT_EQ(refused_field(parse, missing), f) << "missing " << f;
    json::value wrong = good;
    at_path(wrong, f) = f == "cache_salt" || f == "scope" ? json::value(true) : json::value("seven");
    EXPECT_EQ(refused_field(parse, wrong), f) << "wrong type " << f;
  }
}

TEST(ReplicaWire, OutOfRangeValuesAndUnknownKeysAreRefusedByName) {
  Request r;
  r.prompt = {1, 2};
  r.stop_ids = {5};
  r.scope = cache::ScopeId{3, 4};
  const json::value good = json::parse(encode_replica_call(r, {}));
  const auto parse = [](const std::string& b) { return parse_replica_call(b); };
  struct Case {
    std::string path;
    json::value value;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"prompt", json::array{1, -1}, "prompt[1]"},
      {"prompt", json::array{int64_t{1} << 31}, "prompt[0]"},
      {"prompt", json::array{1.5}, "prompt[0]"},
      {"stop_ids", json::array{-3}, "stop_ids[0]"},
      {"scope", "0123", "scope"},
      {"scope", "0123456789ABCDEF0123456789abcdef", "scope"},
      {"tenant", -1, "tenant"},
      {"priority", int64_t{1} << 40, "priority"},
      {"cache_quota_blocks", -1, "cache_quota_blocks"},
      {"cache_quota_blocks", uint64_t{1} << 63, "cache_quota_blocks"},
      {"pin_quota_blocks", -1, "pin_quota_blocks"},
      {"max_tokens", -1, "max_tokens"},
      {"pins", json::parse("[[1, -5]]"), "pins[0][1]"},  // (a braced nested array flattens under clang)
      {"pins", json::parse("[[1]]"), "pins[0]"},
      {"pins", json::array{1}, "pins[0]"},
      {"sampling.temperature", 1e300, "sampling.temperature"},
      {"sampling.top_k", int64_t{1} << 33, "sampling.top_k"},
      {"sampling.seed", -2, "sampling.seed"},
      {"extra", 1, "extra"},
      {"sampling.extra", 1, "sampling.extra"},
  };
  for (const Case& c : cases) {
    json::value body = good;
    at_path(body, c.path) = c.value;
    EXPECT_EQ(refused_field(parse, body), c.field) << c.path << " = " << json::serialize(c.value);
  }
  EXPECT_EQ(refused_field(parse, json::array{}), "the body");
  EXPECT_THROW(parse_replica_call("{\"prompt\":"), ReplicaWireError);
  EXPECT_THROW(parse_replica_call(""), ReplicaWireError);
}

// What an operator reads in a replica's 400: the field, then what is wrong with it.
TEST(ReplicaWire, EachRefusalSaysWhatIsWrongWithTheField) {
  Request r;
  r.prompt = {1, 2};
  r.scope = cache::ScopeId{3, 4};
  const json::value good = json::parse(encode_replica_call(r, {}));
  const auto message = [&](std::string_view path, const json::value* value) {
    json::value body = good;
    if (value)
      at_path(body, path) = *value;
    else
      erase_path(body, path);
    try {
      parse_replica_call(json::serialize(body));
    } catch (const ReplicaWireError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  const json::value seven("seven"), null_value(nullptr), fraction(2.0), big(int64_t{1} << 31), one(1), minus(-1);
  EXPECT_EQ(message("tenant", nullptr), "tenant: missing");
  EXPECT_EQ(message("sampling.top_k", &seven), "sampling.top_k: expected an integer, got a string");
  EXPECT_EQ(message("cache_salt", &null_value), "cache_salt: expected a string, got null");
  EXPECT_EQ(message("max_tokens", &fraction), "max_tokens: expected an integer, got a number with a fraction or exponent");
  EXPECT_EQ(message("max_tokens", &big), "max_tokens: out of range: 2147483648 is not in [0, 2147483647].");
  EXPECT_EQ(message("tenant", &minus), "tenant: out of range: -1 is negative.");
  EXPECT_EQ(message("sampling.extra", &one), "sampling.extra: unknown key.");
}

// ---- the response stream

Completion sample_completion() {
  Completion c;
  RequestResult& r = c.result;
  r.finish = FinishReason::kLength;
  r.prompt_tokens = 40, r.cached_tokens = 32, r.cached_device_tokens = 8, r.cached_host_tokens = 16;
  r.cached_disk_tokens = 8;
  r.fresh_prefill_tokens = 8, r.cache_written_tokens = 16, r.preemptions = 1, r.recomputed_tokens = 3;
  r.resumed_restored_tokens = 2, r.pinned_tokens = 32, r.pin_refused = true;
  c.error = "";
  RequestTiming& t = c.timing;
  t.arrival = SteadyClock::time_point(std::chrono::seconds(100));
  t.admitted = t.arrival + microseconds(250);
  t.first_token = t.arrival + microseconds(900);
  t.finished = t.arrival + microseconds(5000);
  t.arrival_step = 3, t.admitted_step = 4, t.first_token_step = 6, t.finished_step = 9;
  return c;
}

struct Seen {
  Tokens tokens;
  std::vector<Completion> done;
};

ReplicaStreamReader reader_into(Seen& seen, SteadyClock::time_point arrival) {
  return ReplicaStreamReader(
      arrival, [&seen](TokenId t) { seen.tokens.push_back(t); },
      [&seen](Completion c) { seen.done.push_back(std::move(c)); });
}

std::string sample_body(const Tokens& out, const Completion& c) {
  std::string body;
  size_t i = 0;
  for (size_t n : {1, 3, 1, 2}) {
    if (i >= out.size()) break;
    const size_t k = std::min(n, out.size() - i);
    body += encode_token_line(std::span(out).subspan(i, k));
    i += k;
  }
  if (i < out.size()) body += encode_token_line(std::span(out).subspan(i));
  return body + encode_done_line(c);
}

TEST(ReplicaStreamReader, TakesTheResponseCutAnywhere) {
  const Tokens out = {7, 0, 31999, 12, 5, 5, 9, 2147483647};
  Completion c = sample_completion();
  const std::string body = sample_body(out, c);
  c.result.output = out;
  std::mt19937_64 rng(3);
  for (size_t cut = 0; cut <= body.size(); ++cut) {
    Seen seen;
    ReplicaStreamReader reader = reader_into(seen, SteadyClock::now());
    reader.feed(std::string_view(body).substr(0, cut), SteadyClock::now());
    EXPECT_EQ(reader.done(), cut == body.size());
    reader.feed(std::string_view(body).substr(cut), SteadyClock::now());
    ASSERT_TRUE(reader.done());
    EXPECT_EQ(seen.tokens, out);
    ASSERT_EQ(seen.done.size(), 1u);
    EXPECT_EQ(seen.done[0].result, c.result) << "cut at " << cut;
    EXPECT_EQ(seen.done[0].timing.arrival_step, 3);
    EXPECT_EQ(seen.done[0].timing.finished_step, 9);
  }
  for (int round = 0; round < 200; ++round) {  // many pieces, some empty
    Seen seen;
    ReplicaStreamReader reader = reader_into(seen, SteadyClock::now());
    std::string_view rest = body;
    while (!rest.empty()) {
      const size_t n = std::min<size_t>(rest.size(), rng() % 9);
      reader.feed(rest.substr(0, n), SteadyClock::now());
      rest.remove_prefix(n);
    }
    ASSERT_TRUE(reader.done());
    EXPECT_EQ(seen.tokens, out);
    EXPECT_EQ(seen.done.at(0).result, c.result);
  }
}

TEST(ReplicaStreamReader, RebuildsTheTimingOnTheFrontsClock) {
  const SteadyClock::time_point arrival(std::chrono::seconds(1000));  // the front's, unrelated to the replica's
  Completion c = sample_completion();
  Seen seen;
  ReplicaStreamReader reader = reader_into(seen, arrival);
  const std::string two = encode_token_line(std::vector<TokenId>{4, 5});
  reader.feed(two.substr(0, 3), arrival + microseconds(100));
  reader.feed(two.substr(3), arrival + microseconds(2000));  // the line ends here: both tokens arrive now
  reader.feed(encode_token_line(std::vector<TokenId>{6}), arrival + microseconds(3000));
  reader.feed(encode_done_line(c), arrival + microseconds(7000));
  ASSERT_EQ(seen.done.size(), 1u);
  const RequestTiming& t = seen.done[0].timing;
  EXPECT_EQ(t.arrival, arrival);
  EXPECT_EQ(t.token_times, (std::vector<SteadyClock::time_point>{arrival + microseconds(2000),
                                                                 arrival + microseconds(2000),
                                                                 arrival + microseconds(3000)}));
  EXPECT_EQ(t.first_token, arrival + microseconds(2000));
  EXPECT_EQ(t.finished, arrival + microseconds(7000));
  EXPECT_EQ(t.admitted, arrival + microseconds(250));  // the replica's queueing, as it measured it
  EXPECT_EQ(seen.done[0].result.output, (Tokens{4, 5, 6}));
  EXPECT_EQ(t.admitted_step, 4);
  EXPECT_EQ(t.first_token_step, 6);
}

TEST(ReplicaStreamReader, ClampsTheAdmissionAndLeavesUnreachedMilestonesUnset) {
  const SteadyClock::time_point arrival(std::chrono::seconds(50));
  {  // admitted later than the front saw its first token: at the first token
    Completion c = sample_completion();
    c.timing.admitted = c.timing.arrival + std::chrono::seconds(30);
    Seen seen;
    ReplicaStreamReader reader = reader_into(seen, arrival);
    reader.feed(encode_token_line(std::vector<TokenId>{1}), arrival + microseconds(400));
    reader.feed(encode_done_line(c), arrival + microseconds(900));
    EXPECT_EQ(seen.done.at(0).timing.admitted, arrival + microseconds(400));
  }
  {  // cancelled while queued: no admission, no token
    Completion c = sample_completion();
    c.result.finish = FinishReason::kCancelled;
    c.timing.admitted = c.timing.first_token = {};
    c.timing.admitted_step = c.timing.first_token_step = -1;
    const json::value line = json::parse(encode_done_line(c));
    EXPECT_EQ(line.at("done").at("timing").at("admitted_us").as_int64(), -1);
    EXPECT_EQ(line.at("done").at("timing").at("first_token_us").as_int64(), -1);
    Seen seen;
    ReplicaStreamReader reader = reader_into(seen, arrival);
    reader.feed(encode_done_line(c), arrival + microseconds(900));
    const RequestTiming& t = seen.done.at(0).timing;
    EXPECT_EQ(t.admitted, SteadyClock::time_point{});
    EXPECT_EQ(t.first_token, SteadyClock::time_point{});
    EXPECT_TRUE(t.token_times.empty());
    EXPECT_EQ(t.finished, arrival + microseconds(900));
    EXPECT_EQ(t.admitted_step, -1);
    EXPECT_EQ(seen.done[0].result.finish, FinishReason::kCancelled);
  }
  {  // the error travels
    Completion c = sample_completion();
    c.result.finish = FinishReason::kError;
    c.error = "the device \"failed\"\n";
    Seen seen;
    ReplicaStreamReader reader = reader_into(seen, arrival);
    reader.feed(encode_done_line(c), arrival);
    EXPECT_EQ(seen.done.at(0).error, c.error);
    EXPECT_EQ(seen.done[0].result.finish, FinishReason::kError);
  }
}

// What the reader refuses, by the field it names ("" for the line as a whole).
std::string reader_refuses(const std::string& bytes) {
  Seen seen;
  ReplicaStreamReader reader = reader_into(seen, SteadyClock::now());
  try {
    reader.feed(bytes, SteadyClock::now());
  } catch (const ReplicaWireError& e) {
    EXPECT_THROW(reader.feed("{\"tokens\":[1]}\n", SteadyClock::now()), ReplicaWireError) << "a spent reader";
    return e.field();
  }
  return "(accepted)";
}

TEST(ReplicaStreamReader, RefusesMalformedStreamsNamingWhatIsWrong) {
  const std::string done = encode_done_line(sample_completion());
  EXPECT_EQ(reader_refuses("{\"tokens\":[1]}\n" + done), "(accepted)");
  EXPECT_EQ(reader_refuses(done + "{\"tokens\":[1]}\n"), "");  // tokens after done
  EXPECT_EQ(reader_refuses(done + done), "");
  EXPECT_EQ(reader_refuses("not json\n"), "the response line");
  EXPECT_EQ(reader_refuses("\n"), "the response line");
  EXPECT_EQ(reader_refuses("[1,2]\n"), "the response line");
  EXPECT_EQ(reader_refuses("{\"x\":1}\n"), "done");
  EXPECT_EQ(reader_refuses("{\"tokens\":[1],\"x\":1}\n"), "x");
  EXPECT_EQ(reader_refuses("{\"tokens\":[]}\n"), "tokens");
  EXPECT_EQ(reader_refuses("{\"tokens\":[1,-2]}\n"), "tokens[1]");
  EXPECT_EQ(reader_refuses("{\"tokens\":\"12\"}\n"), "tokens");
  EXPECT_EQ(reader_refuses(std::string(kReplicaMaxLine + 1, ' ')), "");  // no newline yet, already too long

  // Each field of the done line, missing or wrong.
  const json::value good = json::parse(done);
  for (const char* f : {"done.result", "done.error", "done.timing", "done.result.finish", "done.result.prompt_tokens",
                        "done.result.cached_tokens", "done.result.cached_device_tokens",
                        "done.result.cached_host_tokens",
                        "done.result.cached_disk_tokens", "done.result.fresh_prefill_tokens",
                        "done.result.cache_written_tokens", "done.result.preemptions",
                        "done.result.recomputed_tokens", "done.result.resumed_restored_tokens",
                        "done.result.pinned_tokens", "done.result.pin_refused", "done.timing.admitted_us",
                        "done.timing.first_token_us", "done.timing.finished_us", "done.timing.arrival_step",
                        "done.timing.admitted_step", "done.timing.first_token_step", "done.timing.finished_step"}) {
    json::value missing = good;
    erase_path(missing, f);
    EXPECT_EQ(reader_refuses(json::serialize(missing) + "\n"), f) << "missing " << f;
    json::value wrong = good;
    at_path(wrong, f) = std::string_view(f) == "done.error" ? json::value(3) : json::value(json::array{});
    EXPECT_EQ(reader_refuses(json::serialize(wrong) + "\n"), f) << "wrong type " << f;
  }
  json::value v = good;
  at_path(v, "done.result.finish") = "tired";
  EXPECT_EQ(reader_refuses(json::serialize(v) + "\n"), "done.result.finish");
  v = good;
  at_path(v, "done.timing.admitted_us") = -2;
  EXPECT_EQ(reader_refuses(json::serialize(v) + "\n"), "done.timing.admitted_us");
  v = good;
  at_path(v, "done.result.output") = json::array{1};  // the output is the streamed ids, never a second copy
  EXPECT_EQ(reader_refuses(json::serialize(v) + "\n"), "done.result.output");
}

// ---- the replica's description

TEST(ReplicaWire, InfoComesBackExactlyAndIsCheckedByField) {
  ReplicaInfo info;
  info.model = "stories260K";
  info.identity = {.model = {0xfeedULL, 0xbeefULL << 40}, .n_layers = 5, .n_kv_heads = 4, .head_dim = 8,
                   .kv_type = 1, .block_size = 16, .hash_scheme = 1};
  info.prefix_cache = true;
  info.bounds = {.context_length = 512, .vocab_size = 512, .block_size = 16, .pool_blocks = 256};
  info.block_events = "tcp://127.0.0.1:5557";
  info.outstanding = 3;
  const std::string body = encode_replica_info(info);
  const ReplicaInfo got = parse_replica_info(body);
  EXPECT_EQ(got.model, info.model);
  EXPECT_EQ(got.identity, info.identity);
  EXPECT_EQ(got.prefix_cache, info.prefix_cache);
  EXPECT_EQ(got.bounds, info.bounds);
  EXPECT_EQ(got.block_events, info.block_events);
  EXPECT_EQ(got.outstanding, info.outstanding);

  const json::value good = json::parse(body);
  const auto parse = [](const std::string& b) { return parse_replica_info(b); };
  for (const char* f : {"model", "identity", "identity.model_fingerprint", "identity.n_layers", "identity.n_kv_heads",
                        "identity.head_dim", "identity.kv_type", "identity.block_size", "identity.hash_scheme",
                        "prefix_cache", "bounds", "bounds.context_length", "bounds.vocab_size", "bounds.block_size",
                        "bounds.pool_blocks", "block_events", "outstanding"}) {
    json::value missing = good;
    erase_path(missing, f);
    EXPECT_EQ(refused_field(parse, missing), f) << "missing " << f;
    json::value wrong = good;
    at_path(wrong, f) = json::array{};
    EXPECT_EQ(refused_field(parse, wrong), f) << "wrong type " << f;
  }
  json::value v = good;
  at_path(v, "identity.kv_type") = 256;
  EXPECT_EQ(refused_field(parse, v), "identity.kv_type");
  v = good;
  at_path(v, "outstanding") = -1;
  EXPECT_EQ(refused_field(parse, v), "outstanding");
  v = good;
  at_path(v, "bounds.extra") = 1;
  EXPECT_EQ(refused_field(parse, v), "bounds.extra");
}

}  // namespace
}  // namespace wire
}  // namespace kvgate
