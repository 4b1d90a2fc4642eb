// One whole request and response, waited for: the run's set-up and
// tear-down calls (tenants and keys through the admin API, GET /v1/models,
// GET /metrics before and after), never the measured requests.
//
// Runs the io_context until the exchange ends, so call it only when
// nothing else is scheduled on it (before or after a run).
#pragma once

#include <string>

#include <boost/asio/io_context.hpp>

#include "gateway/client/connection_pool.h"
#include "gateway/client/http_exchange.h"

namespace kvgate::loadgen {

struct FetchResult {
  int status = 0;      // 0 when no response came
  std::string body;
  std::string error;   // transport failure, else empty
};

FetchResult blocking_fetch(boost::asio::io_context& io, client::ConnectionPool& pool, const client::HttpCall& call);

}  // namespace kvgate::loadgen
