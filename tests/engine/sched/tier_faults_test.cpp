// Fault injection into the KV tiers below the device pool, under concurrency
// (issue 12): thousands of restores from a small host tier and a RocksDB
// tier while another thread damages their records (flipped bytes, torn and
// truncated values, size fields changed, records resealed for another model
// or another key) and races evictions against the restores (evict_tenant on
// both tiers, capacities far below the working set). Every output must equal
// the cache-off output, and every damaged record must end in exactly one of:
// dropped as corrupt and counted (it was looked up for a restore), evicted
// (never restored), or still stored at the end (never looked up).
//
// The bookkeeping is exact, not statistical:
//   - host tier: its eviction policy is wrapped (LedgerPolicy). Every policy
//     call and mutate_for_test's function run under the tier's lock, so the
//     injector marks the slot it damaged there, and the wrapper sees each
//     slot leave: right after victim() named it, or on the injector's own
//     evict_tenant call, it was evicted; otherwise it was dropped as corrupt.
//     A healthy record dropped as corrupt is a failure.
//   - disk tier: the scheduler sees it through a BlockStore decorator
//     (ObservedDisk) that recognises the damaged values the injector planted
//     (put_raw_for_test) when get() returns one, and checks that each is
//     followed by drop_corrupt() for its key, before any other lookup.
//
// The sanitizer builds run fewer restores (KVGATE_TIER_FAULTS_RESTORES
// overrides either count).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cache/tiers/block_store.h"
#include "cache/tiers/disk_tier.h"
#include "cache/tiers/host_tier.h"
#include "engine/sched/tier_identity.h"
#include "policies/eviction/lru_policy.h"
#include "tests/engine/sched/prefix_support.h"
#include "tests/temp_dir.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KVGATE_TIER_FAULTS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KVGATE_TIER_FAULTS_SANITIZED 1
#endif
#endif

namespace kvgate {
namespace {

using namespace prefix_testing;

constexpr int32_t kB = 16;

int64_t restores_wanted() {
  if (const char* e = std::getenv("KVGATE_TIER_FAULTS_RESTORES"); e && *e) return std::max(1LL, std::atoll(e));
#ifdef KVGATE_TIER_FAULTS_SANITIZED
  return 2'000;
#else
  return 10'000;
#endif
}

cache::KvIdentity identity_of(const std::shared_ptr<const Model>& m) { return tier_identity_of(*m, kB); }

// One block the test may find in a tier: what a restore of it must match.
struct Known {
  cache::BlockKey key;
  Tokens tokens;
  TenantId owner = 0;
};

// --- Host: the policy wrapper that sees every slot leave ---------------------

// Guarded by the host tier's lock: every call of the policy, and the
// function mutate_for_test runs, happen under it. Read at the end, after
// every thread that touches the tier has stopped.
struct HostLedger {
  std::unordered_map<policies::EntryId, uint64_t> slot_key;  // slot -> hash.lo of its latest record
  std::unordered_map<uint64_t, policies::EntryId> key_slot;  // hash.lo -> slot of its latest record
  std::unordered_set<policies::EntryId> damaged;             // slots holding a damaged record
  std::optional<policies::EntryId> victim;                   // what victim() named last
  std::thread::id injector;                                  // its evict_tenant calls evict
  int64_t damaged_total = 0, dropped_damaged = 0, evicted_damaged = 0;
  int64_t dropped_healthy = 0;  // a good record dropped as corrupt: must stay 0
};

class LedgerPolicy final : public policies::EvictionPolicy {
 public:
  explicit LedgerPolicy(HostLedger& l) : inner_(policies::make_lru_policy()), l_(l) {}
  std::string_view name() const override { return inner_->name(); }
  void on_insert(policies::EntryId id, const policies::EntryInfo& info) override {
    l_.slot_key[id] = info.key;
    l_.key_slot[info.key] = id;
    inner_->on_insert(id, info);
  }
  void on_hit(policies::EntryId id) override { inner_->on_hit(id); }
  void on_release(policies::EntryId id) override { inner_->on_release(id); }
  void on_remove(policies::EntryId id) override {
    const bool evicted = (l_.victim && *l_.victim == id) || std::this_thread::get_id() == l_.injector;
    l_.victim.reset();
    if (l_.damaged.erase(id)) {
      ++(evicted ? l_.evicted_damaged : l_.dropped_damaged);
    } else if (!evicted) {
      ++l_.dropped_healthy;
    }
    inner_->on_remove(id);
  }
  std::optional<policies::EntryId> victim() const override {
    l_.victim = inner_->victim();
    return l_.victim;
  }
  int64_t candidates() const override { return inner_->candidates(); }
  std::vector<policies::EntryId> eviction_order() const override { return inner_->eviction_order(); }
  policies::PolicyParams params() const override { return inner_->params(); }

