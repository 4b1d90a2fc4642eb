// Compiled grammars by the digest of their spec's canonical text
// (grammar_spec.h), so a schema compiles once however many requests send
// it (an agent loop sends the same one every turn). The canonical text is
// the compact serialization with keys in the order written: the order of
// `properties` is the order in which they are generated, so it is part of
// the grammar.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include <boost/json/value.hpp>

#include "base/mutex.h"
#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_spec.h"

namespace kvgate::grammar {

class GrammarCache {
 public:
  explicit GrammarCache(size_t capacity = 256, SchemaCaps caps = {});

  // The grammar of `spec`, compiled on first use (outside the lock, so
  // one slow schema does not hold up the others). A spec that does not
  // compile throws each time and is not kept.
  std::shared_ptr<const Grammar> get(const boost::json::value& spec);

  // FNV-1a, 64 bits: a key, not a security boundary (texts are compared too).
  static uint64_t digest(std::string_view canonical_text);

  size_t size() const;
  uint64_t hits() const;
  uint64_t misses() const;

 private:
  struct Entry {
    std::string text;
    std::shared_ptr<const Grammar> grammar;
  };
  std::shared_ptr<const Grammar> find(uint64_t key, const std::string& text);
  void insert(uint64_t key, const std::string& text, std::shared_ptr<const Grammar> g);

  const size_t capacity_;
  const SchemaCaps caps_;
  mutable Mutex mu_;
  std::unordered_multimap<uint64_t, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::deque<uint64_t> order_ ABSL_GUARDED_BY(mu_);  // oldest first: dropped when full
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kvgate::grammar
