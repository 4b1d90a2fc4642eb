// ../shared/templates read for the tests: the 47 real chat templates, the
// seven conversations, and Jinja2's verdict on every pair (index.json).
#pragma once

#include <ctime>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "tests/shared_data.h"

namespace kvgate::testing {

struct ReferencePair {
  std::string template_file;  // "Qwen-Qwen2.5-7B-Instruct.jinja"
  std::string conversation;   // "tools"
  std::string status;         // rendered, refused, unparsable
  std::string expected;       // the render (rendered) or Jinja2's message (refused, unparsable)
};

inline std::string templates_dir() { return shared_path("templates"); }

inline std::vector<ReferencePair> reference_pairs() {
  const boost::json::value index = boost::json::parse(read_file(templates_dir() + "/expected/index.json"));
  std::vector<ReferencePair> pairs;
  for (const auto& entry : index.as_array()) {
    const auto& o = entry.as_object();
    ReferencePair p;
    p.template_file = std::string(o.at("template").as_string());
    p.conversation = o.at("conversation").is_string() ? std::string(o.at("conversation").as_string()) : "";
    p.status = std::string(o.at("status").as_string());
    if (p.status == "rendered") {
      p.expected = read_file(templates_dir() + "/expected/" + std::string(o.at("file").as_string()));
    } else {
      p.expected = std::string(o.at("error").as_string());
    }
    pairs.push_back(std::move(p));
  }
  return pairs;
}

inline boost::json::object reference_conversation(const std::string& name) {
  static const boost::json::value all = boost::json::parse(read_file(templates_dir() + "/conversations.json"));
  for (const auto& c : all.as_array())
    if (c.as_object().at("name").as_string() == name) return c.as_object();
  throw std::runtime_error("no conversation " + name);
}

// The reference renders' clock: 2026-07-26 12:00:00 (a Sunday).
inline std::tm reference_now() {
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 6;
  tm.tm_mday = 26;
  tm.tm_hour = 12;
  tm.tm_wday = 0;
  tm.tm_yday = 206;
  return tm;
}

}  // namespace kvgate::testing
