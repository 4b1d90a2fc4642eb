// The tenancy store: one RocksDB database under a data directory, one column
// family per kind of record, and a schema version in the meta family.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/write_batch.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::tenancy {

// Each family and what its keys and values are.
enum class Family : int {
  kMeta,          // "schema_version" -> u32 little-endian
  kTenants,       // tenant id -> Tenant record
  kPlans,         // plan id -> PricePlan record
  kOrgScopes,     // org id -> 16-byte cache scope shared by the org's opted-in tenants
  kApiKeys,       // tenant id \0 key id -> ApiKey record (digest only, never the key)
  kKeyDigests,    // SHA-256(key) -> tenant id \0 key id, for active keys only
  kLedgerById,    // request id -> key in kLedgerByTime (the idempotence index)
  kLedgerByTime,  // tenant id \0 be64(finish ns) request id -> LedgerRecord
  kResponses,        // tenant id \0 response id -> StoredResponse record (response_store.h)
  kResponsesByTime,  // tenant id \0 be64(created ns) response id -> "" (a tenant's, oldest first)
  kUsageByHour,      // tenant id \0 be64(UTC hour start ns) -> UsageTotals of that hour's records
  kCount,
};

const char* family_name(Family f) noexcept;

class Store {
 public:
  // Bump on any incompatible change. A new family is not one by itself (an
  // older build opens it as foreign and leaves it be), but one that must
  // stay in step with another is: version 2 added kUsageByHour, which every
  // ledger write updates, so a version-1 build must not write beside it.
  // Version 1 (no rollups) is opened and migrated by the Ledger.
  static constexpr uint32_t kSchemaVersion = 2;
  static constexpr uint32_t kOldestMigratable = 1;
  static constexpr std::string_view kSchemaKey = "schema_version";

  // Opens or creates the store in `dir`. Throws Error(kSchemaTooNew) if a
  // newer kvgate wrote it, Error(kIo) if RocksDB cannot open it.
  // `fs`: the file system RocksDB uses (null: the machine's); the tests
  // pass one that fails writes on demand.
  explicit Store(const std::string& dir, std::shared_ptr<rocksdb::FileSystem> fs = nullptr);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  rocksdb::DB* db() const { return db_.get(); }
  rocksdb::ColumnFamilyHandle* cf(Family f) const { return handles_[static_cast<int>(f)]; }
  const std::string& dir() const { return dir_; }
  // The schema version found on disk at open (kSchemaVersion for a new
  // store). A migration writes its changes and put_schema_version() in one
  // batch, so a crash leaves the store wholly old or wholly current.
  uint32_t opened_version() const { return opened_version_; }
  void put_schema_version(rocksdb::WriteBatch* batch);

  std::optional<std::string> get(Family f, std::string_view key) const;
  // Applies the batch atomically; sync=true returns only once it is on disk.
  void write(rocksdb::WriteBatch* batch, bool sync);
  // After a failed write RocksDB refuses every write until told to resume
  // (its background error); true once it takes writes again.
  bool resume();

 private:
  void open();
  void check_schema(bool fresh);
  void close() noexcept;

  std::string dir_;
  uint32_t opened_version_ = kSchemaVersion;
  std::unique_ptr<rocksdb::Env> env_;  // over the given file system; null: the default
  std::unique_ptr<rocksdb::DB> db_;
  std::array<rocksdb::ColumnFamilyHandle*, static_cast<int>(Family::kCount)> handles_{};
  // Families found on disk that this build does not know (from a newer
  // schema); opened only so that RocksDB agrees to open the database.
  std::vector<rocksdb::ColumnFamilyHandle*> foreign_;
  rocksdb::ColumnFamilyHandle* default_cf_ = nullptr;
};

// Throws Error(kIo) naming `what` when `s` is not ok.
void check_status(const rocksdb::Status& s, const std::string& what);

}  // namespace kvgate::tenancy
