// The "auto" KV sizes (see kv_sizes.h): the rules in choose_kv_sizes(), the
// machine's free memory and disk in MachineRoom::measure().
#include "gateway/serving/kv_sizes.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>

#include "engine/kv_layout.h"
#include "gateway/config/byte_size.h"

namespace kvgate::serving {
namespace {

using config::kAutoBytes;
using config::readable_byte_size;

int64_t percent_of(int64_t bytes, int percent) { return bytes / 100 * percent + bytes % 100 * percent / 100; }

std::string share(int percent, int64_t of, std::string_view what) {
  return std::to_string(percent) + "% of " + readable_byte_size(of) + " " + std::string(what);
}

SizeChoice budget_of(const config::ServerConfig& c, const ModelConfig& model, bool pool_in_host_memory,
                     const MachineRoom& room) {
  if (c.model.kv_budget_bytes != kAutoBytes) return {c.model.kv_budget_bytes, "model.kv_budget"};
  const KvType type = kv_type_from_name(c.model.kv_type);  // checked with the config
  const int64_t block_bytes = kv_bytes_per_token(model, type) * c.model.block_size;
  const int64_t context_bytes = (int64_t{model.context_length} + c.model.block_size - 1) / c.model.block_size * block_bytes;
  const int32_t running = effective_max_running(c.model);
  const int64_t need = context_bytes > std::numeric_limits<int64_t>::max() / running
                           ? std::numeric_limits<int64_t>::max()
                           : context_bytes * running;
  const std::string need_why = std::to_string(model.context_length) + "-token context x " + std::to_string(running) +
                               " running";
  if (!pool_in_host_memory) return {need, "auto: " + need_why};  // the device backend caps it (gpu_memory_percent)
  const int64_t cap = percent_of(room.memory_bytes, kPoolSharePercent);
  const std::string cap_why = share(kPoolSharePercent, room.memory_bytes, "available memory");
  if (need <= cap) return {need, "auto: " + need_why + "; " + cap_why + " would be " + readable_byte_size(cap)};
  // Never less than one full context: a request as long as the model
  // allows must fit, or the server could not serve it at all.
  if (cap < context_bytes)
    return {context_bytes, "auto: one " + std::to_string(model.context_length) + "-token context, as " + cap_why +
                               " (" + readable_byte_size(cap) + ") holds less"};
  return {cap, "auto: " + cap_why + "; " + need_why + " would need " + readable_byte_size(need)};
}

// cgroup v2's memory.max / memory.current, else v1's, as a container mounts
// its own at /sys/fs/cgroup. "max" (v2) or a near-2^63 limit (v1): none.
int64_t cgroup_room() {
  const auto read_number = [](const char* path) -> int64_t {
    std::ifstream f(path);
    int64_t n = -1;
    return f >> n ? n : -1;
  };
  for (const auto& [limit_file, usage_file] :
       {std::pair{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
        std::pair{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}}) {
    const int64_t limit = read_number(limit_file), usage = read_number(usage_file);
    if (limit > 0 && usage >= 0 && limit < (int64_t{1} << 62)) return std::max<int64_t>(limit - usage, 0);
  }
  return -1;
}

int64_t available_memory() {
  int64_t available = -1;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    int64_t kib = 0;
    if (key == "MemAvailable:" && meminfo >> kib) {
      available = kib * 1024;
      break;
    }
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  if (available < 0) available = int64_t{sysconf(_SC_AVPHYS_PAGES)} * sysconf(_SC_PAGESIZE);  // kernels before 3.14
  const int64_t cgroup = cgroup_room();
  return cgroup >= 0 ? std::min(available, cgroup) : available;
}

// The bytes of the regular files under `dir`: what the disk tier holds now.
int64_t bytes_under(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  int64_t total = 0;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      const auto n = it->file_size(size_ec);
      if (!size_ec) total += static_cast<int64_t>(n);
    }
  }
  return total;
}

}  // namespace

int32_t effective_max_running(const config::ModelSection& m) {
  return m.max_running <= 0 || m.max_running > m.max_step_tokens ? m.max_step_tokens : m.max_running;
}

MachineRoom MachineRoom::measure(const config::ServerConfig& c) {
  MachineRoom room;
  room.memory_bytes = available_memory();
  struct statvfs fs {};
  if (statvfs(c.data.dir.c_str(), &fs) == 0)
    room.disk_free_bytes = static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
  room.disk_tier_bytes = bytes_under(c.kv_disk_path());
  return room;
}

KvSizes choose_kv_sizes(const config::ServerConfig& c, const ModelConfig& model, bool pool_in_host_memory,
                        const MachineRoom& room) {
  KvSizes s;
  s.kv_budget = budget_of(c, model, pool_in_host_memory, room);
  s.gpu_memory_percent = c.model.gpu_memory_percent;
  if (!pool_in_host_memory && c.model.kv_budget_bytes == kAutoBytes && s.gpu_memory_percent == 0)
    s.gpu_memory_percent = kDeviceSharePercent;  // the context x running "need" alone could pass the device's memory
  if (!pool_in_host_memory && s.gpu_memory_percent > 0)
    s.kv_budget.why += "; the device holds at most " + std::to_string(s.gpu_memory_percent) +
                       "% of its memory less what is in use (gpu_memory_percent)";

  const config::KvTiersSection& k = c.kv_tiers;
  s.host = k.host_bytes != kAutoBytes
               ? SizeChoice{k.host_bytes, "kv_tiers.host_bytes"}
               : SizeChoice{percent_of(room.memory_bytes, kHostTierSharePercent),
                            "auto: " + share(kHostTierSharePercent, room.memory_bytes, "available memory")};
  if (k.disk_bytes != kAutoBytes) {
    s.disk = {k.disk_bytes, "kv_tiers.disk_bytes"};
  } else {
    const int64_t disk = room.disk_free_bytes + room.disk_tier_bytes;
    s.disk = {percent_of(disk, kDiskTierSharePercent),
              "auto: " + share(kDiskTierSharePercent, disk, "free for " + c.kv_disk_path())};
    if (room.disk_tier_bytes > 0) s.disk.why += ", the " + readable_byte_size(room.disk_tier_bytes) + " it holds included";
  }
  return s;
}

std::string KvSizes::budget_line() const {
  return "KV budget " + config::readable_byte_size(kv_budget.bytes) + " (" + kv_budget.why + ")";
}

}  // namespace kvgate::serving
