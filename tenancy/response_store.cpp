// Stored responses by tenant, with retention and a per-tenant count.
//
// Invariant: for each tenant, counts_[tenant] (once read) equals the number
// of its kResponsesByTime entries; each kResponses record has its entry
// there (a record that no longer decodes may leave its entry behind, still
// counted, until put() drops it as the oldest).
#include "tenancy/response_store.h"

#include <rocksdb/write_batch.h>

#include <memory>

#include "tenancy/codec.h"
#include "tenancy/error.h"

namespace kvgate::tenancy {
namespace {

// Format 2 added the output's token ids; a format-1 record reads back
// without them.
template <uint8_t Format>
struct StoredResponseFields {
  using Record = StoredResponse;
  static constexpr uint8_t kFormat = Format;
  static constexpr const char* kWhat = "stored response";
  template <class R, class Field>
  static void visit(R& r, Field& f) {
    f(r.id);
    f(r.previous_id);
    f(r.created_ns);
    f(r.input);
    f(r.output_text);
    f(r.object);
    if constexpr (Format >= 2) f(r.output_tokens);
  }
};
using CurrentFields = StoredResponseFields<2>;

StoredResponse decode_response(std::string_view v) {
  if (record_format(v) == 1) return decode_record<StoredResponseFields<1>>(v);
  return decode_record<CurrentFields>(v);
}

std::string tenant_prefix(std::string_view tenant) {
  std::string k(tenant);
  k.push_back('\0');
  return k;
}

std::string record_key(std::string_view tenant, std::string_view id) {
  std::string k = tenant_prefix(tenant);
  k.append(id);
  return k;
}

std::string time_key(std::string_view tenant, int64_t created_ns, std::string_view id) {
  std::string k = tenant_prefix(tenant);
  append_be64(&k, ordered_i64(created_ns));
  k.append(id);
  return k;
}

}  // namespace

ResponseStore::ResponseStore(Store& store, const WallClock& clock, ResponseLimits limits)
    : store_(store), clock_(clock), limits_(limits) {
  if (limits_.retention.count() <= 0) throw Error(ErrorCode::kInvalidArgument, "response retention must be positive");
  if (limits_.per_tenant == 0) throw Error(ErrorCode::kInvalidArgument, "responses per tenant must be at least 1");
}

bool ResponseStore::expired(const StoredResponse& r) const {
  const int64_t retention_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(limits_.retention).count();
  return clock_.now_ns() - r.created_ns > retention_ns;
}

uint64_t& ResponseStore::count(const std::string& tenant) {
  auto it = counts_.find(tenant);
  if (it != counts_.end()) return it->second;
  const std::string prefix = tenant_prefix(tenant);
  rocksdb::ReadOptions ro;
  std::unique_ptr<rocksdb::Iterator> scan(store_.db()->NewIterator(ro, store_.cf(Family::kResponsesByTime)));
  uint64_t n = 0;
  for (scan->Seek(prefix); scan->Valid() && scan->key().starts_with(prefix); scan->Next()) ++n;
  check_status(scan->status(), "counting stored responses");
  return counts_.emplace(tenant, n).first->second;
}

void ResponseStore::put(std::string_view tenant, const StoredResponse& r) {
  MutexLock lock(mu_);
  const std::string key = record_key(tenant, r.id);
  if (store_.get(Family::kResponses, key))
    throw Error(ErrorCode::kAlreadyExists, "stored response " + r.id);
  uint64_t& stored = count(std::string(tenant));
  uint64_t n = stored;
  rocksdb::WriteBatch batch;
  // The tenant's entries, oldest first: drop the expired and, past the
  // quota, the oldest, until one is young enough and there is room.
  const std::string prefix = tenant_prefix(tenant);
  const int64_t retention_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(limits_.retention).count();
  const int64_t now = clock_.now_ns();
  rocksdb::ReadOptions ro;
  std::unique_ptr<rocksdb::Iterator> it(store_.db()->NewIterator(ro, store_.cf(Family::kResponsesByTime)));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    const std::string_view k = it->key().ToStringView();
    if (k.size() < prefix.size() + 8) throw Error(ErrorCode::kCorrupt, "stored responses' time index key");
    const int64_t created = unordered_i64(read_be64(k.substr(prefix.size(), 8)));
    if (n < limits_.per_tenant && now - created <= retention_ns) break;
    check_status(batch.Delete(store_.cf(Family::kResponsesByTime), it->key()), "dropping a stored response");
    check_status(batch.Delete(store_.cf(Family::kResponses), record_key(tenant, k.substr(prefix.size() + 8))),
                 "dropping a stored response");
    --n;
  }
  check_status(it->status(), "scanning stored responses");
  check_status(batch.Put(store_.cf(Family::kResponses), key, encode_record<CurrentFields>(r)),
               "storing a response");
  check_status(batch.Put(store_.cf(Family::kResponsesByTime), time_key(tenant, r.created_ns, r.id), ""),
               "storing a response");
  store_.write(&batch, /*sync=*/true);
  stored = n + 1;
}

std::optional<StoredResponse> ResponseStore::get(std::string_view tenant, std::string_view id) const {
  const std::optional<std::string> v = store_.get(Family::kResponses, record_key(tenant, id));
  if (!v) return std::nullopt;
  StoredResponse r = decode_response(*v);
  if (expired(r)) return std::nullopt;
  return r;
}

bool ResponseStore::remove(std::string_view tenant, std::string_view id) {
  MutexLock lock(mu_);
  const std::string key = record_key(tenant, id);
  const std::optional<std::string> v = store_.get(Family::kResponses, key);
  if (!v) return false;
  rocksdb::WriteBatch batch;
  check_status(batch.Delete(store_.cf(Family::kResponses), key), "deleting a stored response");
  std::optional<StoredResponse> r;
  try {
    r = decode_response(*v);
  } catch (const Error&) {
    // Unreadable: its time entry cannot be found, so it stays (counted)
    // until put() drops it as the oldest; the record itself goes now.
  }
  if (r && expired(*r)) return false;
  uint64_t& stored = count(std::string(tenant));
  if (r) check_status(batch.Delete(store_.cf(Family::kResponsesByTime), time_key(tenant, r->created_ns, r->id)),
                      "deleting a stored response");
  store_.write(&batch, /*sync=*/true);
  if (r && stored > 0) --stored;
  return true;
}

}  // namespace kvgate::tenancy
