// A request run to its end on an otherwise idle io_context.
#include "gateway/tools/loadgen/blocking_fetch.h"

#include <memory>

namespace kvgate::loadgen {

FetchResult blocking_fetch(boost::asio::io_context& io, client::ConnectionPool& pool, const client::HttpCall& call) {
  auto r = std::make_shared<FetchResult>();
  client::ExchangeHandlers h;
  h.on_header = [r](int status, const client::HttpResponseHead&) { r->status = status; };
  h.on_body = [r](std::string_view bytes) { r->body.append(bytes); };
  h.on_end = [r](const std::string& error) { r->error = error; };
  client::HttpExchange::start(pool, call, std::move(h));
  io.restart();
  io.run();
  return *r;
}

}  // namespace kvgate::loadgen
