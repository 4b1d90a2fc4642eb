// GET /v1/models: {"object": "list", "data": [{"id", "object": "model",
// "created", "owned_by": "kvgate"}]}, and one model's object for
// GET /v1/models/{id}.
//
// Pure; any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <boost/json/value.hpp>

namespace kvgate::openai {

struct ModelCard {
  std::string id;
  int64_t created = 0;  // unix seconds: when the server loaded it
  std::string owned_by = "kvgate";
};

boost::json::value model_object(const ModelCard& m);
boost::json::value model_list(std::span<const ModelCard> models);

}  // namespace kvgate::openai
