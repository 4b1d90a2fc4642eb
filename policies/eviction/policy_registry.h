// The eviction policies by name: what `kvgate sim --policy`, the server's
// configuration and the admin API accept, and what they list.
//
// A policy is written "name" or "name:key=value,key=value", e.g.
// "s3fifo:ghost=4,window=0.5"; parameters not given take their defaults.
// Every mistake is a PolicyError whose message names the bad part and lists
// what would have been valid.
//
// Pure; any thread (the catalog is immutable).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "policies/eviction/eviction_policy.h"

namespace kvgate::policies {

struct PolicySpec {
  std::string name;
  PolicyParams params;  // only those given; see resolve_params for the effective ones
  bool operator==(const PolicySpec&) const = default;
};

struct PolicyParamInfo {
  std::string name;
  double default_value = 0;
  std::string description;
  bool integer = false;  // only whole numbers (flags are 0 or 1)
};

struct PolicyInfo {
  std::string name;
  std::string description;  // one line
  std::vector<PolicyParamInfo> params;
  // false for the offline bound (belady): it needs the future, so only the
  // simulator builds it; make_eviction_policy refuses it.
  bool online = true;
};

// Every policy, the online ones first, with their parameters and defaults.
const std::vector<PolicyInfo>& eviction_policies();
// The policy of that name, or null.
const PolicyInfo* find_eviction_policy(std::string_view name);

// "name" or "name:key=value,...". Checks the syntax, that the name is known
// and that each key is one of its parameters with a number allowed for it.
PolicySpec parse_policy_spec(std::string_view text);
// Several specs separated by commas: "lru,s3fifo:ghost=4,window=0.5,belady".
// A comma-separated part with '=' and no ':' is a further parameter of the
// spec before it.
std::vector<PolicySpec> parse_policy_list(std::string_view text);
// The spec as it would be parsed back ("s3fifo:ghost=4,window=0.5").
std::string to_string(const PolicySpec& spec);

// The spec's parameters with the defaults filled in (checked as
// parse_policy_spec checks them, for specs built in code).
PolicyParams resolve_params(const PolicySpec& spec);

// A new online policy. Throws PolicyError for an unknown name or parameter,
// a value out of range, or the offline bound.
std::unique_ptr<EvictionPolicy> make_eviction_policy(const PolicySpec& spec);

// The catalog as text, one policy a paragraph: for `--help`.
std::string describe_eviction_policies();

}  // namespace kvgate::policies