 private:
  std::unique_ptr<policies::EvictionPolicy> inner_;
  HostLedger& l_;
};

// --- Disk: the scheduler's view of the RocksDB tier, watched ----------------

size_t value_hash(std::span<const std::byte> v) {
  return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(v.data()), v.size()));
}

// The reader's get() of a damaged value and its drop_corrupt() form a window
// that the injector's own deletions (evict_tenant, planting) wait out, so
// that an eviction cannot take the entry between the two (the drop would
// then find nothing to count, and the test could not tell a lost count from
// that race). The mover reads a chain's disk blocks several at a time, then
// verifies each, so a window may hold several damaged reads: it closes when
// the last of them is dropped. The disk tier's own evictions need no such care: a read whose
// entry they take before it returns is a miss, and one that returns was just hit, so LRU
// names it last.
struct KeyLess {
  bool operator()(const cache::TierKey& a, const cache::TierKey& b) const {
    return std::tie(a.scope.lo, a.scope.hi, a.hash.lo, a.hash.hi) < std::tie(b.scope.lo, b.scope.hi, b.hash.lo, b.hash.hi);
  }
};

class ObservedDisk final : public cache::BlockStore {
 public:
  explicit ObservedDisk(std::shared_ptr<cache::DiskTier> d) : disk_(std::move(d)) {}

  const cache::KvIdentity& identity() const override { return disk_->identity(); }
  bool contains(const cache::TierKey& key) const override { return disk_->contains(key); }
  bool enqueue(std::span<const std::byte> record, TenantId owner) override { return disk_->enqueue(record, owner); }
  std::optional<std::vector<std::byte>> get(const cache::TierKey& key) override {
    std::unique_lock window(window_mu_, std::defer_lock);
    if (!window_.owns_lock()) window.lock();  // else: a second read inside the window, counted below
    std::optional<std::vector<std::byte>> v = disk_->get(key);
    std::lock_guard lock(mu_);
    if (!owed_.empty()) ++lookups_while_owed_;  // read inside a window: the read-ahead of a chain
    if (v && planted_.contains({key, value_hash(*v)})) {
      ++read_damaged_;
      owed_.insert(key);
      if (window.owns_lock()) window_ = std::move(window);  // held until the last drop_corrupt
    }
    return v;
  }
  void drop_corrupt(const cache::TierKey& key, cache::RecordFault why) override {
    disk_->drop_corrupt(key, why);
    std::lock_guard lock(mu_);
    if (auto it = owed_.find(key); it != owed_.end()) {
      ++dropped_damaged_;
      owed_.erase(it);
      if (owed_.empty() && window_.owns_lock()) window_.unlock();
    } else {
      ++dropped_other_;
    }
  }

  // The injector's deletions and plants, outside any read window.
  int32_t evict_tenant(TenantId t) {
    std::lock_guard window(window_mu_);
    return disk_->evict_tenant(t);
  }
  void plant(const cache::TierKey& key, std::span<const std::byte> value, TenantId owner, int32_t depth) {
    std::lock_guard window(window_mu_);
    {
      std::lock_guard lock(mu_);
      planted_.insert({key, value_hash(value)});
      ++planted_count_;
    }
    disk_->put_raw_for_test(key, value, owner, depth);
  }

  struct Counts {
    int64_t planted = 0, read_damaged = 0, dropped_damaged = 0, dropped_other = 0, lookups_while_owed = 0;
    bool owed = false;
  };
  Counts counts() const {
    std::lock_guard lock(mu_);
    return {planted_count_, read_damaged_, dropped_damaged_, dropped_other_, lookups_while_owed_, !owed_.empty()};
  }

