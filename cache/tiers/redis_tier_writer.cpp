// The Redis tier's write path: the queue (enqueue, flush) and the writer thread's pipelined SET and PUBLISH batches.
#include <hiredis.h>

#include <string>
#include <utility>

#include "cache/tiers/redis_connection.h"
#include "cache/tiers/redis_tier.h"
#include "cache/tiers/redis_tier_internal.h"

namespace kvgate::cache {
namespace {

constexpr size_t kBatchRecords = 64;             // records per pipeline
constexpr size_t kBatchBytes = size_t{4} << 20;  // or fewer, past this many bytes

}  // namespace

// --- Writes -----------------------------------------------------------------

bool RedisTier::enqueue(std::span<const std::byte> record, TenantId) {
  const std::optional<RecordHeader> h = read_record_header(record);
  const bool ours = h && h->identity == identity_;
  const TierKey key = ours ? TierKey{h->key.scope, h->key.hash} : TierKey{};
  const TierKey tags = ours ? tags_of(key) : TierKey{};  // HMACs: before the lock
  bool full = false;
  {
    MutexLock lock(mu_);
    if (!ours) {
      ++counters_.tier.refused;
      return false;
    }
    if (queued_.contains(key) || known_.contains(tags)) return false;
    full = !fifo_.empty() && queued_bytes_ + record.size() > write_queue_bytes_;
    if (full) {
      ++counters_.tier.refused;
    } else {
      auto p = std::make_shared<const Pending>(Pending{key, {record.begin(), record.end()}});
      queued_.emplace(key, p);
      fifo_.push_back(std::move(p));
      queued_bytes_ += record.size();
      ++enqueued_seq_;
      ++counters_.tier.stored;
    }
  }
  if (full) {
    log_throttled("write queue full (" + std::to_string(write_queue_bytes_ >> 10) + " KiB): a block was refused");
    return false;
  }
  work_cv_.notify_one();
  return true;
}

void RedisTier::writer_loop() {
  block_sigpipe();
  writer_conn_->get();  // connect early: stats() then says whether the writer can reach Redis
  MutexLock lock(mu_);
  for (;;) {
    while (!stop_ && fifo_.empty()) work_cv_.wait(mu_);
    if (fifo_.empty()) return;  // stopping, and everything queued was sent
    std::vector<std::shared_ptr<const Pending>> batch;
    size_t bytes = 0;
    uint64_t taken = 0;
    while (!fifo_.empty() && batch.size() < kBatchRecords && bytes < kBatchBytes) {
      std::shared_ptr<const Pending> p = std::move(fifo_.front());
      fifo_.pop_front();
      ++taken;
      bytes += p->record.size();
      const auto it = queued_.find(p->key);
      if (it != queued_.end() && it->second == p) batch.push_back(std::move(p));  // else dropped as corrupt
    }
    {
      MutexUnlock unlocked(mu_);
      if (!batch.empty()) write_batch(batch);
    }
    for (const auto& p : batch)
      if (const auto it = queued_.find(p->key); it != queued_.end() && it->second == p) queued_.erase(it);
    queued_bytes_ -= bytes;
    done_seq_ += taken;
    done_cv_.notify_all();
  }
}

// SET (PX ttl) and PUBLISH for each record in one pipeline, then every
// reply: one round trip per batch. A connection that fails mid-way loses
// the records whose SET was not acknowledged (counted refused).
void RedisTier::write_batch(const std::vector<std::shared_ptr<const Pending>>& batch) {
  std::vector<TierKey> written;  // their tags
  int64_t errors = 0;
  std::string error;
  // Sealed here, on the writer's thread, never the caller's.
  std::vector<TierKey> tags(batch.size());
  std::vector<std::string> names(batch.size());
  std::vector<std::vector<std::byte>> sealed(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    names[i] = name_of_tags(tags[i] = tags_of(batch[i]->key));
    sealed[i] = seal_->seal(batch[i]->record, names[i]);
  }
  if (redisContext* c = writer_conn_->get()) {
    const std::string ttl_ms = std::to_string(ttl_.count());
    for (size_t i = 0; i < batch.size(); ++i) {
      const std::string& key = names[i];
      const char* set[] = {"SET", key.data(), reinterpret_cast<const char*>(sealed[i].data()), "PX", ttl_ms.data()};
      const size_t set_len[] = {3, key.size(), sealed[i].size(), 2, ttl_ms.size()};
      redisAppendCommandArgv(c, ttl_.count() > 0 ? 5 : 3, set, set_len);
      const char* pub[] = {"PUBLISH", channel_.data(), key.data()};
      const size_t pub_len[] = {7, channel_.size(), key.size()};
      redisAppendCommandArgv(c, 3, pub, pub_len);
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      void* set_reply = nullptr;
      void* pub_reply = nullptr;
      if (redisGetReply(c, &set_reply) != REDIS_OK) break;
      const ReplyPtr set(static_cast<redisReply*>(set_reply));
      if (set->type == REDIS_REPLY_STATUS) {
        written.push_back(tags[i]);
      } else {
        ++errors;  // OOM under noeviction, a READONLY replica, ...
        error = set->type == REDIS_REPLY_ERROR ? set->str : "unexpected reply to SET";
      }
      if (redisGetReply(c, &pub_reply) != REDIS_OK) break;
      freeReplyObject(pub_reply);
    }
    if (c->err) {
      ++errors;
      error = c->errstr;
      writer_conn_->failed();
    }
  } else {
    ++errors;
    error = "not connected (" + writer_conn_->last_error() + ")";
  }
  {
    MutexLock lock(mu_);
    for (const TierKey& k : written) known_.add(k);
    counters_.tier.persisted += static_cast<int64_t>(written.size());
    counters_.tier.refused += static_cast<int64_t>(batch.size() - written.size());
    counters_.tier.write_errors += errors;
  }
  if (errors > 0)
    log_throttled("writing " + std::to_string(batch.size()) + " blocks failed: " + error + "; " +
                  std::to_string(batch.size() - written.size()) + " dropped");
}

void RedisTier::flush() {
  MutexLock lock(mu_);
  const uint64_t upto = enqueued_seq_;
  while (done_seq_ < upto) done_cv_.wait(mu_);
}

}  // namespace kvgate::cache
