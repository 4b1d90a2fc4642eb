#include "engine/grammar/grammar_cache.h"

#include <boost/json.hpp>

namespace kvgate::grammar {

GrammarCache::GrammarCache(size_t capacity, SchemaCaps caps) : capacity_(capacity), caps_(caps) {}

uint64_t GrammarCache::digest(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (char c : text) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::shared_ptr<const Grammar> GrammarCache::find(uint64_t key, const std::string& text) {
  MutexLock lock(mu_);
  auto [b, e] = entries_.equal_range(key);
  for (auto it = b; it != e; ++it)
    if (it->second.text == text) {
      ++hits_;
      return it->second.grammar;
    }
  ++misses_;
  return nullptr;
}

void GrammarCache::insert(uint64_t key, const std::string& text, std::shared_ptr<const Grammar> g) {
  MutexLock lock(mu_);
  auto [b, e] = entries_.equal_range(key);
  for (auto it = b; it != e; ++it)
    if (it->second.text == text) return;  // compiled meanwhile by another thread
  while (entries_.size() >= capacity_ && !order_.empty()) {
    const uint64_t old = order_.front();
    order_.pop_front();
    if (auto it = entries_.find(old); it != entries_.end()) entries_.erase(it);
  }
  entries_.emplace(key, Entry{text, std::move(g)});
  order_.push_back(key);
}

std::shared_ptr<const Grammar> GrammarCache::get(const boost::json::value& spec) {
  const std::string text = boost::json::serialize(spec);
  const uint64_t key = digest(text);
  if (auto g = find(key, text)) return g;
  auto g = compile_spec(spec, caps_);
  insert(key, text, g);
  return g;
}

size_t GrammarCache::size() const {
  MutexLock lock(mu_);
  return entries_.size();
}
uint64_t GrammarCache::hits() const {
  MutexLock lock(mu_);
  return hits_;
}
uint64_t GrammarCache::misses() const {
  MutexLock lock(mu_);
  return misses_;
}

}  // namespace kvgate::grammar
