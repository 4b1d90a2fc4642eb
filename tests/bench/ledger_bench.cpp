// Ledger group-commit throughput: durable records per second with 1, 8 and
// 64 concurrent writers, next to the raw fsync rate of the same file system
// measured in the same run. The ratio records/s / syncs/s is how many
// records one sync carries on average: above 1 only if group commit works.
//
// Then usage reports over a ledger of U records spread over 30 days: a
// period's totals read from the per-hour rollups (Ledger::usage) against
// the scan of every record they replaced, in the same run on the same store.
//
// usage: kvgate_bench_ledger [--dir DIR] [--records N] [--writers 1,8,64] [--usage-records U]
//   DIR defaults to $TMPDIR (or /tmp); N (default 32768) is the total per row;
//   U (default 262144) the records of the usage table (0: no table).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tenancy/ledger.h"
#include "tenancy/store.h"

namespace {

using Clock = std::chrono::steady_clock;
using kvgate::tenancy::Ledger;
using kvgate::tenancy::LedgerRecord;
using kvgate::tenancy::Store;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct SyncFigures {
  double median_us = 0;
  double p99_us = 0;
  double syncs_per_s = 0;  // implied by the median
};

// 4 KiB write + fdatasync, `n` times. Appending (the file grows, as a WAL
// does) makes each sync also commit the new size, so it is the fair baseline
// for RocksDB's WAL; overwriting one block in place is the cheapest case.
// Stops after `n` samples or `budget_s` seconds, whichever comes first, so a
// slow disk does not stall the run.
SyncFigures measure_fsync(const std::string& dir, bool append, int n, double budget_s = 2.0) {
  const std::string path = dir + "/fsync_probe";
  const int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) {
    std::perror("open fsync probe");
    std::exit(1);
  }
  std::vector<char> block(4096, 'x');
  std::vector<double> us;
  us.reserve(static_cast<size_t>(n));
  const auto start = Clock::now();
  for (int i = 0; i < n && (i < 20 || seconds_since(start) < budget_s); ++i) {
    const off_t off = append ? static_cast<off_t>(i) * 4096 : 0;
    const auto t0 = Clock::now();
    if (pwrite(fd, block.data(), block.size(), off) != 4096 || fdatasync(fd) != 0) {
      std::perror("fsync probe");
      std::exit(1);
    }
    us.push_back(seconds_since(t0) * 1e6);
  }
  close(fd);
  std::filesystem::remove(path);
  std::sort(us.begin(), us.end());
  SyncFigures f;
  f.median_us = us[us.size() / 2];
  f.p99_us = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  f.syncs_per_s = 1e6 / f.median_us;
  return f;
}

LedgerRecord make_record(const std::string& id, int64_t t) {
  LedgerRecord r;
  r.request_id = id;
  r.tenant_id = "bench";
  r.key_id = "key_00000000000000aa";
  r.model = "llama-3-8b";
  r.arrival_ns = t;
  r.first_token_ns = t + 1000;
  r.finish_ns = t + 2000;
  r.tokens.cached_device = 512;
  r.tokens.cached_host = 128;
  r.tokens.fresh_prefill = 40;
  r.tokens.prompt_tokens = 680;
  r.tokens.cache_written = 32;
  r.tokens.output_tokens = 200;
  r.cost_micros = 1234;
  return r;
}

struct Row {
  SyncFigures fsync;  // measured just before the row: the disk's mood drifts
  int writers = 0;
  uint64_t records = 0;
  double seconds = 0;
  uint64_t commits = 0;
};

Row run_row(const std::string& base, int writers, uint64_t total) {
  const std::string dir = base + "/ledger_w" + std::to_string(writers);
  std::filesystem::remove_all(dir);
  Row row;
  row.fsync = measure_fsync(base, /*append=*/true, 2000);
  row.writers = writers;
  {
    Store store(dir);
    Ledger ledger(store);
    const uint64_t per_writer = total / static_cast<uint64_t>(writers);
    std::vector<std::thread> threads;
    const auto t0 = Clock::now();
    for (int w = 0; w < writers; ++w) {
      threads.emplace_back([&, w] {
        std::string prefix = "w";
        prefix.append(std::to_string(w)).append("-");
        for (uint64_t i = 0; i < per_writer; ++i) {
          ledger.record(make_record(prefix + std::to_string(i), static_cast<int64_t>(i)));
        }
      });
    }
    for (auto& t : threads) t.join();
    row.seconds = seconds_since(t0);
    row.records = ledger.stats().records;
    row.commits = ledger.stats().commits;
  }
  std::filesystem::remove_all(dir);
  return row;
}

struct UsageRow {
  std::string period;
  uint64_t records = 0;  // in the period
  double scan_ms = 0, rollup_ms = 0;
};

