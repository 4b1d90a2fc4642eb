// Opening is the only subtle part: RocksDB refuses to open a database unless
// every column family on disk is named, so we list them first and open our
// own plus any unknown ones (a newer schema may have added families), and only
// then read the schema version. That way a newer store fails with a clear
// "schema too new" instead of a RocksDB "column family not opened" error.
//
// Thread-safety: after construction a Store is immutable; RocksDB's DB and
// column family handles are themselves thread-safe.
#include "tenancy/store.h"

#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>

#include <filesystem>

#include "tenancy/codec.h"
#include "tenancy/error.h"

namespace kvgate::tenancy {

const char* family_name(Family f) noexcept {
  switch (f) {
    case Family::kMeta: return "meta";
    case Family::kTenants: return "tenants";
    case Family::kPlans: return "plans";
    case Family::kOrgScopes: return "org_scopes";
    case Family::kApiKeys: return "api_keys";
    case Family::kKeyDigests: return "key_digests";
    case Family::kLedgerById: return "ledger_by_id";
    case Family::kLedgerByTime: return "ledger_by_time";
    case Family::kResponses: return "responses";
    case Family::kResponsesByTime: return "responses_by_time";
    case Family::kUsageByHour: return "usage_by_hour";
    case Family::kCount: break;
  }
  return "?";
}

void check_status(const rocksdb::Status& s, const std::string& what) {
  if (!s.ok()) throw Error(ErrorCode::kIo, what + ": " + s.ToString());
}

namespace {

// How the store comes back from a failed write. RocksDB makes a failed WAL
// write a hard error (no write until DB::Resume, which flushes the memtables
// and starts a new WAL, so nothing half-written is appended to) when the
// disk is full, but fatal (no write until the database is reopened) for any
// other I/O error, and a recovery that fails while the disk still fails
// makes it fatal too. The tenancy store is shared by every part of tenancy/
// and is never reopened while serving, so an I/O error (a corruption is not
// one) stays a hard error here, and RocksDB's own recovery, which
// retries on its schedule, is off: HeldRecords resumes it by hand
// (Store::resume) until it takes writes again.
class ResumableIoErrors final : public rocksdb::EventListener {
 public:
  const char* Name() const override { return "kvgate.ResumableIoErrors"; }
  void OnBackgroundError(rocksdb::BackgroundErrorReason, rocksdb::Status* error) override {
    if (error->IsIOError() && error->severity() > rocksdb::Status::Severity::kHardError)
      *error = rocksdb::Status(*error, rocksdb::Status::Severity::kHardError);
  }
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status, bool* auto_recovery) override {
    *auto_recovery = false;
  }
};

rocksdb::ColumnFamilyOptions family_options(Family f) {
  rocksdb::ColumnFamilyOptions o;
  // Point lookups dominate the id and digest families (idempotence checks on
  // every ledger write, authentication on every request): a bloom filter
  // answers most misses without touching an SST block.
  if (f == Family::kLedgerById || f == Family::kKeyDigests || f == Family::kApiKeys ||
      f == Family::kResponses) {
    rocksdb::BlockBasedTableOptions t;
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  }
  return o;
}

}  // namespace

Store::Store(const std::string& dir, std::shared_ptr<rocksdb::FileSystem> fs)
    : dir_(dir), env_(fs ? rocksdb::NewCompositeEnv(fs) : nullptr) {
  try {
    open();
  } catch (...) {
    close();
    throw;
  }
}

Store::~Store() { close(); }

void Store::open() {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw Error(ErrorCode::kIo, "cannot create data directory " + dir_ + ": " + ec.message());

  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  // A synced WAL write is our durability point; replaying up to the last
  // intact record after a crash is exactly "keep what was acknowledged".
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  options.keep_log_file_num = 4;
  if (env_) options.env = env_.get();
  options.listeners.push_back(std::make_shared<ResumableIoErrors>());

  std::vector<std::string> on_disk;
  const bool fresh = !rocksdb::DB::ListColumnFamilies(options, dir_, &on_disk).ok();

  std::vector<rocksdb::ColumnFamilyDescriptor> wanted;
  wanted.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions());
  for (int i = 0; i < static_cast<int>(Family::kCount); ++i) {
    wanted.emplace_back(family_name(static_cast<Family>(i)), family_options(static_cast<Family>(i)));
  }
  const size_t known = wanted.size();
  for (const std::string& name : on_disk) {
    bool is_known = false;
    for (const auto& d : wanted) is_known = is_known || d.name == name;
    if (!is_known) wanted.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }

  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  check_status(rocksdb::DB::Open(options, dir_, wanted, &handles, &raw),
               "opening tenancy store " + dir_);
  db_.reset(raw);
  default_cf_ = handles[0];
  for (size_t i = 1; i < known; ++i) handles_[i - 1] = handles[i];
  foreign_.assign(handles.begin() + static_cast<std::ptrdiff_t>(known), handles.end());
  check_schema(fresh || on_disk.size() <= 1);
}

void Store::check_schema(bool fresh) {
  const std::optional<std::string> stored = get(Family::kMeta, kSchemaKey);
  if (!stored) {
    if (!fresh) {
      throw Error(ErrorCode::kCorrupt, "tenancy store " + dir_ + " has no schema version");
    }
    rocksdb::WriteBatch batch;
    put_schema_version(&batch);
    write(&batch, /*sync=*/true);
    return;
  }
  Decoder d(*stored, 0, "schema version");
  const uint32_t version = d.u32();
  d.finish();
  if (version > kSchemaVersion) {
    throw Error(ErrorCode::kSchemaTooNew,
                "tenancy store " + dir_ + " has schema version " + std::to_string(version) +
                    "; this kvgate understands up to version " + std::to_string(kSchemaVersion) +
                    " (upgrade kvgate, or point it at another data directory)");
  }
  if (version < kOldestMigratable) {
    throw Error(ErrorCode::kCorrupt, "tenancy store " + dir_ + " has schema version " +
                                         std::to_string(version) + " and no migration exists");
  }
  opened_version_ = version;
}

void Store::put_schema_version(rocksdb::WriteBatch* batch) {
  Encoder e(0);  // meta values carry a zero format byte, then the version
  e.u32(kSchemaVersion);
  check_status(batch->Put(cf(Family::kMeta), std::string(kSchemaKey), e.take()), "schema");
}

void Store::close() noexcept {
  if (!db_) return;
  for (auto*& h : handles_) {
    if (h) db_->DestroyColumnFamilyHandle(h);
    h = nullptr;
  }
  for (auto* h : foreign_) db_->DestroyColumnFamilyHandle(h);
  foreign_.clear();
  if (default_cf_) db_->DestroyColumnFamilyHandle(default_cf_);
  default_cf_ = nullptr;
  db_->Close().PermitUncheckedError();
  db_.reset();
}

std::optional<std::string> Store::get(Family f, std::string_view key) const {
  std::string value;
  const rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), cf(f), rocksdb::Slice(key.data(), key.size()), &value);
  if (s.IsNotFound()) return std::nullopt;
  check_status(s, std::string("reading ") + family_name(f));
  return value;
}

void Store::write(rocksdb::WriteBatch* batch, bool sync) {
  rocksdb::WriteOptions wo;
  wo.sync = sync;
  check_status(db_->Write(wo, batch), "writing tenancy store " + dir_);
}

bool Store::resume() { return db_->Resume().ok(); }

}  // namespace kvgate::tenancy
