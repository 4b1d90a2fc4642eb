// Handler: the one seam between the server and whatever answers requests
// (the OpenAI routes, the serving pipeline). The server calls it once per
// complete, well-formed request that passed the limits, on that
// connection's strand (an I/O thread). It must not block: work that waits
// (the engine, the ledger) keeps the Reply and answers from its own thread.
// An exception escaping it is caught; the request then gets a 500 unless a
// copy of the Reply lives on and answers.
#pragma once

#include <functional>

#include "gateway/server/http_request.h"
#include "gateway/server/reply.h"

namespace kvgate::server {

using Handler = std::function<void(HttpRequest request, Reply reply)>;

}  // namespace kvgate::server
