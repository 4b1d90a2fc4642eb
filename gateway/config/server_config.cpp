// The defaults that need the environment or other fields: the bundled
// model's path and the paths derived from the data directory.
#include "gateway/config/server_config.h"

#include <cstdlib>
#include <filesystem>

namespace kvgate::config {

std::string block_events_endpoint(const std::string& configured) {
  const bool port = !configured.empty() && configured.find_first_not_of("0123456789") == std::string::npos;
  return port ? "tcp://127.0.0.1:" + configured : configured;
}

std::string ModelSection::bundled_model_path() {
  const char* shared = std::getenv("KVGATE_SHARED");
  const std::string root = shared && *shared ? shared : "../shared";
  return root + "/models/stories260K.gguf";
}

std::string ServerConfig::admin_token_path() const {
  return admin.token_file.empty() ? data.dir + "/admin-token" : admin.token_file;
}

std::string ServerConfig::tls_cert_path() const {
  return tls.cert_file.empty() ? data.dir + "/tls/self-signed.crt" : tls.cert_file;
}

std::string ServerConfig::tls_key_path() const {
  return tls.key_file.empty() ? data.dir + "/tls/self-signed.key" : tls.key_file;
}

std::string ServerConfig::kv_disk_path() const { return data.dir + "/kv"; }

std::string ServerConfig::served_model_name() const {
  if (!model.name.empty()) return model.name;
  std::filesystem::path p(model.path);
  return p.extension() == ".gguf" ? p.stem().string() : p.filename().string();
}

}  // namespace kvgate::config
