// The models list. Pure; any thread.
#include "gateway/openai/model_list.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace kvgate::openai {
namespace json = boost::json;

json::value model_object(const ModelCard& m) {
  json::object o;
  o["id"] = m.id;
  o["object"] = "model";
  o["created"] = m.created;
  o["owned_by"] = m.owned_by;
  if (m.meta)
    o["meta"] = {{"weight_type", m.meta->weight_type},
                 {"weight_bytes", m.meta->weight_bytes},
                 {"parameters", m.meta->parameters},
                 {"context_length", m.meta->context_length}};
  return o;
}

json::value model_list(std::span<const ModelCard> models) {
  json::array data;
  for (const ModelCard& m : models) data.push_back(model_object(m));
  json::object o;
  o["object"] = "list";
  o["data"] = std::move(data);
  return o;
}

}  // namespace kvgate::openai
