// The KV cache's sizes on `kvgate serve`: the device pool's budget and the
// host and disk tiers' capacities. A size the operator gave (a number in
// the file or a flag) is used exactly as given; one left "auto"
// (config::kAutoBytes, the default) is chosen here, at start, from the model
// and what the machine has free, and every choice carries the line that
// says why, for the start-up report.
//
// The "auto" rules, each a share of what is free, so that a 1 MB model on a
// laptop and an 8B one on a GPU server both start with sizes that fit:
//   - the KV budget is what max_running full contexts need (the effective
//     max_running, as the scheduler caps it at max_step_tokens), at most
//     kPoolSharePercent of the available host memory when the pool lives
//     there (the CPU backend), and never less than one full context; a
//     device backend caps it itself at gpu_memory_percent of the device's
//     memory less what is in use, kDeviceSharePercent when that is 0
//     (vLLM's default gpu_memory_utilization);
//   - the host tier is kHostTierSharePercent of the available host memory;
//   - the disk tier is kDiskTierSharePercent of the disk free under the data
//     directory, counting what the disk tier there already holds as free, so
//     a restart does not shrink a full tier.
//
// choose_kv_sizes() is a pure function of the config, the model and the
// measured room, so tests give it the room; MachineRoom::measure() reads it.
//
// Threads: plain values; measure() reads /proc and the filesystem.
#pragma once

#include <cstdint>
#include <string>

#include "engine/model_config.h"
#include "gateway/config/server_config.h"

namespace kvgate::serving {

inline constexpr int kPoolSharePercent = 10;       // of available host memory, for a pool in host memory
inline constexpr int kHostTierSharePercent = 10;   // of available host memory
inline constexpr int kDiskTierSharePercent = 10;   // of the free disk under the data directory
inline constexpr int kDeviceSharePercent = 90;     // of a device's memory, when gpu_memory_percent is 0

// What the machine has free at start: the inputs of the "auto" sizes.
struct MachineRoom {
  // /proc/meminfo's MemAvailable, or the memory cgroup's limit less its
  // usage when that is less (a container's limit, not the host's RAM).
  int64_t memory_bytes = 0;
  // Free to an unprivileged user on the data directory's filesystem.
  int64_t disk_free_bytes = 0;
  // What the disk tier already there holds (<data.dir>/kv), counted as room.
  int64_t disk_tier_bytes = 0;

  // The data directory must exist.
  static MachineRoom measure(const config::ServerConfig& c);
};

// One size and why it was chosen: "model.kv_budget" for a size the
// operator gave, "auto: ..." otherwise.
struct SizeChoice {
  int64_t bytes = 0;
  std::string why;
};

struct KvSizes {
  SizeChoice kv_budget;        // BackendOptions::kv_budget_bytes
  int gpu_memory_percent = 0;  // BackendOptions::memory_utilization x 100 (a device backend's cap)
  SizeChoice host;             // below one record: no host tier
  SizeChoice disk;             // below one record: no disk tier

  // "KV budget 640.0 MiB (auto: 2048-token context x 256 running; ...)".
  std::string budget_line() const;
};

// `pool_in_host_memory`: the backend's device pool is host RAM (the CPU
// backend), so the budget's "auto" is capped by host memory, not a device's.
KvSizes choose_kv_sizes(const config::ServerConfig& c, const ModelConfig& model, bool pool_in_host_memory,
                        const MachineRoom& room);

// max_running as the scheduler applies it: 0, or more than max_step_tokens,
// is max_step_tokens (every running sequence decodes one token a step).
int32_t effective_max_running(const config::ModelSection& m);

}  // namespace kvgate::serving