 private:
  struct Planted {
    cache::TierKey key;
    size_t hash;
    bool operator<(const Planted& o) const {
      return std::tie(key.scope.lo, key.scope.hi, key.hash.lo, key.hash.hi, hash) <
             std::tie(o.key.scope.lo, o.key.scope.hi, o.key.hash.lo, o.key.hash.hi, o.hash);
    }
  };
  std::shared_ptr<cache::DiskTier> disk_;
  std::mutex window_mu_;                 // taken before mu_
  std::unique_lock<std::mutex> window_;  // the reader's open window (only the reader thread touches it)
  mutable std::mutex mu_;
  std::set<Planted> planted_;
  std::multiset<cache::TierKey, KeyLess> owed_;  // read damaged, drop_corrupt not yet called
  int64_t planted_count_ = 0, read_damaged_ = 0, dropped_damaged_ = 0, dropped_other_ = 0, lookups_while_owed_ = 0;
};

// --- Damage -------------------------------------------------------------------

enum class Damage { kFlip, kZeroTail, kSizeField, kOtherModel, kOtherDepth, kTruncate, kExtend };

// Damages a record of `k` in place (host: fixed size) or by value (disk: it
// may change length). Returns the damaged bytes; the caller checks that
// check_record now fails (a no-op, e.g. zeroing a tail already zero, is not
// counted as damage).
void damage_in_place(std::span<std::byte> rec, Damage d, const Known& k, const cache::KvIdentity& id,
                     std::mt19937_64& rng) {
  switch (d) {
    case Damage::kFlip:
      rec[rng() % rec.size()] ^= std::byte{static_cast<unsigned char>(1u << (rng() % 8))};
      break;
    case Damage::kZeroTail: {  // a torn write: the tail never landed
      const size_t n = 1 + rng() % std::min<size_t>(rec.size() - 1, 4096);
      std::fill(rec.end() - static_cast<std::ptrdiff_t>(n), rec.end(), std::byte{0});
      break;
    }
    case Damage::kSizeField:  // the payload size at offset 112
      rec[112 + rng() % 8] ^= std::byte{static_cast<unsigned char>(1 + rng() % 255)};
      break;
    case Damage::kOtherModel: {  // a well-formed record of another model
      cache::KvIdentity other = id;
      other.model.lo ^= 1 + rng() % 1000;
      cache::seal_record(rec, k.key, k.owner, other, k.tokens);
      break;
    }
    case Damage::kOtherDepth: {  // a well-formed record of another place in the chain
      cache::BlockKey wrong = k.key;
      wrong.depth += 1;
      cache::seal_record(rec, wrong, k.owner, id, k.tokens);
      break;
    }
    case Damage::kTruncate:
    case Damage::kExtend:
      break;  // by value only
  }
}

// --- The test -----------------------------------------------------------------

Tokens prompt(size_t n, uint32_t salt) { return some_tokens(n, stories()->config().vocab_size, salt); }

