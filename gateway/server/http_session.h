// HttpSession<Derived>: HTTP/1.1 over any stream, the part plain and TLS
// sessions share (Beast's advanced_server_flex shape: Derived provides
// stream(), socket(), start(), begin_close() and on_closing_read()).
//
// One connection's life, each step a do_X / on_X pair on its strand:
//
//   kHandshake (TLS only) -> kIdle -> kReading -> kResponding -> kIdle ...
//                                                             \-> kClosing -> kClosed
//
//   kIdle        waiting for a request's first byte; the idle timer runs.
//   kReading     parsing one request (header, then body) under the read
//                timer; its limits answer 431 / 413, garbage 400, the
//                timer 408.
//   kResponding  the handler has the Reply; its events append to out_ and
//                are written one write at a time under the write timer.
//                A read stays outstanding (the "peek") so a client that
//                leaves is seen at once, not at the next write; once it
//                brings bytes (the next request) it is not renewed, and
//                those bytes wait in buffer_ for the next parse.
//   kClosing     the last response is out: tell the client (FIN, or TLS
//                close_notify) and discard what it still sends until it
//                closes too, so its kernel does not reset the connection
//                before it has read our answer; bounded by the linger timer.
//   kClosed      socket closed, out of the registry, every event ignored.
//
// Invariants: at most one read (parse or peek) and one write outstanding;
// a peek is started only with buffer_ empty, and a parse only with no peek
// outstanding;
// one timer, whose purpose says which deadline runs (the generation
// number makes a stale expiry harmless); reply_ is set exactly while a
// handler's response is unfinished on the wire, so close_now() fires
// on_close precisely for responses cut short.
//
// Thread ownership: every member is touched only on the strand; other
// threads reach the session through SessionBase's posting methods.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "gateway/server/error_body.h"
#include "gateway/server/http_request.h"
#include "gateway/server/reply.h"
#include "gateway/server/reply_state.h"
#include "gateway/server/request_reader.h"
#include "gateway/server/session_base.h"
#include "gateway/server/wire_format.h"

namespace kvgate::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

template <class Derived>
class HttpSession : public SessionBase {
 public:
  void deliver(uint64_t exchange, ReplyEvent event) override {
    post_to_strand(self(), [exchange, event = std::move(event)](Derived& s) mutable {
      s.on_reply_event(exchange, std::move(event));
    });
  }
  void server_stopping() override {
    post_to_strand(self(), [](Derived& s) { s.on_server_stopping(); });
  }
  void server_closing() override {
    post_to_strand(self(), [](Derived& s) { s.close_now(); });
  }

 protected:
  enum class Phase { kHandshake, kIdle, kReading, kResponding, kClosing, kClosed };
  enum class Timer { kNone, kHandshake, kIdle, kRead, kWrite, kLinger, kQuiet };

  // Bytes one peek asks for, and the buffer capacity a connection keeps
  // between requests.
  static constexpr size_t kPeekBytes = 4096;
  static constexpr size_t kKeptBufferBytes = 64 * 1024;

  HttpSession(std::shared_ptr<ServerCore> core, uint64_t id, net::any_io_executor strand, beast::flat_buffer buffer,
              SessionMode mode, std::string peer)
      : SessionBase(std::move(core), id, strand),
        buffer_(std::move(buffer)),
        timer_(strand),
        mode_(mode),
        peer_(std::move(peer)) {}

  Derived& derived() { return static_cast<Derived&>(*this); }
  std::shared_ptr<Derived> self() { return std::static_pointer_cast<Derived>(shared_from_this()); }
  const ServerOptions& options() const { return core_->options(); }

  // ---- requests --------------------------------------------------------

  // Derived calls this once its transport is ready.
  void begin_requests() { wait_request(); }

  void wait_request() {
    phase_ = Phase::kIdle;
    if (core_->stopping()) return graceful_close();
    // A parse never runs beside a peek (both fill buffer_): an outstanding
    // peek, started with buffer_ empty, leads to the parse when it lands.
    if (!peek_pending_ && buffer_.size() > 0) return do_read_header();  // pipelined bytes
    arm(Timer::kIdle, authenticated_ ? options().idle_timeout
                                     : std::min(options().idle_timeout, options().unauthenticated_idle_timeout));
    if (!peek_pending_) do_peek();
  }

  // A read of whatever comes next: the first byte of a request (kIdle),
  // a sign that the client left (kResponding), or bytes to drain (kClosing).
  void do_peek() {
    peek_pending_ = true;
    derived().stream().async_read_some(buffer_.prepare(kPeekBytes),
                                       [self = self()](beast::error_code ec, size_t n) { self->on_peek(ec, n); });
  }

