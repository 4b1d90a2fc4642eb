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

// `name` is auto, cpu or cuda. Throws kvgate::Error for an unknown name, or
// for cuda when the build or the machine has none.
std::unique_ptr<Backend> make_backend(std::string_view name, std::shared_ptr<const Model> model,
                                      const BackendOptions& opt);

}  // namespace kvgate