double median_ms(const std::function<void()>& f) {
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    f();
    ms.push_back(seconds_since(t0) * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::vector<UsageRow> run_usage(const std::string& base, uint64_t total) {
  constexpr int64_t kDay = 86'400'000'000'000, kT0 = 1'764'547'200'000'000'000;  // 2025-12-01T00:00Z
  const std::string dir = base + "/ledger_usage";
  std::vector<UsageRow> rows;
  {
    Store store(dir);
    Ledger ledger(store);
    std::vector<std::thread> threads;
    for (int w = 0; w < 64; ++w) {
      threads.emplace_back([&, w] {
        for (uint64_t i = static_cast<uint64_t>(w); i < total; i += 64) {
          const int64_t t = kT0 + static_cast<int64_t>(i) * (30 * kDay / static_cast<int64_t>(total));
          std::string id = "u";  // appended, not "u" + ...: GCC 12's -Wrestrict misfires on that
          id.append(std::to_string(i));
          ledger.record(make_record(id, t));
        }
      });
    }
    for (auto& t : threads) t.join();
    const struct {
      const char* name;
      int64_t from, to;
    } periods[] = {{"30 days, on hours", kT0, kT0 + 30 * kDay},
                   {"30 days, mid-hour ends", kT0 + 1'234'567'890'123, kT0 + 30 * kDay - 987'654'321'000},
                   {"1 day", kT0 + 10 * kDay, kT0 + 11 * kDay}};
    for (const auto& p : periods) {
      UsageRow row;
      row.period = p.name;
      kvgate::tenancy::UsageTotals scanned;
      row.scan_ms = median_ms([&] {
        scanned = {};
        ledger.scan("bench", p.from, p.to, [&](const LedgerRecord& r) { kvgate::tenancy::add_to_totals(&scanned, r); });
      });
      kvgate::tenancy::UsageTotals rolled;
      row.rollup_ms = median_ms([&] { rolled = ledger.usage("bench", p.from, p.to); });
      if (!(rolled == scanned)) {
        std::fprintf(stderr, "usage from the rollups differs from the scan for %s\n", p.name);
        std::exit(1);
      }
      row.records = scanned.requests;
      rows.push_back(row);
    }
  }
  std::filesystem::remove_all(dir);
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp && *tmp ? tmp : "/tmp";
  uint64_t records = 32768, usage_records = 262144;
  std::vector<int> writer_counts = {1, 8, 64};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--dir") {
      dir = argv[i + 1];
    } else if (flag == "--records") {
      records = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--usage-records") {
      usage_records = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--writers") {
      writer_counts.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string item; std::getline(ss, item, ',');) writer_counts.push_back(std::stoi(item));
    } else {
      std::fprintf(stderr, "usage: %s [--dir DIR] [--records N] [--writers 1,8,64] [--usage-records U]\n", argv[0]);
      return 2;
    }
  }
  const std::string base = dir + "/kvgate_bench_ledger." + std::to_string(getpid());
  std::filesystem::create_directories(base);

  std::vector<Row> rows;
  for (int w : writer_counts) rows.push_back(run_row(base, w, records));
  const SyncFigures overwrite = measure_fsync(base, /*append=*/false, 2000);
  const std::vector<UsageRow> usage = usage_records > 0 ? run_usage(base, usage_records) : std::vector<UsageRow>{};
  std::filesystem::remove_all(base);

  std::printf("## Ledger durable write throughput (group commit, WriteOptions.sync=true)\n\n");
  std::printf("Directory: %s. Raw fsync = 4 KiB append + fdatasync on the same file system,\n"
              "up to 2000 samples (2 s) measured right before each row.\n\n",
              dir.c_str());
  std::printf("| writers | records | durable records/s | syncs | records/sync "
              "| fsync median µs | fsync p99 µs | max syncs/s | records/s ÷ syncs/s |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const double rps = static_cast<double>(r.records) / r.seconds;
    std::printf("| %d | %llu | %.0f | %llu | %.1f | %.0f | %.0f | %.0f | %.2f |\n", r.writers,
                static_cast<unsigned long long>(r.records), rps,
                static_cast<unsigned long long>(r.commits),
                r.commits ? static_cast<double>(r.records) / static_cast<double>(r.commits) : 0.0,
                r.fsync.median_us, r.fsync.p99_us, r.fsync.syncs_per_s, rps / r.fsync.syncs_per_s);
  }
  std::printf("\nIn-place 4 KiB overwrite + fdatasync for comparison: median %.0f µs, "
              "p99 %.0f µs (%.0f syncs/s).\n",
              overwrite.median_us, overwrite.p99_us, overwrite.syncs_per_s);
  if (!usage.empty()) {
    std::printf("\n## Usage reports: the per-hour rollups against a scan of the records\n\n");
    std::printf("%llu records of one tenant over 30 days, in one store; each figure the median of 5, and the\n"
                "rollups' totals checked equal to the scan's.\n\n",
                static_cast<unsigned long long>(usage_records));
    std::printf("| period | records in it | scan ms | rollups ms | scan ÷ rollups |\n|---|---:|---:|---:|---:|\n");
    for (const UsageRow& r : usage)
      std::printf("| %s | %llu | %.1f | %.2f | %.0f |\n", r.period.c_str(), static_cast<unsigned long long>(r.records),
                  r.scan_ms, r.rollup_ms, r.scan_ms / r.rollup_ms);
  }
  return 0;
}
