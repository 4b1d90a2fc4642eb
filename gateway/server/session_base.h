// SessionBase: what the server and a Reply know of a connection, whatever
// its protocol: it starts, it takes reply events, it is told the server is
// stopping (finish the response in flight, then close) or closing (now).
//
// Thread ownership: a session's state lives on its strand; every method
// here may be called from any thread and only posts to that strand
// (through the core's gate). start() is called once, by the acceptor or
// the session handing over, before anything else can reach the session.
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <memory>

#include "gateway/server/reply_target.h"
#include "gateway/server/server_core.h"

namespace kvgate::server {

class SessionBase : public ReplyTarget, public std::enable_shared_from_this<SessionBase> {
 public:
  SessionBase(std::shared_ptr<ServerCore> core, uint64_t id, boost::asio::any_io_executor strand)
      : core_(std::move(core)), id_(id), strand_(std::move(strand)) {}

  virtual void start() = 0;
  virtual void server_stopping() = 0;
  virtual void server_closing() = 0;

 protected:
  // Runs f on this session's strand, keeping the session alive until then.
  template <class Self, class F>
  void post_to_strand(std::shared_ptr<Self> self, F f) {
    core_->post(strand_, [self = std::move(self), f = std::move(f)]() mutable { f(*self); });
  }

  const std::shared_ptr<ServerCore> core_;
  const uint64_t id_;
  const boost::asio::any_io_executor strand_;
};

}  // namespace kvgate::server
