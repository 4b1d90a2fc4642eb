#include "tenancy/backup.h"

#include <rocksdb/utilities/checkpoint.h>

#include <filesystem>
#include <memory>
#include <system_error>

#include "tenancy/error.h"

namespace kvgate::tenancy {

BackupInfo backup_store(Store& store, const std::string& given) {
  namespace fs = std::filesystem;
  // "/backups/x/" names the directory x: RocksDB wants it without the slash.
  std::string dir = fs::path(given).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::error_code ec;
  if (fs::exists(dir, ec) || fs::is_symlink(dir, ec))
    throw Error(ErrorCode::kAlreadyExists, "backup directory " + dir + " exists: give a new one (nothing is overwritten)");
  const fs::path parent = fs::path(dir).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) throw Error(ErrorCode::kIo, "cannot create " + parent.string() + ": " + ec.message());
  }
  rocksdb::Checkpoint* raw = nullptr;
  check_status(rocksdb::Checkpoint::Create(store.db(), &raw), "backup of " + store.dir());
  const std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // log_size_for_flush 0: the memtables are flushed first, so the copy is
  // table files plus at most a short WAL, and opens without a long replay.
  check_status(checkpoint->CreateCheckpoint(dir, /*log_size_for_flush=*/0), "backup of " + store.dir() + " to " + dir);

  BackupInfo info;
  info.dir = dir;
  info.schema_version = Store::kSchemaVersion;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    ++info.files;
    info.bytes += e.file_size(ec);
  }
  if (ec) throw Error(ErrorCode::kIo, "backup written to " + dir + ", but listing it failed: " + ec.message());
  return info;
}

}  // namespace kvgate::tenancy
