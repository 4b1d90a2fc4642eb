// The route decision at scale (issue 17): cache_aware over 64 replicas of
// 1M resident blocks each, on one core. Prints markdown: the index's
// entries and memory, the events/s it applies, and the decision's p50 /
// p99 / max.
//
// The workload (blocks of 16 tokens, what the server uses), assumed from
// how a fleet's caches fill when a cache-aware router keeps conversations
// where their prefix is:
//   - 256 system prompts of 64 blocks (1k tokens), on every replica's device;
//   - 8,192 shared documents (RAG, few-shot) of 128 blocks (2k tokens), each
//     on 16 replicas (popular prefixes spread as load spills them), half on
//     the device, half on the host;
//   - the rest of each replica's 1,048,576 blocks: its own conversations,
//     64 to 960 blocks each (1k to 15k tokens, the Mooncake trace's range),
//     held by that replica alone: half on the device, 35% on the host, 15%
//     on disk.
// So 27% of the residencies are shared, and the index holds ~50M distinct
// blocks (64M if nothing were shared). Requests: half continue a resident
// conversation (system prompt, its document if any, the whole history, 16
// new blocks), a quarter start one on a document (system + document + 32
// new), a quarter are cold (system + 48 new).
//
// Also, in the same run: the machine (CPU, cores, load average before and
// after, a random read of a 1 GiB array with and without prefetch: what
// one probe of the index costs at least); the exact walk lookup() replaced
// (ReplicaIndex::lookup_exact, one probe per block), timed alone on 50,000
// more requests; and how many requests the search and the walk disagree on.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gateway/cluster/route/replica_index.h"
#include "gateway/cluster/route/route_policy.h"

namespace {

using kvgate::cache::BlockHash;
using kvgate::policies::Tier;
using kvgate::route::ReplicaId;
using kvgate::route::ReplicaIndex;

constexpr int kReplicas = 64;
constexpr int64_t kPerReplica = 1 << 20;
constexpr int kSystemPrompts = 256, kSystemBlocks = 64;
constexpr int kDocs = 8192, kDocBlocks = 128, kDocCopies = 16;
constexpr int kBlockTokens = 16;
constexpr int kDecisions = 200000, kWarmup = 2000;  // timed, and untimed before them

// Distinct block hashes: splitmix64 of a counter.
BlockHash block(uint64_t n) {
  uint64_t z = n + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return {z ^ (z >> 31), n};
}

constexpr uint64_t kSystemBase = 0, kDocBase = 1ull << 32, kConvBase = 2ull << 32, kNewBase = 3ull << 32;

struct Conversation {
  int system, doc;  // doc -1: none
  uint64_t first;   // its private blocks: first .. first + length - 1
  int length;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string first_line_of(const char* path, const char* prefix) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(prefix)) return line;
  return {};
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

// ns per random 8-byte read of a 1 GiB array: each read's address depends
// on the last (latency), or known ahead and prefetched 16 reads before
// (what the search does), as a probe of the index is one such read.
struct RandomRead {
  double dependent_ns = 0, prefetched_ns = 0;
};

RandomRead measure_random_read() {
  constexpr size_t kWords = size_t{1} << 27;  // 1 GiB
  constexpr int kReads = 1 << 23;
  // Huge pages, as the index's table has (block_table.cpp).
  auto* a = static_cast<uint64_t*>(std::aligned_alloc(size_t{2} << 20, kWords * sizeof(uint64_t)));
  if (!a) return {};
  madvise(a, kWords * sizeof(uint64_t), MADV_HUGEPAGE);
  for (size_t i = 0; i < kWords; ++i) a[i] = i * 0x9e3779b97f4a7c15ull;
  const auto slot = [](uint64_t x) { return static_cast<size_t>((x * 0xbf58476d1ce4e5b9ull) >> 37); };
  RandomRead out;
  uint64_t x = 1;
  auto t = std::chrono::steady_clock::now();
  for (int i = 0; i < kReads; ++i) x = a[slot(x + static_cast<uint64_t>(i))];
  out.dependent_ns = 1e9 * seconds_since(t) / kReads;
  uint64_t sum = 0;
  t = std::chrono::steady_clock::now();
  for (int i = 0; i < kReads; ++i) {
    __builtin_prefetch(&a[slot(static_cast<uint64_t>(i) + 16)]);
    sum += a[slot(static_cast<uint64_t>(i))];
  }
  out.prefetched_ns = 1e9 * seconds_since(t) / kReads;
  if ((x ^ sum) == 42) std::printf("!");  // keeps both loops
  std::free(a);
  return out;
}

}  // namespace