TEST(TierFaults, RestoresUnderInjectedCorruptionTornWritesAndEvictionsServeNoWrongOutput) {
  auto model = stories();
  const cache::KvIdentity id = identity_of(model);
  const auto rec_bytes = static_cast<int64_t>(cache::record_bytes(id));
  const int64_t want_restores = restores_wanted();
  constexpr int kMaxTokens = 2;

  // Prompts sharing prefixes: 6 system prompts (3 blocks) x 8 suffixes
  // (20..47 tokens: some end on a block boundary, most do not), for two
  // tenants, each in its own scope.
  std::vector<Tokens> prompts;
  for (uint32_t sys = 0; sys < 6; ++sys) {
    const Tokens head = prompt(48, 1000 + sys);
    for (uint32_t suf = 0; suf < 8; ++suf) {
      Tokens p = head;
      const Tokens tail = prompt(20 + (sys * 8 + suf) * 7 % 28, 2000 + sys * 8 + suf);
      p.insert(p.end(), tail.begin(), tail.end());
      prompts.push_back(std::move(p));
    }
  }
  const TenantId tenants[] = {1, 2};
  auto scope_of = [](TenantId t) { return cache::ScopeId{0x7ea0 + t, t}; };

  // What cache off gives, once per distinct prompt.
  std::vector<Tokens> reference;
  {
    auto off = make_prefix_scheduler(model, {.block_size = kB, .prefix_cache = false});
    for (const Tokens& p : prompts) reference.push_back(run_one(*off, greedy(p, kMaxTokens)).output);
  }

  // Every block of every prompt, by key.
  std::vector<Known> known;
  std::unordered_map<cache::TierKey, size_t, cache::TierKeyHasher> by_key;
  for (TenantId t : tenants) {
    const cache::ScopeId scope = scope_of(t);
    const cache::BlockHash seed = cache::chain_seed({scope, fingerprint_of(*model), kB, ""});
    for (const Tokens& p : prompts) {
      std::vector<cache::BlockHash> chain;
      cache::extend_chain(chain, seed, p, kB, cache::hash_block);
      for (size_t i = 0; i < chain.size(); ++i) {
        const cache::TierKey tk{scope, chain[i]};
        if (by_key.contains(tk)) continue;
        by_key[tk] = known.size();
        known.push_back({{chain[i], i == 0 ? seed : chain[i - 1], scope, static_cast<int32_t>(i)},
                         Tokens(p.begin() + static_cast<std::ptrdiff_t>(i * kB),
                                p.begin() + static_cast<std::ptrdiff_t>((i + 1) * kB)),
                         t});
      }
    }
  }
  {
    std::unordered_set<uint64_t> lows;  // the host ledger names records by hash.lo
    for (const Known& k : known) ASSERT_TRUE(lows.insert(k.key.hash.lo).second);
  }
  const auto n_known = static_cast<int64_t>(known.size());  // ~250 blocks

  // Tiers far below the working set: 48 device blocks, a host tier of a
  // quarter of the blocks, a disk tier of about two thirds.
  HostLedger ledger;
  auto host = std::make_shared<cache::HostTier>(n_known / 4 * rec_bytes, id, std::make_unique<LedgerPolicy>(ledger));
  testing::TempDir dir;
  cache::DiskTierOptions dopt;
  dopt.dir = dir.sub("kv");
  dopt.capacity_bytes = n_known * 2 / 3 * rec_bytes;
  dopt.identity = id;
  dopt.write_queue_bytes = size_t{4} << 20;
  std::shared_ptr<cache::DiskTier> disk = cache::DiskTier::open(std::move(dopt));
  auto observed = std::make_shared<ObservedDisk>(disk);

  // The injector: damage in both tiers, and evictions racing the restores.
  // It starts before the scheduler (whose mover threads call the host
  // tier's policy), so that the ledger knows its thread before anyone reads it.
  std::atomic<bool> go{false}, stop{false};
  std::atomic<int64_t> host_evicted_by_injector{0}, disk_evicted_by_injector{0}, host_refused{0}, unindexed{0};
  std::thread injector([&] {
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    std::mt19937_64 rng(0x7a17);
    while (!stop.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::microseconds(100 + rng() % 400));
      const Known& k = known[rng() % known.size()];
      const cache::TierKey tk{k.key.scope, k.key.hash};
      const uint64_t action = rng() % 100;
      if (action < 40) {  // host: damage a stored, unleased, healthy record
        const auto d = static_cast<Damage>(rng() % 5);
        const bool done = host->mutate_for_test(tk, [&](std::span<std::byte> rec) {
          if (cache::check_record(rec, k.key, k.tokens, id) != cache::RecordFault::kNone) return;  // damaged already
          damage_in_place(rec, d, k, id, rng);
          if (cache::check_record(rec, k.key, k.tokens, id) == cache::RecordFault::kNone) return;  // a no-op
          const auto slot = ledger.key_slot.find(k.key.hash.lo);
          if (slot == ledger.key_slot.end() || !ledger.damaged.insert(slot->second).second) {
            ++unindexed;  // the policy never saw this record, or it was damaged twice: the ledger is wrong
            return;
          }
          ++ledger.damaged_total;
        });
        if (!done) host_refused.fetch_add(1, std::memory_order_relaxed);
      } else if (action < 80) {  // disk: plant a damaged value over a healthy one
        std::optional<std::vector<std::byte>> v = disk->get(tk);
        if (!v || cache::check_record(*v, k.key, k.tokens, id) != cache::RecordFault::kNone) continue;
        const auto d = static_cast<Damage>(rng() % 7);
        if (d == Damage::kTruncate) {
          v->resize(rng() % v->size());  // a torn value: any prefix, empty included
        } else if (d == Damage::kExtend) {
          v->resize(v->size() + 1 + rng() % 64, std::byte{0x5a});
        } else {
          damage_in_place(*v, d, k, id, rng);
        }
        if (cache::check_record(*v, k.key, k.tokens, id) == cache::RecordFault::kNone) continue;
        observed->plant(tk, *v, k.owner, k.key.depth);
      } else if (action < 81) {
        host_evicted_by_injector += host->evict_tenant(tenants[rng() % 2]);
      } else if (action < 82) {
        disk_evicted_by_injector += observed->evict_tenant(tenants[rng() % 2]);
      }
    }
  });
  ledger.injector = injector.get_id();
  go.store(true, std::memory_order_release);
  auto sched = make_prefix_scheduler(model, {.block_size = kB, .n_blocks = 48, .max_step_tokens = 256,
                                             .tiers = {host, observed}});

  // The load: rounds of 24 requests submitted at once (many running, more
  // waiting with their chains prefetched), random prompts and tenants.
  std::mt19937_64 rng(0x5eed);
  int64_t requests = 0, wrong = 0, rounds = 0;
  while (sched->restores().blocks_from_host + sched->restores().blocks_from_disk < want_restores && rounds < 4000) {
    ++rounds;
    std::vector<std::pair<size_t, std::shared_ptr<RequestStream>>> batch;
    for (int i = 0; i < 24; ++i) {
      const size_t p = rng() % prompts.size();
      const TenantId t = tenants[rng() % 2];
      Submitter who;
      who.tenant = t;
      batch.emplace_back(p, sched->submit(greedy(prompts[p], kMaxTokens, scope_of(t)), who));
    }
    drain(*sched);
    for (auto& [p, st] : batch) {
      ASSERT_TRUE(st->finished());
      const RequestResult r = st->wait().result;
      ++requests;
      if (r.output != reference[p]) {
        ++wrong;
        ADD_FAILURE() << "round " << rounds << ": prompt " << p << " gave another output than cache off";
      }
    }
    // Most rounds also forget the device pool's copies: their next hits are restores.
    if (rng() % 4 != 0)
      for (TenantId t : tenants) sched->evict_tenant(t, false);
  }
  stop = true;
  injector.join();
  const RestoreCounters rc = sched->restores();
  sched->settle_tiers();
  sched.reset();  // the mover's leases and prefetches go
  disk->flush();

  // --- Restores and outputs.
  const int64_t restores = rc.blocks_from_host + rc.blocks_from_disk;
  EXPECT_GE(restores, want_restores);
  EXPECT_GT(rc.blocks_from_host, 0);
  EXPECT_GT(rc.blocks_from_disk, 0);
  EXPECT_EQ(wrong, 0);

  // --- Host: every damaged record dropped and counted, evicted, or still there.
  host->check_invariants();
  const cache::TierStats hs = host->stats();
  int64_t host_faults = 0;
  for (const auto& [why, n] : hs.faults) host_faults += n;
  const auto still_damaged = static_cast<int64_t>(ledger.damaged.size());
  EXPECT_EQ(unindexed.load(), 0);
  EXPECT_GT(ledger.damaged_total, 0);
  EXPECT_GT(ledger.dropped_damaged, 0) << "no damaged host record was ever looked up";
  EXPECT_EQ(ledger.dropped_healthy, 0) << "a good host record was dropped as corrupt";
  EXPECT_EQ(ledger.dropped_damaged + ledger.evicted_damaged + still_damaged, ledger.damaged_total);
  EXPECT_EQ(host_faults, ledger.dropped_damaged);
  // Each restore that found a damaged host record counted a fault, and a
  // damaged record can fail more than one restore only while leased by each
  // (it is out of the index after the first).
  EXPECT_GE(rc.faults, ledger.dropped_damaged);
  for (policies::EntryId slot : ledger.damaged) {  // never looked up since: still stored, still damaged
    const auto lo = ledger.slot_key.at(slot);
    const auto it = std::find_if(known.begin(), known.end(), [&](const Known& k) { return k.key.hash.lo == lo; });
    ASSERT_NE(it, known.end());
    bool bad = false;
    EXPECT_TRUE(host->mutate_for_test({it->key.scope, it->key.hash}, [&](std::span<std::byte> rec) {
      bad = cache::check_record(rec, it->key, it->tokens, id) != cache::RecordFault::kNone;
    }));
    EXPECT_TRUE(bad);
  }

  // --- Disk: every damaged value read was dropped at once and counted.
  const ObservedDisk::Counts dc = observed->counts();
  const cache::TierStats ds = disk->stats();
  int64_t disk_faults = 0;
  for (const auto& [why, n] : ds.faults) disk_faults += n;
  EXPECT_GT(dc.planted, 0);
  EXPECT_GT(dc.read_damaged, 0) << "no damaged disk record was ever looked up";
  EXPECT_EQ(dc.dropped_damaged, dc.read_damaged);
  EXPECT_EQ(dc.dropped_other, 0) << "a disk record was dropped that was not one the injector damaged";
  EXPECT_FALSE(dc.owed);
  EXPECT_EQ(disk_faults, dc.read_damaged);

  // --- The races happened.
  EXPECT_GT(hs.evicted, 0);
  EXPECT_GT(ds.evicted, 0);
  EXPECT_GT(host_evicted_by_injector.load() + disk_evicted_by_injector.load(), 0);

  std::printf("[tier faults] %lld requests in %lld rounds; restores %lld (host %lld, disk %lld); wrong outputs %lld\n"
              "[tier faults] host: %lld records damaged: %lld dropped and counted (tier faults %lld, restore faults "
              "%lld), %lld evicted, %lld never looked up; %lld evicted in all, %lld by evict_tenant\n"
              "[tier faults] disk: %lld values planted, %lld read and dropped (tier faults %lld); %lld evicted in all, "
              "%lld by evict_tenant\n",
              static_cast<long long>(requests), static_cast<long long>(rounds), static_cast<long long>(restores),
              static_cast<long long>(rc.blocks_from_host), static_cast<long long>(rc.blocks_from_disk),
              static_cast<long long>(wrong), static_cast<long long>(ledger.damaged_total),
              static_cast<long long>(ledger.dropped_damaged), static_cast<long long>(host_faults),
              static_cast<long long>(rc.faults), static_cast<long long>(ledger.evicted_damaged),
              static_cast<long long>(still_damaged), static_cast<long long>(hs.evicted),
              static_cast<long long>(host_evicted_by_injector.load()), static_cast<long long>(dc.planted),
              static_cast<long long>(dc.read_damaged), static_cast<long long>(disk_faults),
              static_cast<long long>(ds.evicted), static_cast<long long>(disk_evicted_by_injector.load()));
}

