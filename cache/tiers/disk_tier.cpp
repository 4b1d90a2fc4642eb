// The disk tier's construction: opening the RocksDB database (or moving a corrupt one aside), rebuilding the index, closing.
#include "cache/tiers/disk_tier.h"

#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "cache/tiers/disk_db.h"
#include "cache/tiers/disk_tier_internal.h"
#include "policies/eviction/lru_policy.h"

namespace kvgate::cache {
namespace {

// Statuses for which moving the directory aside and starting fresh helps: the
// files are bad. Not I/O errors in general: a database locked by a running
// server, or a disk that fails, must not be moved away.
bool movable(const rocksdb::Status& s) {
  return s.IsCorruption() || s.IsInvalidArgument() || s.IsNotFound() || s.IsNotSupported() || s.IsPathNotFound();
}

}  // namespace

// --- Opening -----------------------------------------------------------------

DiskTier::DiskTier(DiskTierOptions&& o)
    : dir_(std::move(o.dir)),
      identity_(o.identity),
      digest_(identity_digest(o.identity)),
      capacity_bytes_(o.capacity_bytes),
      write_queue_bytes_(o.write_queue_bytes),
      move_aside_corrupt_(o.move_aside_corrupt),
      retry_interval_(o.retry_interval),
      env_(o.env),
      listener_(o.listener),
      db_(std::make_unique<detail::DiskDb>()),
      policy_(o.policy ? std::move(o.policy) : policies::make_lru_policy()) {}

std::unique_ptr<DiskTier> DiskTier::open(DiskTierOptions options) {
  if (options.dir.empty()) throw std::invalid_argument("kv disk tier: no directory given");
  if (!options.identity.valid()) throw std::invalid_argument("kv disk tier at " + options.dir + ": invalid KV identity");
  std::unique_ptr<DiskTier> t(new DiskTier(std::move(options)));
  {
    // Nothing else reaches the tier yet; the lock is what lets open_or_move_aside use the database.
    MutexLock wl(t->write_mu_);
    t->open_or_move_aside();
  }
  t->writer_ = std::thread([p = t.get()] { p->writer_loop(); });
  return t;
}

void DiskTier::open_or_move_aside() {
  detail::DiskDb& db = writer_db();
  rocksdb::Status s = db.open(dir_, env_);
  if (s.ok()) {
    try {
      rebuild_index();
    } catch (const rocksdb::Status& bad) {
      s = bad;
      db.close();
    }
  }
  if (s.ok()) return;
  if (!move_aside_corrupt_ || !movable(s)) refuse(dir_, s);

  const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string to = dir_ + ".corrupt-" + std::to_string(now);
  for (int i = 1; std::filesystem::exists(to); ++i) to = dir_ + ".corrupt-" + std::to_string(now) + "-" + std::to_string(i);
  std::error_code ec;
  std::filesystem::rename(dir_, to, ec);
  if (ec)
    throw std::runtime_error("kv disk tier at " + dir_ + ": " + s.ToString() + "; moving it aside to " + to +
                             " failed: " + ec.message());
  std::fprintf(stderr, "kvgate: kv disk tier at %s would not open (%s): moved it aside to %s, starting empty\n",
               dir_.c_str(), s.ToString().c_str(), to.c_str());
  moved_aside_to_ = to;
  s = db.open(dir_, env_);
  if (!s.ok()) refuse(dir_, s);
  try {
    rebuild_index();
  } catch (const rocksdb::Status& bad) {
    db.close();
    refuse(dir_, bad);
  }
}

// Throws the iterator's status when the index cannot be read.
void DiskTier::rebuild_index() {
  detail::DiskDb& db = writer_db();
  MutexLock lock(mu_);
  for (const Entry& e : entries_)
    if (e.live) policy_->on_remove(static_cast<policies::EntryId>(&e - entries_.data()));
  entries_.clear();
  free_ids_.clear();
  index_.clear();
  tenant_blocks_.clear();
  used_bytes_ = 0;
  counters_.foreign = 0;

  struct Found {
    uint64_t seq;
    TierKey key;
    IndexValue v;
  };
  std::vector<Found> found;
  std::unique_ptr<rocksdb::Iterator> it(db.db->NewIterator(rocksdb::ReadOptions(), db.index));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    TierKey k;
    const std::optional<IndexValue> v = decode_index(it->value());
    if (!TierKey::from_bytes(it->key().data(), it->key().size(), &k) || !v || v->digest != digest_) {
      ++counters_.foreign;
      continue;
    }
    found.push_back({v->seq, k, *v});
  }
  if (!it->status().ok()) throw it->status();
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.seq < b.seq; });
  for (const Found& f : found) {
    add_entry_locked(f.key, f.v.owner, f.v.depth, static_cast<int64_t>(f.v.bytes));
    next_seq_ = std::max(next_seq_, f.seq + 1);
  }
  // A capacity lowered since: evicted at open, the oldest first.
  std::vector<TierKey> victims;
  evict_over_capacity_locked(victims);
  if (!victims.empty()) {
    rocksdb::WriteBatch wb;
    for (const TierKey& k : victims) {
      const auto kb = k.bytes();
      wb.Delete(db.records, slice(kb)).PermitUncheckedError();
      wb.Delete(db.index, slice(kb)).PermitUncheckedError();
    }
    const rocksdb::Status s = db.db->Write(rocksdb::WriteOptions(), &wb);
    if (!s.ok()) throw s;
  }
}

DiskTier::~DiskTier() {
  if (writer_.joinable()) {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    writer_.join();
  }
  MutexLock wl(write_mu_);
  writer_db().close();
}

detail::DiskDb& DiskTier::writer_db() ABSL_NO_THREAD_SAFETY_ANALYSIS { return *db_; }

}  // namespace kvgate::cache
