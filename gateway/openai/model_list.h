// GET /v1/models: {"object": "list", "data": [{"id", "object": "model",
// "created", "owned_by": "kvgate"}]}, and one model's object for
// GET /v1/models/{id}.
//
// Pure; any thread.
#pragma once

#include <cstdint>
#include <span>
#include <optional>
#include <string>

#include <boost/json/value.hpp>

namespace kvgate::openai {

// What the model is beyond OpenAI's fields, as llama.cpp's server adds a
// "meta" object to its model entries: an operator or client sees the
// weights' type and size and the context without a second route.
struct ModelMeta {
  std::string weight_type;  // the file type, "Q4_K_M"
  uint64_t weight_bytes = 0;
  int64_t parameters = 0;
  int32_t context_length = 0;
};

struct ModelCard {
  std::string id;
  int64_t created = 0;  // unix seconds: when the server loaded it
  std::string owned_by = "kvgate";
  std::optional<ModelMeta> meta;
};

boost::json::value model_object(const ModelCard& m);
boost::json::value model_list(std::span<const ModelCard> models);

}  // namespace kvgate::openai
