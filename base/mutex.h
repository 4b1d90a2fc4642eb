// Mutex, MutexLock, MutexUnlock, CondVar, SharedMutex: std::mutex,
// std::condition_variable and std::shared_mutex with clang's thread-safety
// annotations, so that the clang build's -Wthread-safety proves every
// ABSL_GUARDED_BY field is touched only with its mutex held (as LevelDB's
// port::Mutex does). ThreadSanitizer sees through them, the std types being
// underneath; absl::Mutex from Debian's uninstrumented library would hide
// its lock order from TSan. The annotation macros are abseil's (header-only).
//
// In base/, which every module may use, so that tenancy/ and cache/ hold
// the same annotated lock as engine/ and gateway/ instead of a copy.
#pragma once

#include <absl/base/thread_annotations.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

// A scoped guard that releases in its constructor must say which kind of
// hold it gives up: clang ignores the generic ABSL_UNLOCK_FUNCTION there,
// and abseil has no macro for the exclusive form.
#if defined(__clang__)
#define KVGATE_RELEASE_CAPABILITY(...) __attribute__((release_capability(__VA_ARGS__)))
#else
#define KVGATE_RELEASE_CAPABILITY(...)
#endif

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

// The other way round, for work done outside a lock held around it: `mu`
// is released for the guard's scope and held again after it (also when an
// exception leaves the scope).
class ABSL_SCOPED_LOCKABLE MutexUnlock {
 public:
  explicit MutexUnlock(Mutex& mu) KVGATE_RELEASE_CAPABILITY(mu) : mu_(mu) { mu_.unlock(); }
  ~MutexUnlock() ABSL_UNLOCK_FUNCTION() { mu_.lock(); }
  MutexUnlock(const MutexUnlock&) = delete;
  MutexUnlock& operator=(const MutexUnlock&) = delete;

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
  // As wait(), until `deadline` at the latest: false once it has passed.
  // `while (!ready_) if (!cv_.wait_until(mu_, deadline)) return ready_;`
  template <class Clock, class Duration>
  bool wait_until(Mutex& mu, const std::chrono::time_point<Clock, Duration>& deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> held(mu.mu_, std::adopt_lock);
    const std::cv_status woke = cv_.wait_until(held, deadline);
    held.release();
    return woke == std::cv_status::no_timeout;
  }
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

// Readers share it, a writer holds it alone: ABSL_GUARDED_BY fields may be
// read under either lock and written only under WriterMutexLock.
class ABSL_LOCKABLE SharedMutex {
 public:
  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  void lock_shared() ABSL_SHARED_LOCK_FUNCTION() { mu_.lock_shared(); }
  void unlock_shared() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

class ABSL_SCOPED_LOCKABLE ReaderMutexLock {
 public:
  explicit ReaderMutexLock(SharedMutex& mu) ABSL_SHARED_LOCK_FUNCTION(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderMutexLock() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

class ABSL_SCOPED_LOCKABLE WriterMutexLock {
 public:
  explicit WriterMutexLock(SharedMutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_.lock(); }
  ~WriterMutexLock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

}  // namespace kvgate
