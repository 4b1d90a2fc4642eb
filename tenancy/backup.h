// A backup of the tenancy store taken while it serves: a RocksDB checkpoint,
// a consistent copy of every column family as of one moment, written to a
// directory that is itself a tenancy store (open it, or put it in place of
// <data.dir>/tenancy with the server stopped, and it is the store as it was).
// On the same file system its table files are hard links, so it costs little
// space and time until the store compacts them away; elsewhere they are
// copied. The ledger's synced writes are in it up to the moment it is taken.
//
// Thread-safety: any thread, while other threads read and write the store.
#pragma once

#include <cstdint>
#include <string>

#include "tenancy/store.h"

namespace kvgate::tenancy {

struct BackupInfo {
  std::string dir;         // the directory written (normalized, no trailing slash)
  uint64_t files = 0;      // files in the checkpoint
  uint64_t bytes = 0;      // their total size (hard-linked files counted in full)
  uint32_t schema_version = 0;
};

// Writes the checkpoint to `dir`, which must not exist (its parent is created
// when missing). Throws Error(kAlreadyExists) when it does, Error(kIo) when
// RocksDB or the file system fails; a failed checkpoint leaves no `dir`.
BackupInfo backup_store(Store& store, const std::string& dir);

}  // namespace kvgate::tenancy
