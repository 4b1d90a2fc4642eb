#include "gateway/serving/kv_tiers.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "cache/tiers/stacked_store.h"
#include "base/error.h"
#include "base/private_file.h"
#include "cache/tiers/redis_seal.h"
#include "gateway/config/byte_size.h"
#include "gateway/config/listen_address.h"
#include "policies/eviction/policy_registry.h"

namespace kvgate::serving {
namespace {

// The password file's first line; refused when others can read it.
std::string read_redis_password(const std::string& path) {
  require_private_file(path, "the Redis password file");
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) throw Error(path + ": cannot read the Redis password file");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) throw Error(path + ": the Redis password file is empty");
  return line;
}

}  // namespace

std::vector<std::string> KvTiers::names() const {
  std::vector<std::string> out;
  if (host) out.emplace_back("host");
  if (disk) out.emplace_back("disk");
  return out;
}

KvTiers open_kv_tiers(const config::ServerConfig& c, const KvSizes& sizes, const cache::KvIdentity& identity,
                      cache::BlockEventListener* events) {
  KvTiers t;
  const auto& k = c.kv_tiers;
  if (!c.model.prefix_cache) return t;  // nothing is cached, so nothing goes below
  const auto policy = [](const std::string& spec) {
    return policies::make_eviction_policy(policies::parse_policy_spec(spec));  // checked with the config
  };
  const auto record = static_cast<int64_t>(cache::record_bytes(identity));
  if (sizes.host.bytes >= record) {
    t.host = std::make_shared<cache::HostTier>(sizes.host.bytes, identity, policy(k.host_policy));
    t.host->set_listener(events);
  }
  const bool redis = !k.redis.empty();
  if (sizes.disk.bytes >= record && !(redis && k.redis_mode == "instead_of_disk")) {
    cache::DiskTierOptions o;
    o.dir = c.kv_disk_path();
    o.capacity_bytes = sizes.disk.bytes;
    o.identity = identity;
    o.policy = policy(k.disk_policy);
    o.move_aside_corrupt = k.move_aside_corrupt;
    o.listener = events;
    try {
      t.disk = cache::DiskTier::open(std::move(o));
    } catch (const std::runtime_error& e) {
      throw Error(std::string(e.what()) +
                  " (set kv_tiers.move_aside_corrupt = true to move it aside and start with an empty disk tier)");
    }
  }
  if (redis) {
    const config::ListenAddress at = config::parse_listen_address(k.redis);  // checked with the config
    cache::RedisTierOptions o;
    o.host = at.host;
    o.port = at.port;
    o.identity = identity;
    o.timeout = std::chrono::milliseconds(k.redis_timeout_ms);
    o.ttl = std::chrono::seconds(k.redis_ttl_s);
    o.seal = std::make_shared<const cache::RedisSeal>(cache::read_redis_keys(k.redis_key_file));
    o.user = k.redis_user;
    if (!k.redis_password_file.empty()) o.password = read_redis_password(k.redis_password_file);
    t.redis = std::make_shared<cache::RedisTier>(std::move(o));
  }
  if (t.disk && t.redis) {
    t.below_host = std::make_shared<cache::StackedStore>(t.disk, t.redis);
  } else if (t.disk) {
    t.below_host = t.disk;
  } else {
    t.below_host = t.redis;
  }
  return t;
}

std::vector<std::string> describe(const KvTiers& t, const KvSizes& sizes, const cache::KvIdentity& identity) {
  std::vector<std::string> out;
  const auto record = static_cast<int64_t>(cache::record_bytes(identity));
  const auto line = [&](const char* tier, const cache::TierStats& s, const std::string& why, const std::string& policy,
                        const std::string& more) {
    char buf[160];
    const int64_t blocks = s.capacity_bytes / record;
    std::snprintf(buf, sizeof buf, "KV %s tier: %lld blocks (%lld tokens, %.1f MiB; ", tier,
                  static_cast<long long>(blocks), static_cast<long long>(blocks * identity.block_size),
                  static_cast<double>(s.capacity_bytes) / 1048576.0);
    out.push_back(buf + why + "), policy " + policy + more);
  };
  if (t.host) line("host", t.host->stats(), sizes.host.why, t.host->policy_name(), "");
  if (t.disk) {
    const cache::TierStats s = t.disk->stats();
    line("disk", s, sizes.disk.why, t.disk->policy_name(),
         ", " + std::to_string(s.blocks) + (s.blocks == 1 ? " block" : " blocks") + " found" +
             (s.foreign > 0 ? ", " + std::to_string(s.foreign) +
                                  " of another model or KV layout ignored (kvgate cache purge removes them)"
                            : "") +
             (t.disk->moved_aside_to().empty()
                  ? ""
                  : "; the database there would not open and was moved to " + t.disk->moved_aside_to()));
  }
  if (t.redis) {
    const cache::RedisTierStats s = t.redis->stats();
    out.push_back("KV redis tier: " + t.redis->address() + (t.disk ? ", below the disk tier" : ", instead of a disk tier") +
                  (s.connected ? ", connected" : ", not answering now (its blocks are misses until it does)"));
  }
  // A size that holds no block leaves its tier out; say so rather than drop it silently.
  const auto too_small = [&](const char* tier, const SizeChoice& size) {
    if (size.bytes > 0 && size.bytes < record)
      out.push_back(std::string("KV ") + tier + " tier: none, " + config::readable_byte_size(size.bytes) + " (" +
                    size.why + ") is less than one block of " + config::readable_byte_size(record));
  };
  if (!t.host) too_small("host", sizes.host);
  if (!t.disk) too_small("disk", sizes.disk);
  if (!t.host && !t.disk && !t.redis) out.emplace_back("KV tiers: none below the device (an evicted block is forgotten)");
  return out;
}

}  // namespace kvgate::serving
