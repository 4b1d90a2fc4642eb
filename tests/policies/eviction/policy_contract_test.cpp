// What every eviction policy promises the cache, checked on random event
// sequences against a model of each entry's state: a victim is always a
// candidate, candidates() counts them, a removed entry is forgotten, and
// eviction_order() lists exactly the candidates in the order successive
// victims come out.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "policies/eviction/belady_policy.h"
#include "policies/eviction/policy_registry.h"

namespace kvgate::policies {
namespace {

enum class State { kAbsent, kReferenced, kCandidate };

std::unique_ptr<EvictionPolicy> make(const std::string& name) {
  if (name == "belady") return make_belady_policy();
  return make_eviction_policy(parse_policy_spec(name));
}

// The specs under test: every catalog entry with its defaults, and a few
// parameter settings that change the structure.
std::vector<std::string> specs() {
  std::vector<std::string> out;
  for (const auto& p : eviction_policies()) out.push_back(p.name);
  out.push_back("s3fifo:adapt=0,small=0.5");
  out.push_back("s3fifo:ghost=0");
  out.push_back("cost:depth_weight=0");
  out.push_back("cost:last_tier=1");
  return out;
}

class PolicyContract : public ::testing::TestWithParam<std::string> {};

void check_order_drains(EvictionPolicy& p, std::map<EntryId, State>& model) {
  const std::vector<EntryId> order = p.eviction_order();
  std::set<EntryId> want;
  for (const auto& [id, s] : model)
    if (s == State::kCandidate) want.insert(id);
  ASSERT_EQ(std::set<EntryId>(order.begin(), order.end()), want);
  ASSERT_EQ(order.size(), want.size()) << "an entry listed twice";
  for (EntryId id : order) {
    ASSERT_EQ(p.victim(), id);
    p.on_remove(id);
    model[id] = State::kAbsent;
  }
  EXPECT_EQ(p.victim(), std::nullopt);
  EXPECT_EQ(p.candidates(), 0);
}

TEST_P(PolicyContract, RandomSequencesKeepThePromises) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    auto p = make(GetParam());
    auto* belady = dynamic_cast<BeladyPolicy*>(p.get());
    std::map<EntryId, State> model;
    const EntryId ids = 24;
    for (EntryId id = 0; id < ids; ++id) model[id] = State::kAbsent;
    for (int step = 0; step < 600; ++step) {
      const EntryId id = static_cast<EntryId>(rng() % ids);
      State& s = model[id];
      const uint32_t what = rng() % 10;
      if (s == State::kAbsent) {
        // Keys repeat across ids so that ghosts come back under another id.
        p->on_insert(id, {static_cast<int32_t>(rng() % 6), rng() % 3, 4096,
                          static_cast<Tier>(rng() % 3), 1 + rng() % 40});
        s = State::kReferenced;
      } else if (s == State::kReferenced) {
        p->on_release(id);
        s = State::kCandidate;
      } else if (what < 4) {
        p->on_hit(id);
        s = State::kReferenced;
      } else if (what < 6) {
        p->on_remove(id);
        s = State::kAbsent;
      }
      if (belady && s != State::kAbsent && what == 9) belady->set_next_use(id, rng() % 50);
      // Sometimes the cache evicts.
      if (rng() % 4 == 0) {
        const std::optional<EntryId> v = p->victim();
        const int64_t candidates = std::ranges::count(model, State::kCandidate, &std::pair<const EntryId, State>::second);
        ASSERT_EQ(p->candidates(), candidates);
        ASSERT_EQ(v.has_value(), candidates > 0);
        if (v) {
          ASSERT_EQ(model[*v], State::kCandidate) << "victim " << *v << " is not a candidate";
          p->on_remove(*v);
          model[*v] = State::kAbsent;
        }
      }
    }
    check_order_drains(*p, model);
  }
}

TEST_P(PolicyContract, AnEmptyPolicyHasNoVictim) {
  auto p = make(GetParam());
  EXPECT_EQ(p->victim(), std::nullopt);
  EXPECT_EQ(p->candidates(), 0);
  EXPECT_TRUE(p->eviction_order().empty());
  p->on_insert(0, {0, 0, 1, Tier::kDevice, 7});
  EXPECT_EQ(p->victim(), std::nullopt) << "a referenced entry is no candidate";
  p->on_release(0);
  EXPECT_EQ(p->victim(), 0);
  p->on_remove(0);
  EXPECT_EQ(p->victim(), std::nullopt);
}

TEST_P(PolicyContract, UnknownIdsAreRefused) {
  auto p = make(GetParam());
  EXPECT_THROW(p->on_insert(-1, {}), std::invalid_argument);
  EXPECT_THROW(p->on_release(1000), std::invalid_argument);
  EXPECT_THROW(p->on_hit(1000), std::invalid_argument);
}

TEST_P(PolicyContract, ParamsAreTheCatalogsWithTheGivenOnesApplied) {
  const PolicySpec spec = parse_policy_spec(GetParam());
  auto p = make(GetParam());
  EXPECT_EQ(p->name(), spec.name);
  EXPECT_EQ(p->params(), resolve_params(spec));
}

INSTANTIATE_TEST_SUITE_P(All, PolicyContract, ::testing::ValuesIn(specs()), [](const auto& param_info) {
  std::string n = param_info.param;
  std::ranges::replace_if(n, [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
});

}  // namespace
}  // namespace kvgate::policies