  void on_peek(beast::error_code ec, size_t n) {
    peek_pending_ = false;
    buffer_.commit(n);
    switch (phase_) {
      case Phase::kClosed: return;
      case Phase::kClosing: return derived().on_closing_read(ec);
      case Phase::kIdle:
        if (ec) return close_now();  // the client closed a kept-alive connection
        disarm();
        return do_read_header();
      case Phase::kResponding:
        if (ec) return close_now();  // the client left mid-response: on_close runs
        return;  // its next request: parsed once this response is out
      case Phase::kHandshake:
      case Phase::kReading: return;  // no peek is outstanding in these
    }
  }

  void do_read_header() {
    phase_ = Phase::kReading;
    read_timed_out_ = false;
    parser_.emplace();
    apply_limits(*parser_, options());
    arm(Timer::kRead, options().read_timeout);
    http::async_read_header(derived().stream(), buffer_, *parser_,
                            [self = self()](beast::error_code ec, size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    if (phase_ != Phase::kReading) return;
    if (ec) return on_read_error(ec);
    if (mode_ != SessionMode::kServe) {  // answered without reading the body
      drain_on_close_ = !parser_->is_done();
      return reject();
    }
    const auto& req = parser_->get();
    // RFC 9112 6.1: a request framed by anything but one final "chunked" has
    // no reliable length, and reading on would take its body for the next
    // request (request smuggling): 400, and the connection closes.
    if (req.count(http::field::transfer_encoding) > 0 && !plain_chunked(req)) {
      drain_on_close_ = true;
      return send_error(400, "bad_request",
                        "Transfer-Encoding '" + std::string(req[http::field::transfer_encoding]) +
                            "' is not supported: a request body is sent with Content-Length or as chunked");
    }
    // Until a request of this connection carries credentials the handler
    // accepts, its body is held to a small limit: no one without a key
    // makes the server buffer megabytes.
    const ServerOptions& o = options();
    if (!authenticated_) authenticated_ = !o.authenticates || o.authenticates(presented_credential(req));
    if (!authenticated_ && !parser_->is_done()) {
      const auto length = parser_->content_length();  // boost::optional
      if (length && *length > o.max_unauthenticated_body_bytes) {
        drain_on_close_ = true;
        return send_error(413, "body_too_large",
                          "a request without valid credentials may carry at most " +
                              std::to_string(o.max_unauthenticated_body_bytes) + " bytes of body");
      }
      parser_->body_limit(o.max_unauthenticated_body_bytes);  // a chunked body, as it comes
    }
    if (!parser_->is_done() && iequals(req[http::field::expect], "100-continue")) {
      out_ += kContinue;  // the body fits the limits: ask for it
      flush();
    }
    if (parser_->is_done()) return dispatch();
    http::async_read(derived().stream(), buffer_, *parser_,
                     [self = self()](beast::error_code e, size_t) { self->on_body(e); });
  }

  void on_body(beast::error_code ec) {
    if (phase_ != Phase::kReading) return;
    if (ec) return on_read_error(ec);
    dispatch();
  }

  void on_read_error(beast::error_code ec) {
    drain_on_close_ = true;  // the client may still be sending the rest
    if (read_timed_out_) {
      core_->counters().read_timeouts++;
      return send_error(408, "request_timeout",
                        "the request was not received within " + std::to_string(options().read_timeout.count()) +
                            " ms");
    }
    if (std::optional<Refusal> refusal = refusal_for(ec, options()))
      return send_error(refusal->status, refusal->code, refusal->message);
    close_now();  // the client went away mid-request (EOF, reset, TLS truncation)
  }

  // The whole request is here: hand it to the handler.
  void dispatch() {
    disarm();
    http::request<http::string_body> req = parser_->release();
    parser_.reset();
    begin_response(req.version(), req.method() == http::verb::head, req.keep_alive());
    core_->counters().requests++;

    HttpRequest request = to_http_request(std::move(req), Derived::kSecure, peer_);
    Reply reply(std::weak_ptr<ReplyTarget>(std::static_pointer_cast<ReplyTarget>(shared_from_this())), exchange_);
    reply_ = reply.state();
    try {
      core_->handler()(std::move(request), reply);
    } catch (...) {
      // The Reply's last copy answers 500 when it goes, unless the handler
      // kept one that still answers.
    }
  }

  // ---- responses -------------------------------------------------------

  void begin_response(unsigned version, bool head, bool client_keep_alive) {
    phase_ = Phase::kResponding;
    ++exchange_;
    version_ = static_cast<int>(version);
    is_head_ = head;
    keep_alive_ = client_keep_alive && version_ >= 11 && !core_->stopping();
    started_ = done_ = false;
    framing_ = Framing::kLength;
    // A large body grew the buffer; an idle connection should not keep that.
    if (buffer_.capacity() > kKeptBufferBytes) buffer_.shrink_to_fit();
    // Watch for the client leaving, unless it has sent more already (then
    // a failed write is what tells).
    if (!peek_pending_ && buffer_.size() == 0) do_peek();
  }

  void on_reply_event(uint64_t exchange, ReplyEvent e) {
    if (phase_ != Phase::kResponding || exchange != exchange_) return;
    switch (e.kind) {
      case ReplyEvent::Kind::kSend:
        if (started_) return;
        queue_whole_response(e.status, e.headers, e.body);
        break;
      case ReplyEvent::Kind::kStart:
        if (started_) return;
        started_ = true;
        framing_ = version_ >= 11 ? Framing::kChunked : Framing::kUntilClose;
        if (framing_ == Framing::kUntilClose) keep_alive_ = false;
        out_ += serialize_head(e.status, e.headers, framing_, 0, keep_alive_, version_);
        break;
      case ReplyEvent::Kind::kWrite:
        if (!started_ || done_ || is_head_) return;
        if (framing_ == Framing::kChunked) out_ += chunk(e.body);
        else out_ += e.body;
        break;
      case ReplyEvent::Kind::kFinish:
        if (!started_ || done_) return;
        if (framing_ == Framing::kChunked && !is_head_) out_ += kLastChunk;
        done_ = true;
        break;
      case ReplyEvent::Kind::kAbort: return close_now();
    }
    flush();
  }

  void queue_whole_response(int status, const HttpHeaders& headers, const std::string& body) {
    started_ = done_ = true;
    const bool has_body = status_has_body(status);
    out_ += serialize_head(status, headers, has_body ? Framing::kLength : Framing::kNone, body.size(), keep_alive_,
                           version_);
    if (has_body && !is_head_) out_ += body;
  }

  // What ServerOptions::authenticates is asked about: the Authorization
  // header, or an x-api-key header's key as "Bearer <key>" when there is
  // no Authorization (Anthropic's clients send their key so).
  static std::string presented_credential(const http::request_header<>& req) {
    const auto auth = req[http::field::authorization];
    if (!auth.empty() || req.find("x-api-key") == req.end()) return std::string(auth);
    return "Bearer " + std::string(req["x-api-key"]);
  }

  // The server's own answer (a limit, a timeout, garbage, a rejected
  // connection): OpenAI's error shape, then close.
  // Exactly one Transfer-Encoding field whose value is "chunked" (any case,
  // optional surrounding whitespace): the only framing by coding accepted.
  static bool plain_chunked(const http::request_header<>& req) {
    if (req.count(http::field::transfer_encoding) != 1) return false;
    std::string_view v = req[http::field::transfer_encoding];
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return iequals(v, "chunked");
  }

  void send_error(int status, std::string_view code, const std::string& message, HttpHeaders extra = {}) {
    disarm();
    parser_.reset();
    buffer_.consume(buffer_.size());  // the connection ends after this: nothing more is parsed
    begin_response(11, false, false);
    extra.push_back({"Content-Type", "application/json"});
    queue_whole_response(status, extra, error_body(message, error_type_for(status), code));
    flush();
  }

  void reject() {
    if (mode_ == SessionMode::kHttpsRequired) {
      core_->counters().plain_http_on_tls++;
      return send_error(400, "https_required",
                        "this port speaks HTTPS: send the request over TLS (https://), not plain HTTP");
    }
    core_->counters().rejected_busy++;
    send_error(503, "server_busy", "the server is at its connection limit; retry shortly", {{"Retry-After", "1"}});
  }

  // Starts the next write if none is in flight; when everything of a
  // finished response is written, moves on to the next request or closes.
  void flush() {
    if (write_pending_ || phase_ == Phase::kClosed) return;
    if (written_ == writing_.size()) {  // the last batch is out: take what queued since
      writing_.clear();
      written_ = 0;
      if (out_.empty()) {
        if (phase_ == Phase::kResponding && done_) on_response_written();
        return;
      }
      writing_.swap(out_);
    }
    do_write();
  }

  // One write_some at a time, so the write timer measures a lack of
  // progress (a client that stopped reading), not a slow but steady one.
  void do_write() {
    write_pending_ = true;
    // While a request is being read (a 100 Continue) the read timer bounds it.
    if (phase_ != Phase::kReading) arm(Timer::kWrite, options().write_timeout);
    derived().stream().async_write_some(
        net::buffer(writing_.data() + written_, writing_.size() - written_),
        [self = self()](beast::error_code ec, size_t n) { self->on_write(ec, n); });
  }

  void on_write(beast::error_code ec, size_t n) {
    write_pending_ = false;
    if (phase_ == Phase::kClosed) return;
    if (timer_purpose_ == Timer::kWrite) disarm();
    if (ec) return close_now();  // the client left or reset: on_close runs
    written_ += n;
    flush();
  }

  void on_response_written() {
    if (std::shared_ptr<ReplyState> reply = reply_.lock()) reply->response_written();
    reply_.reset();
    if (keep_alive_ && !core_->stopping()) wait_request();
    else graceful_close();
  }

  // ---- stop and close ------------------------------------------------

  void on_server_stopping() {
    switch (phase_) {
      case Phase::kIdle: disarm(); return graceful_close();
      case Phase::kHandshake:
      case Phase::kReading: return close_now();
      case Phase::kResponding: keep_alive_ = false; return;  // closes once the response is out
      case Phase::kClosing:
      case Phase::kClosed: return;
    }
  }

  void graceful_close() {
    if (phase_ == Phase::kClosing || phase_ == Phase::kClosed) return;
    phase_ = Phase::kClosing;
    linger_deadline_ = std::chrono::steady_clock::now() + options().close_linger;
    arm_linger();
    derived().begin_close();
  }

  // Derived's begin_close() for a drain: discard what arrives until EOF.
  void drain(beast::error_code ec) {
    if (ec) return close_now();
    buffer_.consume(buffer_.size());
    do_peek();
  }

  // What is left of the closing connection's linger time.
  void arm_linger() {
    const auto left = linger_deadline_ - std::chrono::steady_clock::now();
    arm(Timer::kLinger, std::max(std::chrono::milliseconds(0),
                                 std::chrono::duration_cast<std::chrono::milliseconds>(left)));
  }

  void close_now() {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kClosed;
    disarm();
    beast::error_code ignored;
    derived().socket().shutdown(tcp::socket::shutdown_both, ignored);
    derived().socket().close(ignored);
    if (std::shared_ptr<ReplyState> reply = reply_.lock()) reply->connection_closed();
    reply_.reset();
    core_->release(id_);
  }

  // ---- the one timer ---------------------------------------------------

  void arm(Timer purpose, std::chrono::milliseconds after) {
    timer_purpose_ = purpose;
    timer_.expires_after(after);
    timer_.async_wait([self = self(), gen = ++timer_gen_](beast::error_code ec) {
      if (!ec && gen == self->timer_gen_) self->on_timeout();
    });
  }

  void disarm() {
    ++timer_gen_;
    timer_purpose_ = Timer::kNone;
    timer_.cancel();
  }

  void on_timeout() {
    const Timer purpose = timer_purpose_;
    timer_purpose_ = Timer::kNone;
    beast::error_code ignored;
    switch (purpose) {
      case Timer::kNone: return;
      case Timer::kHandshake: core_->counters().read_timeouts++; return close_now();
      case Timer::kIdle: return graceful_close();
      case Timer::kRead:  // the parse ends with operation_aborted and answers 408
        read_timed_out_ = true;
        derived().socket().cancel(ignored);
        return;
      case Timer::kWrite: core_->counters().write_timeouts++; return close_now();
      case Timer::kLinger: return close_now();
      case Timer::kQuiet: return derived().on_quiet();
    }
  }

  beast::flat_buffer buffer_;
  net::steady_timer timer_;
  Timer timer_purpose_ = Timer::kNone;
  uint64_t timer_gen_ = 0;
  Phase phase_ = Phase::kIdle;
  const SessionMode mode_;
  const std::string peer_;

  std::optional<RequestParser> parser_;
  bool read_timed_out_ = false;
  bool peek_pending_ = false;
  // The request was cut short (a limit, a timeout, a refusal before its
  // body): the client may still be sending it, and closing must drain that
  // first, or its kernel may reset the connection before it reads our answer.
  bool drain_on_close_ = false;
  // A request of this connection carried credentials the handler accepts
  // (ServerOptions::authenticates): it may send full bodies and stay idle
  // for idle_timeout.
  bool authenticated_ = false;
  std::chrono::steady_clock::time_point linger_deadline_;

  // The response in flight.
  uint64_t exchange_ = 0;
  std::weak_ptr<ReplyState> reply_;
  int version_ = 11;
  bool is_head_ = false;
  bool keep_alive_ = false;
  bool started_ = false;  // its head is queued
  bool done_ = false;     // its last byte is queued
  Framing framing_ = Framing::kLength;

  std::string out_;      // queued, not yet handed to a write
  std::string writing_;  // the batch being written, written_ bytes of it so far
  size_t written_ = 0;
  bool write_pending_ = false;
};

}  // namespace kvgate::server
