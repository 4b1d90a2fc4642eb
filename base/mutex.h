// Mutex, MutexLock, CondVar: std::mutex and std::condition_variable with
// clang's thread-safety annotations, so that the clang build's
// -Wthread-safety proves every ABSL_GUARDED_BY field is touched only with
// its mutex held (as LevelDB's port::Mutex does). ThreadSanitizer sees
// through them, std::mutex being underneath; absl::Mutex from Debian's
// uninstrumented library would hide its lock order from TSan. The
// annotation macros are abseil's (header-only).
//
// In base/, which every module may use, so that tenancy/ and cache/ hold
// the same annotated lock as engine/ and gateway/ instead of a copy.
#pragma once

#include <absl/base/thread_annotations.h>

#include <condition_variable>
#include <mutex>

namespace kvgate {

class ABSL_LOCKABLE Mutex {
 public:
  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// Callers loop on their condition, which the analysis then checks under
// the lock: `while (!ready_) cv_.wait(mu_);`
class CondVar {
 public:
  // Releases `mu` while asleep; holds it again on return (maybe spuriously).
  void wait(Mutex& mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> held(mu.mu_, std::adopt_lock);
    cv_.wait(held);
    held.release();
  }
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace kvgate
