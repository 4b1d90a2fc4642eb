// Kill a process that is recording ledger entries at a random moment, and
// check that every record it acknowledged survived, intact, exactly once.
//
// The child (kvgate_ledger_crash_child) acks a request id on a pipe only
// after Ledger::record() returned. The parent waits for a random number of
// acks (no sleeps, no timing), SIGKILLs the child, drains the acks that were
// already in the pipe, reopens the store and checks them all. The store is
// reused across rounds, so every round also recovers the previous crashes.
//
// Note: SIGKILL loses the process, not the kernel's page cache; this proves
// the acknowledgement protocol and recovery, not the disk's cache flushing.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tenancy/ledger.h"
#include "tenancy/store.h"
#include "tests/tenancy/crash_record.h"
#include "tests/temp_dir.h"

extern char** environ;

namespace kvgate::tenancy {
namespace {

using testing::crash_record;
using testing::kCrashTenant;
using kvgate::testing::TempDir;

constexpr int kRounds = 24;
constexpr int kChildThreads = 6;
constexpr int kMaxAcksBeforeKill = 300;

// Reads newline-terminated ids from a pipe.
class AckReader {
 public:
  explicit AckReader(int fd) : fd_(fd) {}
  // Next id, or false at end of stream.
  bool next(std::string* id) {
    for (;;) {
      const size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        *id = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return true;
      }
      char chunk[4096];
      const ssize_t n = read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buf_;
};

struct Child {
  pid_t pid = -1;
  int ack_fd = -1;
};

Child spawn_child(const std::string& dir, const std::string& prefix) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  const std::string threads = std::to_string(kChildThreads);
  std::vector<char*> argv = {const_cast<char*>(KVGATE_LEDGER_CRASH_CHILD),
                             const_cast<char*>(dir.c_str()), const_cast<char*>(prefix.c_str()),
                             const_cast<char*>(threads.c_str()), nullptr};
  Child c;
  const int rc = posix_spawn(&c.pid, KVGATE_LEDGER_CRASH_CHILD, &actions, nullptr, argv.data(),
                             environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw std::runtime_error("posix_spawn " + std::string(KVGATE_LEDGER_CRASH_CHILD) + " failed");
  }
  c.ack_fd = fds[0];
  return c;
}

// Every acknowledged record is present and intact; each id appears once in
// the time index and once in the id index, and the two indexes agree.
void verify(const std::string& dir, const std::set<std::string>& acked, int round) {
  SCOPED_TRACE(::testing::Message() << "after round " << round);
  Store store(dir);
  Ledger ledger(store);
  for (const std::string& id : acked) {
    const std::optional<LedgerRecord> r = ledger.find(id);
    ASSERT_TRUE(r.has_value()) << "acknowledged record " << id << " lost";
    ASSERT_EQ(*r, crash_record(id)) << "record " << id << " damaged";
  }
  std::map<std::string, int> in_time_index;
  ledger.scan(kCrashTenant, INT64_MIN, INT64_MAX,
              [&](const LedgerRecord& r) { in_time_index[r.request_id] += 1; });
  for (const auto& [id, count] : in_time_index) {
    ASSERT_EQ(count, 1) << id << " recorded more than once";
    ASSERT_EQ(*ledger.find(id), crash_record(id)) << "unacknowledged " << id << " damaged";
  }
  for (const std::string& id : acked) ASSERT_EQ(in_time_index.count(id), 1u) << id;
  std::unique_ptr<rocksdb::Iterator> it(
      store.db()->NewIterator(rocksdb::ReadOptions(), store.cf(Family::kLedgerById)));
  size_t ids = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++ids;
  ASSERT_TRUE(it->status().ok());
  ASSERT_EQ(ids, in_time_index.size()) << "id and time indexes disagree";
}

TEST(LedgerCrash, EveryAcknowledgedRecordSurvivesSigkill) {
  TempDir dir;
  const std::string data = dir.sub("store");
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> acks_before_kill(1, kMaxAcksBeforeKill);

  std::set<std::string> acked;
  for (int round = 0; round < kRounds; ++round) {
    const int wanted = acks_before_kill(rng);
    // (append, not operator+: GCC 12 -O3 warns falsely on "lit" + string)
    std::string prefix = "r";
    prefix.append(std::to_string(round));
    const Child child = spawn_child(data, prefix);
    AckReader reader(child.ack_fd);
    std::string id;
    int got = 0;
    while (got < wanted && reader.next(&id)) {
      acked.insert(id);
      ++got;
    }
    kill(child.pid, SIGKILL);
    int status = 0;
    waitpid(child.pid, &status, 0);
    while (reader.next(&id)) acked.insert(id);  // acks already in the pipe count too
    close(child.ack_fd);
    ASSERT_EQ(got, wanted) << "child exited before it was killed (status " << status << ")";
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
    verify(data, acked, round);
    if (::testing::Test::HasFatalFailure()) return;
  }
  RecordProperty("acknowledged_records", static_cast<int>(acked.size()));
  std::printf("%zu acknowledged records verified across %d SIGKILLs\n", acked.size(), kRounds);
}

}  // namespace
}  // namespace kvgate::tenancy