int main() {
  const std::string load_before = load_average();
  const RandomRead read = measure_random_read();
  std::mt19937_64 rng(17);
  ReplicaIndex index(kReplicas);
  for (int r = 0; r < kReplicas; ++r) index.add_replica();

  // What each replica holds, then the events that tell the index.
  std::vector<std::vector<int>> docs_of(kReplicas);
  for (int d = 0; d < kDocs; ++d) {
    std::vector<int> all(kReplicas);
    for (int r = 0; r < kReplicas; ++r) all[static_cast<size_t>(r)] = r;
    std::shuffle(all.begin(), all.end(), rng);
    for (int c = 0; c < kDocCopies; ++c) docs_of[static_cast<size_t>(all[static_cast<size_t>(c)])].push_back(d);
  }
  std::vector<Conversation> convs;
  uint64_t next_conv_block = kConvBase;
  int64_t events = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < kReplicas; ++r) {
    int64_t held = 0;
    for (int s = 0; s < kSystemPrompts; ++s)
      for (int i = 0; i < kSystemBlocks; ++i, ++held, ++events) index.stored(r, block(kSystemBase + s * kSystemBlocks + i), Tier::kDevice);
    for (int d : docs_of[static_cast<size_t>(r)])
      for (int i = 0; i < kDocBlocks; ++i, ++held, ++events)
        index.stored(r, block(kDocBase + static_cast<uint64_t>(d) * kDocBlocks + i), d % 2 ? Tier::kHost : Tier::kDevice);
    const auto& mine = docs_of[static_cast<size_t>(r)];
    while (held < kPerReplica) {
      const int len = static_cast<int>(std::min<int64_t>(64 + static_cast<int64_t>(rng() % 897), kPerReplica - held));
      const int doc = rng() % 2 ? mine[rng() % mine.size()] : -1;
      const uint64_t pick = rng() % 100;
      const Tier tier = pick < 50 ? Tier::kDevice : pick < 85 ? Tier::kHost : Tier::kDisk;
      convs.push_back({static_cast<int>(rng() % kSystemPrompts), doc, next_conv_block, len});
      for (int i = 0; i < len; ++i, ++held, ++events) index.stored(r, block(next_conv_block + static_cast<uint64_t>(i)), tier);
      next_conv_block += static_cast<uint64_t>(len);
    }
  }
  const double build_s = seconds_since(t0);

  // Churn on the full index: a conversation's blocks move down a tier and
  // come back, as eviction and restore would.
  int64_t churn = 0;
  const auto t1 = std::chrono::steady_clock::now();
  for (int k = 0; k < 2000; ++k) {
    const Conversation& c = convs[rng() % convs.size()];
    const auto r = static_cast<ReplicaId>(rng() % kReplicas);  // mostly not the holder: a stored + removed pair
    for (int i = 0; i < c.length; ++i, churn += 2) {
      const BlockHash b = block(c.first + static_cast<uint64_t>(i));
      index.stored(r, b, Tier::kHost);
      index.removed(r, b, Tier::kHost);
    }
  }
  const double churn_s = seconds_since(t1);

  // Each request's chain is made just before it is routed, as the front
  // hashes a prompt just before: it is in the cache, as there.
  uint64_t fresh = kNewBase;
  std::vector<BlockHash> c;
  const auto add = [&](uint64_t first, int n) {
    for (int i = 0; i < n; ++i) c.push_back(block(first + static_cast<uint64_t>(i)));
  };
  const auto system = [&](int s) { add(kSystemBase + static_cast<uint64_t>(s) * kSystemBlocks, kSystemBlocks); };
  const auto doc = [&](int d) { add(kDocBase + static_cast<uint64_t>(d) * kDocBlocks, kDocBlocks); };
  const auto news = [&](int n) {
    add(fresh, n);
    fresh += static_cast<uint64_t>(n);
  };

  auto policy = kvgate::route::make_route_policy("cache_aware");
  std::vector<kvgate::route::ReplicaState> state(kReplicas);
  for (auto& s : state) s.live = true, s.load = static_cast<int64_t>(rng() % 50000);
  std::vector<double> us;
  us.reserve(kDecisions);
  // The same by chain length: up to 256 blocks (4k tokens), to 640, beyond.
  std::vector<double> by_length[3];
  int64_t chain_blocks = 0, checksum = 0;
  const auto next_chain = [&] {
    c.clear();
    const uint64_t kind = rng() % 4;
    if (kind < 2) {
      const Conversation& v = convs[rng() % convs.size()];
      system(v.system);
      if (v.doc >= 0) doc(v.doc);
      add(v.first, v.length);
      news(16);
    } else if (kind == 2) {
      system(static_cast<int>(rng() % kSystemPrompts));
      doc(static_cast<int>(rng() % kDocs));
      news(32);
    } else {
      system(static_cast<int>(rng() % kSystemPrompts));
      news(48);
    }
  };
  const auto bucket = [](size_t blocks) { return blocks <= 256 ? 0 : blocks <= 640 ? 1 : 2; };
  std::vector<kvgate::route::Residency> searched(kReplicas), walked(kReplicas);
  int64_t disagree = 0;
  for (int k = 0; k < kDecisions + kWarmup; ++k) {
    next_chain();
    const kvgate::route::RouteRequest req{c, static_cast<int64_t>(c.size()) * kBlockTokens, kBlockTokens};
    const auto t = std::chrono::steady_clock::now();
    const auto to = policy->choose(req, index, state);
    const double d = 1e6 * seconds_since(t);
    checksum += to.value_or(-1);
    if (k < kWarmup) continue;
    us.push_back(d);
    chain_blocks += static_cast<int64_t>(c.size());
    by_length[bucket(c.size())].push_back(d);
    // Untimed: the search against the walk on the same chain.
    index.lookup(c, searched);
    index.lookup_exact(c, walked);
    disagree += searched != walked;
  }
  // The exact walk alone, each chain fresh as above.
  constexpr int kWalks = 50000;
  std::vector<double> walk_us, walk_by_length[3];
  for (int k = 0; k < kWalks; ++k) {
    next_chain();
    const auto t = std::chrono::steady_clock::now();
    index.lookup_exact(c, walked);
    const double d = 1e6 * seconds_since(t);
    walk_us.push_back(d);
    walk_by_length[bucket(c.size())].push_back(d);
    checksum += walked[0].blocks();
  }
  const auto pct = [](std::vector<double>& v, double p) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
  };

  const double mib = static_cast<double>(index.memory_bytes()) / (1 << 20);
  std::printf("## Route decision, %d replicas x %lld resident blocks (one core)\n\n", kReplicas,
              static_cast<long long>(kPerReplica));
  std::printf("| index | value |\n|---|---:|\n");
  std::printf("| resident blocks (replica x block) | %lld |\n", static_cast<long long>(events));
  std::printf("| distinct entries | %zu |\n", index.entries());
  std::printf("| entries held by more than one replica | %zu |\n", index.multi_entries());
  std::printf("| memory | %.0f MiB (%.1f bytes per entry, %.1f per resident block) |\n", mib,
              static_cast<double>(index.memory_bytes()) / static_cast<double>(index.entries()),
              static_cast<double>(index.memory_bytes()) / static_cast<double>(events));
  std::printf("| stored events/s, filling the index | %.1fM (%.1f s for %lld) |\n", static_cast<double>(events) / build_s / 1e6,
              build_s, static_cast<long long>(events));
  std::printf("| stored + removed events/s, index full | %.1fM |\n\n", static_cast<double>(churn) / churn_s / 1e6);
  std::printf("| cache_aware decision (us) | requests | p50 | p99 | max |\n|---|---:|---:|---:|---:|\n");
  const char* names[] = {"chains of <= 256 blocks", "257 to 640 blocks", "more than 640 blocks"};
  for (int b = 0; b < 3; ++b)
    std::printf("| %s | %zu | %.2f | %.2f | %.2f |\n", names[b], by_length[b].size(), pct(by_length[b], 0.5),
                pct(by_length[b], 0.99), pct(by_length[b], 1.0));
  std::printf("| **all** (mean chain %.0f blocks) | %zu | %.2f | %.2f | %.2f |\n",
              static_cast<double>(chain_blocks) / static_cast<double>(us.size()), us.size(), pct(us, 0.5), pct(us, 0.99),
              pct(us, 1.0));
  std::printf("\nlookup() and lookup_exact() disagree on %lld of %zu requests\n\n", static_cast<long long>(disagree),
              us.size());
  std::printf("| lookup_exact alone, the walk (us) | requests | p50 | p99 | max |\n|---|---:|---:|---:|---:|\n");
  for (int b = 0; b < 3; ++b)
    std::printf("| %s | %zu | %.2f | %.2f | %.2f |\n", names[b], walk_by_length[b].size(), pct(walk_by_length[b], 0.5),
                pct(walk_by_length[b], 0.99), pct(walk_by_length[b], 1.0));
  std::printf("| **all** | %zu | %.2f | %.2f | %.2f |\n", walk_us.size(), pct(walk_us, 0.5), pct(walk_us, 0.99),
              pct(walk_us, 1.0));
  std::string cpu = first_line_of("/proc/cpuinfo", "model name");
  cpu = cpu.substr(std::min(cpu.size(), cpu.find(':') + 2));
  const std::string mem = first_line_of("/proc/meminfo", "MemTotal:");
  const double mem_gib = mem.empty() ? 0 : std::strtod(mem.c_str() + 9, nullptr) / (1024.0 * 1024.0);
  std::printf("\nMachine: %s, %u cores, %.1f GiB RAM; load average %s before, %s after; a random read of 1 GiB: %.1f ns"
              " dependent, %.1f ns prefetched\n",
              cpu.c_str(), std::thread::hardware_concurrency(), mem_gib, load_before.c_str(), load_average().c_str(),
              read.dependent_ns, read.prefetched_ns);
  std::printf("(%zu decisions timed after %d untimed; checksum %lld)\n", us.size(), kWarmup, static_cast<long long>(checksum));
  return 0;
}