// The race the test above found, made deterministic: two requests prefetch
// the same prompt, so both lease its damaged host record. The first finds
// the damage, drops the record and prefills; its blocks are written through
// to the host tier again, a good record under the same key. The second, when
// it is admitted, still holds its lease on the old, damaged bytes: its
// restore fails again (a miss: right), and only the damaged record may be
// counted and dropped, never the good one that replaced it.
TEST(TierFaults, AStaleLeaseOnADroppedRecordDropsNothingElse) {
  auto model = stories();
  const cache::KvIdentity id = identity_of(model);
  auto host = std::make_shared<cache::HostTier>(256 * static_cast<int64_t>(cache::record_bytes(id)), id);
  // One sequence at a time, so that the second is admitted only after the first has finished.
  auto s = make_prefix_scheduler(model, {.block_size = kB, .n_blocks = 12, .max_running = 1, .tiers = {host, nullptr}});
  const Request req = greedy(prompt(96, 31), 2);
  const Tokens want = run_one(*s, req).output;
  s->settle_tiers();
  s->evict_tenant(0, false);
  std::vector<cache::BlockHash> chain;
  const cache::BlockHash seed = cache::chain_seed({*req.scope, fingerprint_of(*model), kB, req.cache_salt});
  cache::extend_chain(chain, seed, req.prompt, kB, cache::hash_block);
  const cache::TierKey damaged{*req.scope, chain[2]};
  ASSERT_TRUE(host->mutate_for_test(damaged, [](std::span<std::byte> b) { b[b.size() - 9] ^= std::byte{4}; }));

  auto first = s->submit(req, {});
  auto second = s->submit(req, {});
  // Both have leased the damaged record before either runs.
  while (s->mover()->prefetch_pending(first->id()) || s->mover()->prefetch_pending(second->id()))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  while (!first->finished()) s->step();
  s->settle_tiers();        // the first's blocks are in the host tier again, block 2 a good record
  s->evict_tenant(0, false);  // and not in the device pool: the second restores
  ASSERT_TRUE(host->contains(damaged));
  drain(*s);
  EXPECT_EQ(first->wait().result.output, want);
  EXPECT_EQ(second->wait().result.output, want);
  EXPECT_EQ(first->wait().result.cached_tokens, 2 * kB);
  EXPECT_EQ(second->wait().result.cached_tokens, 2 * kB);
  // The damaged record, once; a second count is the good record that replaced it, dropped.
  EXPECT_EQ(host->stats().faults.at("payload_checksum"), 1);
}

}  // namespace
}  // namespace kvgate
