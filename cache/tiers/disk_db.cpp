#include "cache/tiers/disk_db.h"

#include <rocksdb/options.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace kvgate::cache::detail {
namespace {

constexpr char kRecordsFamily[] = "records";
constexpr char kIndexFamily[] = "index";

constexpr size_t kIndexValueBytes = 1 + 8 + 8 + 4 + 8 + 8;

template <class T>
void put_le(char* p, T v) {
  std::memcpy(p, &v, sizeof v);  // little-endian hosts only (block_record.cpp asserts it)
}
template <class T>
T get_le(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

rocksdb::ColumnFamilyOptions records_options() {
  rocksdb::ColumnFamilyOptions o;
  // Records are hundreds of KB of K/V: into blob files, so compactions move
  // 50-byte references, not the values. K/V does not compress; skip trying.
  o.enable_blob_files = true;
  o.min_blob_size = 4096;
  o.blob_file_size = uint64_t{256} << 20;
  o.blob_compression_type = rocksdb::kNoCompression;
  // A cache churns: every blob file is eligible for garbage collection, and
  // one whose values are mostly deleted forces a compaction, so the disk
  // holds about what the index says rather than every record ever written.
  o.enable_blob_garbage_collection = true;
  o.blob_garbage_collection_age_cutoff = 1.0;
  o.blob_garbage_collection_force_threshold = 0.5;
  o.compression = rocksdb::kNoCompression;
  o.write_buffer_size = size_t{32} << 20;
  return o;
}

}  // namespace

std::string encode_index(const IndexValue& v) {
  std::string s(kIndexValueBytes, '\0');
  s[0] = 1;
  put_le(s.data() + 1, v.digest);
  put_le(s.data() + 9, v.owner);
  put_le(s.data() + 17, v.depth);
  put_le(s.data() + 21, v.bytes);
  put_le(s.data() + 29, v.seq);
  return s;
}

std::optional<IndexValue> decode_index(const rocksdb::Slice& s) {
  if (s.size() != kIndexValueBytes || s[0] != 1) return std::nullopt;
  IndexValue v;
  v.digest = get_le<uint64_t>(s.data() + 1);
  v.owner = get_le<uint64_t>(s.data() + 9);
  v.depth = get_le<int32_t>(s.data() + 17);
  v.bytes = get_le<uint64_t>(s.data() + 21);
  v.seq = get_le<uint64_t>(s.data() + 29);
  return v;
}

void DiskDb::close() {
  if (!db) return;
  for (auto* h : all) db->DestroyColumnFamilyHandle(h);
  all.clear();
  records = index = nullptr;
  db->Close().PermitUncheckedError();
  delete db;
  db = nullptr;
}

rocksdb::Status DiskDb::open(const std::string& dir, rocksdb::Env* env, bool read_only) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return rocksdb::Status::IOError("cannot create the directory", ec.message());
  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  // sync=false writes: what reached the WAL in the OS survives a kill -9;
  // after a crash, replay up to the last intact record.
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  options.keep_log_file_num = 4;
  options.max_background_jobs = 2;
  // The index family's memtable is tiny and would hold on to every WAL file
  // (a WAL is deleted only once every family's data in it is flushed): past
  // this much WAL the families holding the oldest are flushed.
  options.max_total_wal_size = uint64_t{96} << 20;
  if (env) options.env = env;

  std::vector<std::string> on_disk;
  rocksdb::DB::ListColumnFamilies(options, dir, &on_disk).PermitUncheckedError();  // fails for a fresh dir
  std::vector<rocksdb::ColumnFamilyDescriptor> wanted;
  wanted.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions());
  wanted.emplace_back(kRecordsFamily, records_options());
  wanted.emplace_back(kIndexFamily, rocksdb::ColumnFamilyOptions());
  for (const std::string& name : on_disk)
    if (std::none_of(wanted.begin(), wanted.end(), [&](const auto& d) { return d.name == name; }))
      wanted.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::Status s = read_only ? rocksdb::DB::OpenForReadOnly(options, dir, wanted, &handles, &db)
                                : rocksdb::DB::Open(options, dir, wanted, &handles, &db);
  if (!s.ok()) {
    db = nullptr;
    return s;
  }
  all = handles;
  records = handles[1];
  index = handles[2];
  return s;
}

}  // namespace kvgate::cache::detail
