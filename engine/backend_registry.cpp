// The registry: a fixed table of the backends compiled in. The CUDA backend
// (kernels/) registers here once it exists; until then this build is
// CPU-only and says so when asked for cuda.
#include "engine/backend_registry.h"

#include "engine/cpu/cpu_backend.h"
#include "engine/error.h"

namespace kvgate {

std::vector<std::string> built_backends() { return {"cpu"}; }

std::unique_ptr<Backend> make_backend(std::string_view name, std::shared_ptr<const Model> model,
                                      const BackendOptions& opt) {
  if (name == "auto" || name == "cpu") return make_cpu_backend(std::move(model), opt);
  if (name == "cuda") throw Error("this kvgate was built without the CUDA backend (use --backend cpu or auto)");
  throw Error("unknown backend '" + std::string(name) + "' (expected auto, cpu or cuda)");
}

}  // namespace kvgate
