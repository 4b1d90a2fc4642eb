// The backends this build has, by name, chosen at run time: `auto` picks
// CUDA when the build has it and a device exists, else the CPU. Nothing
// above the Backend seam names a backend; callers ask the registry.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend.h"

namespace kvgate {

class Model;

// "cpu", and "cuda" when the build has the CUDA backend.
std::vector<std::string> built_backends();

// The backend `name` (auto, cpu or cuda) is on this build and machine, known
// before it is made, so that its KV pool can be sized for where it lives.
struct BackendChoice {
  std::string name;                      // "cpu" or "cuda"
  bool kv_pool_in_host_memory = false;   // the CPU backend's "device" pool is host RAM
};
// Throws kvgate::Error for an unknown name, or for cuda when the build has
// none (make_backend says so when the machine has none).
BackendChoice choose_backend(std::string_view name);

// `name` is auto, cpu or cuda. Throws kvgate::Error for an unknown name, or
// for cuda when the build or the machine has none.
std::unique_ptr<Backend> make_backend(std::string_view name, std::shared_ptr<const Model> model,
                                      const BackendOptions& opt);

}  // namespace kvgate
