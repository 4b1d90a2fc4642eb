// Ledger group-commit throughput: durable records per second with 1, 8 and
// 64 concurrent writers, next to the raw fsync rate of the same file system
// measured in the same run. The ratio records/s / syncs/s is how many
// records one sync carries on average: above 1 only if group commit works.
//
// usage: kvgate_bench_ledger [--dir DIR] [--records N] [--writers 1,8,64]
//   DIR defaults to $TMPDIR (or /tmp); N (default 32768) is the total per row.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
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

}  // namespace

int main(int argc, char** argv) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp && *tmp ? tmp : "/tmp";
  uint64_t records = 32768;
  std::vector<int> writer_counts = {1, 8, 64};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--dir") {
      dir = argv[i + 1];
    } else if (flag == "--records") {
      records = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--writers") {
      writer_counts.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string item; std::getline(ss, item, ',');) writer_counts.push_back(std::stoi(item));
    } else {
      std::fprintf(stderr, "usage: %s [--dir DIR] [--records N] [--writers 1,8,64]\n", argv[0]);
      return 2;
    }
  }
  const std::string base = dir + "/kvgate_bench_ledger." + std::to_string(getpid());
  std::filesystem::create_directories(base);

  std::vector<Row> rows;
  for (int w : writer_counts) rows.push_back(run_row(base, w, records));
  const SyncFigures overwrite = measure_fsync(base, /*append=*/false, 2000);
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
  return 0;
}
