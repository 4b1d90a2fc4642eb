// Crash-test helper: records ledger entries from several threads as fast as
// it can, and after each record() returns writes "<request id>\n" to stdout
// (a pipe to the test). It runs until killed; every id it wrote is a promise
// that the record is durable.
//
// usage: kvgate_ledger_crash_child <data dir> <id prefix> <threads>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "tenancy/ledger.h"
#include "tenancy/store.h"
#include "tests/tenancy/crash_record.h"

namespace {

void ack(const std::string& id) {
  const std::string line = id + "\n";  // < PIPE_BUF, so one atomic write
  if (write(STDOUT_FILENO, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    _exit(3);  // the test went away
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <data dir> <id prefix> <threads>\n", argv[0]);
    return 2;
  }
  const std::string prefix = argv[2];
  const int threads = std::atoi(argv[3]);
  try {
    kvgate::tenancy::Store store(argv[1]);
    kvgate::tenancy::Ledger ledger(store);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        for (uint64_t seq = 0;; ++seq) {
          const std::string id = prefix + "-" + std::to_string(t) + "-" + std::to_string(seq);
          try {
            ledger.record(kvgate::tenancy::testing::crash_record(id));
          } catch (const std::exception& e) {
            std::fprintf(stderr, "record %s failed: %s\n", id.c_str(), e.what());
            _exit(4);
          }
          ack(id);
        }
      });
    }
    for (auto& w : workers) w.join();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "crash child: %s\n", e.what());
    return 1;
  }
  return 0;
}
