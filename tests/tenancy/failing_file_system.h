// A RocksDB file system that, while fail() is set, fails every write (new
// files, appends, flushes and syncs) as a full disk does (IOStatus::NoSpace)
// or as a failing one does (a plain I/O error). Reads go through. For the
// tests of a ledger whose disk fails.
#pragma once

#include <rocksdb/file_system.h>

#include <atomic>
#include <memory>
#include <string>

namespace kvgate::tenancy::testing {

class FailingFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  FailingFileSystem() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "FailingFileSystem"; }

  enum class Failure : int { kNone, kFull, kIoError };
  void fail(Failure f) { failing_->store(static_cast<int>(f)); }

  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r, rocksdb::IODebugContext* d) override {
    if (const int why = failing_->load()) return failure(why);
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->NewWritableFile(f, o, &file, d);
    if (s.ok()) *r = std::make_unique<File>(std::move(file), failing_);
    return s;
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                       std::unique_ptr<rocksdb::FSWritableFile>* r,
                                       rocksdb::IODebugContext* d) override {
    if (const int why = failing_->load()) return failure(why);
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->ReopenWritableFile(f, o, &file, d);
    if (s.ok()) *r = std::make_unique<File>(std::move(file), failing_);
    return s;
  }

 private:
  static rocksdb::IOStatus failure(int f) {
    return f == static_cast<int>(Failure::kFull) ? rocksdb::IOStatus::NoSpace("injected: the disk is full")
                                                   : rocksdb::IOStatus::IOError("injected: the disk fails");
  }

  class File final : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> f, std::shared_ptr<std::atomic<int>> failing)
        : FSWritableFileOwnerWrapper(std::move(f)), failing_(std::move(failing)) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* d) override {
      const int f = failing_->load();
      return f ? failure(f) : FSWritableFileOwnerWrapper::Append(data, o, d);
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                             const rocksdb::DataVerificationInfo& v, rocksdb::IODebugContext* d) override {
      const int f = failing_->load();
      return f ? failure(f) : FSWritableFileOwnerWrapper::Append(data, o, v, d);
    }
    rocksdb::IOStatus Flush(const rocksdb::IOOptions& o, rocksdb::IODebugContext* d) override {
      const int f = failing_->load();
      return f ? failure(f) : FSWritableFileOwnerWrapper::Flush(o, d);
    }
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* d) override {
      const int f = failing_->load();
      return f ? failure(f) : FSWritableFileOwnerWrapper::Sync(o, d);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* d) override {
      const int f = failing_->load();
      return f ? failure(f) : FSWritableFileOwnerWrapper::Fsync(o, d);
    }

   private:
    std::shared_ptr<std::atomic<int>> failing_;
  };

  std::shared_ptr<std::atomic<int>> failing_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace kvgate::tenancy::testing
