#include <gtest/gtest.h>

#include "policies/eviction/policy_error.h"
#include "policies/eviction/policy_registry.h"

namespace kvgate::policies {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const PolicyError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PolicyRegistry, ParsesANameAndParameters) {
  EXPECT_EQ(parse_policy_spec("lru"), (PolicySpec{"lru", {}}));
  EXPECT_EQ(parse_policy_spec(" s3fifo:ghost=4, window=0.25 "), (PolicySpec{"s3fifo", {{"ghost", 4}, {"window", 0.25}}}));
  EXPECT_EQ(parse_policy_spec("cost:depth_weight=1e-3"), (PolicySpec{"cost", {{"depth_weight", 0.001}}}));
}

TEST(PolicyRegistry, ErrorsNameTheBadPartAndWhatIsValid) {
  EXPECT_EQ(error_of([] { parse_policy_spec("lfu"); }),
            "unknown eviction policy 'lfu' (known: lru, s3fifo, cost, fair, reuse, convo, belady (offline, kvgate sim only))");
  EXPECT_EQ(error_of([] { parse_policy_spec(""); }).substr(0, 33), "an eviction policy needs a name (");
  EXPECT_EQ(error_of([] { parse_policy_spec("s3fifo:gohst=2"); }),
            "eviction policy 's3fifo' has no parameter 'gohst' (its parameters: small, ghost, window, step, adapt)");
  EXPECT_EQ(error_of([] { parse_policy_spec("lru:x=1"); }), "eviction policy 'lru' has no parameter 'x' (it takes none)");
  EXPECT_EQ(error_of([] { parse_policy_spec("s3fifo:ghost"); }),
            "eviction policy 's3fifo': parameter 'ghost' has no value (write ghost=VALUE)");
  EXPECT_EQ(error_of([] { parse_policy_spec("s3fifo:ghost=lots"); }),
            "eviction policy 's3fifo': parameter 'ghost': 'lots' is not a number");
  EXPECT_EQ(error_of([] { parse_policy_spec("s3fifo:ghost=1,ghost=2"); }),
            "eviction policy 's3fifo': parameter 'ghost' is given twice");
  EXPECT_EQ(error_of([] { parse_policy_spec("s3fifo:"); }),
            "eviction policy 's3fifo': nothing after ':' (write name:key=value,...)");
  EXPECT_EQ(error_of([] { parse_policy_spec("s3fifo:ghost=1,"); }),
            "eviction policy 's3fifo': an empty parameter (write key=value, separated by commas)");
  EXPECT_EQ(error_of([] { parse_policy_spec("cost:last_tier=0.5"); }),
            "eviction policy 'cost': parameter 'last_tier' must be a whole number, got 0.5");
  EXPECT_EQ(error_of([] { make_eviction_policy(parse_policy_spec("s3fifo:small=2")); }),
            "s3fifo: small must be in (0, 1), got 2");
}

TEST(PolicyRegistry, AListSplitsAtPolicyNamesNotAtParameters) {
  const auto list = parse_policy_list("lru,s3fifo:ghost=4,window=0.5,cost:depth_weight=0,belady");
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[1], (PolicySpec{"s3fifo", {{"ghost", 4}, {"window", 0.5}}}));
  EXPECT_EQ(list[2], (PolicySpec{"cost", {{"depth_weight", 0}}}));
  EXPECT_EQ(list[3].name, "belady");
  EXPECT_EQ(error_of([] { parse_policy_list("ghost=4,lru"); }), "'ghost=4' is a parameter with no policy before it");
  EXPECT_EQ(error_of([] { parse_policy_list("lru,,s3fifo"); }), "an empty policy in the list 'lru,,s3fifo'");
}

TEST(PolicyRegistry, ASpecPrintsAsItParses) {
  for (const char* text : {"lru", "s3fifo:ghost=4,window=0.5", "cost:depth_weight=0.001"})
    EXPECT_EQ(to_string(parse_policy_spec(text)), text);
}

TEST(PolicyRegistry, EveryOnlinePolicyIsBuiltWithItsDefaults) {
  for (const PolicyInfo& info : eviction_policies()) {
    if (!info.online) continue;
    auto p = make_eviction_policy({info.name, {}});
    EXPECT_EQ(p->name(), info.name);
    PolicyParams defaults;
    for (const auto& param : info.params) defaults[param.name] = param.default_value;
    EXPECT_EQ(p->params(), defaults) << info.name;
    EXPECT_EQ(resolve_params({info.name, {}}), defaults);
  }
  EXPECT_EQ(make_eviction_policy(parse_policy_spec("s3fifo:ghost=5"))->params().at("ghost"), 5);
}

TEST(PolicyRegistry, TheDescriptionListsEveryPolicyAndParameter) {
  const std::string text = describe_eviction_policies();
  for (const PolicyInfo& info : eviction_policies()) {
    EXPECT_NE(text.find("  " + info.name + ": "), std::string::npos) << info.name;
    for (const auto& param : info.params) EXPECT_NE(text.find(param.name + "="), std::string::npos) << param.name;
  }
  EXPECT_NE(text.find("ghost=3  "), std::string::npos);
}

}  // namespace
}  // namespace kvgate::policies
