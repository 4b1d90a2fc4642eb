// The CPU backend: the reference forward pass, with K/V kept in f32, f16 or
// bf16 (BackendOptions::kv_type). Chosen through the registry
// (engine/backend_registry.h); tests make it directly.
#pragma once

#include <memory>

#include "engine/backend.h"

namespace kvgate {

class Model;

std::unique_ptr<Backend> make_cpu_backend(std::shared_ptr<const Model> model, const BackendOptions& opt);

}  // namespace kvgate
