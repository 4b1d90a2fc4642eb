// A Sink that records what a client would be sent: the text as it streams
// and the request's end (its usage, cost and whether the ledger has it).
#pragma once

#include <string>
#include <string_view>

#include "base/mutex.h"
#include "gateway/serving/pipeline.h"

namespace kvgate::serving {

class RecordingSink final : public Sink {
 public:
  void on_text(std::string_view t) override {
    MutexLock lock(mu_);
    text_ += t;
  }
  void on_done(const Served& s) override {
    {
      MutexLock lock(mu_);
      served_ = s;
      done_ = true;
    }
    cv_.notify_all();
  }
  Served wait() {
    MutexLock lock(mu_);
    while (!done_) cv_.wait(mu_);
    return served_;
  }
  std::string text() {
    MutexLock lock(mu_);
    return text_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::string text_ ABSL_GUARDED_BY(mu_);
  Served served_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kvgate::serving
