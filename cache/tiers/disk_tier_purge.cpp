// The disk tier's purges: of another identity's entries, of everything, of one tenant's, and the offline purge_disk_tier.
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "cache/tiers/disk_db.h"
#include "cache/tiers/disk_tier.h"
#include "cache/tiers/disk_tier_internal.h"

namespace kvgate::cache {

// --- Purges --------------------------------------------------------------------

int64_t DiskTier::purge_foreign() {
  MutexLock wl(write_mu_);
  writable_or_throw();
  detail::DiskDb& db = writer_db();
  std::vector<TierKey> keys;
  std::vector<std::string> odd;  // index keys that are not TierKeys at all
  {
    std::unique_ptr<rocksdb::Iterator> it(db.db->NewIterator(rocksdb::ReadOptions(), db.index));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::optional<IndexValue> v = decode_index(it->value());
      if (v && v->digest == digest_) continue;
      TierKey k;
      if (TierKey::from_bytes(it->key().data(), it->key().size(), &k)) keys.push_back(k);
      else odd.push_back(it->key().ToString());
    }
    if (!it->status().ok()) refuse(dir_, it->status());
  }
  {
    MutexLock lock(mu_);
    for (const TierKey& k : keys)  // should none be ours: never delete what the index serves
      if (index_.contains(k)) throw std::logic_error("kv disk tier: a foreign index entry is indexed");
  }
  rocksdb::WriteBatch wb;
  for (const std::string& k : odd) {
    wb.Delete(db.records, k).PermitUncheckedError();
    wb.Delete(db.index, k).PermitUncheckedError();
  }
  if (!odd.empty()) {
    const rocksdb::Status s = write_db(&wb, rocksdb::WriteOptions());
    if (!s.ok()) {
      need_reopen_ = true;
      refuse(dir_, s);
    }
  }
  delete_keys(keys, "purging foreign entries");
  MutexLock lock(mu_);
  counters_.foreign = 0;
  return static_cast<int64_t>(keys.size() + odd.size());
}

int64_t DiskTier::purge_all() {
  MutexLock wl(write_mu_);
  writable_or_throw();
  detail::DiskDb& db = writer_db();
  int64_t n = 0;
  {
    std::unique_ptr<rocksdb::Iterator> it(db.db->NewIterator(rocksdb::ReadOptions(), db.index));
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    if (!it->status().ok()) refuse(dir_, it->status());
  }
  {
    MutexLock lock(mu_);
    for (auto& [k, p] : queued_) {
      p->cancelled = true;
      ++n;
    }
    queued_.clear();
    queued_bytes_ = 0;
    for (size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].live) remove_entry_locked(static_cast<policies::EntryId>(i));
    counters_.foreign = 0;
  }
  // Every key is 32 bytes; 33 bytes of 0xff sort after all of them.
  const std::string end(33, '\xff');
  rocksdb::WriteBatch wb;
  wb.DeleteRange(db.records, rocksdb::Slice(), end).PermitUncheckedError();
  wb.DeleteRange(db.index, rocksdb::Slice(), end).PermitUncheckedError();
  const rocksdb::Status s = write_db(&wb, rocksdb::WriteOptions());
  if (!s.ok()) {
    need_reopen_ = true;
    refuse(dir_, s);
  }
  // Reclaim the space now: the blob files are dropped once no SST refers to them.
  for (auto* cf : {db.records, db.index}) db.db->CompactRange(rocksdb::CompactRangeOptions(), cf, nullptr, nullptr).PermitUncheckedError();
  return n;
}

int32_t DiskTier::evict_tenant(TenantId tenant) {
  MutexLock wl(write_mu_);
  std::vector<TierKey> doomed;
  int32_t n = 0;
  {
    MutexLock lock(mu_);
    for (auto q = queued_.begin(); q != queued_.end();) {
      if (q->second->owner == tenant) {
        q->second->cancelled = true;
        queued_bytes_ -= q->second->bytes;
        q = queued_.erase(q);
        ++n;
      } else {
        ++q;
      }
    }
    for (size_t i = 0; i < entries_.size(); ++i) {
      const Entry& e = entries_[i];
      if (!e.live || e.owner != tenant) continue;
      doomed.push_back(e.key);
      remove_entry_locked(static_cast<policies::EntryId>(i));
      ++counters_.evicted;
      ++n;
    }
  }
  delete_keys(doomed, "evicting a tenant");
  return n;
}

// --- Offline purge -----------------------------------------------------------------

int64_t purge_disk_tier(const std::string& dir, const KvIdentity* keep) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return 0;
  detail::DiskDb db;
  const rocksdb::Status s = db.open(dir, nullptr);
  if (!s.ok()) refuse(dir, s);
  const uint64_t digest = keep ? identity_digest(*keep) : 0;
  int64_t n = 0;
  rocksdb::WriteBatch wb;
  auto write = [&] {
    const rocksdb::Status w = db.db->Write(rocksdb::WriteOptions(), &wb);
    if (!w.ok()) refuse(dir, w);
    wb.Clear();
  };
  std::unique_ptr<rocksdb::Iterator> it(db.db->NewIterator(rocksdb::ReadOptions(), db.index));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (keep) {
      const std::optional<IndexValue> v = decode_index(it->value());
      if (v && v->digest == digest) continue;
    }
    wb.Delete(db.records, it->key()).PermitUncheckedError();
    wb.Delete(db.index, it->key()).PermitUncheckedError();
    if (++n % 1024 == 0) write();
  }
  if (!it->status().ok()) refuse(dir, it->status());
  it.reset();
  if (wb.Count() > 0) write();
  if (n > 0)
    for (auto* cf : {db.records, db.index})
      db.db->CompactRange(rocksdb::CompactRangeOptions(), cf, nullptr, nullptr).PermitUncheckedError();
  return n;
}

}  // namespace kvgate::cache
