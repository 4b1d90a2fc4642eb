// Every file a doc names exists: the README and docs/*.md name source
// files, scripts and folders in backticks (`engine/sched/scheduler.h`,
// `tier_exchange.{h,cpp}`, `ops/test`), and a move or a deletion that
// leaves them pointing nowhere is how docs come to describe an earlier
// stage. A backticked word counts as a path when it starts with one of the
// tree's top-level folders; braces expand ({h,cpp}); a word with a
// wildcard, a placeholder (<arch>) or a line number (:42) is checked up to
// where those begin.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace kvgate {
namespace {

namespace fs = std::filesystem;
const fs::path kSourceRoot = KVGATE_SOURCE_DIR;

const std::set<std::string> kTopLevel = {"base", "cache", "cmake", "docs", "engine", "gateway", "kernels",
                                         "ops", "policies", "tenancy", "tests"};

std::vector<fs::path> docs() {
  std::vector<fs::path> out{kSourceRoot / "README.md"};
  for (const auto& e : fs::directory_iterator(kSourceRoot / "docs"))
    if (e.path().extension() == ".md") out.push_back(e.path());
  return out;
}

// `a/{b,c}.h` -> a/b.h, a/c.h (one brace group; docs use no more).
std::vector<std::string> expand(const std::string& word) {
  const size_t open = word.find('{'), close = word.find('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return {word};
  std::vector<std::string> out;
  std::stringstream alternatives(word.substr(open + 1, close - open - 1));
  for (std::string alt; std::getline(alternatives, alt, ',');)
    out.push_back(word.substr(0, open) + alt + word.substr(close + 1));
  return out;
}

// The part of a backticked word that names a file or folder, or "" when
// the word is not a path into the tree.
std::string path_part(std::string word) {
  const size_t slash = word.find('/');
  if (slash == std::string::npos || !kTopLevel.contains(word.substr(0, slash))) return "";
  if (word.find(' ') != std::string::npos) return "";  // a command line, not a path
  const size_t cut = word.find_first_of("*<:#");
  if (cut != std::string::npos) word = word.substr(0, word.rfind('/', cut) + 1);
  return word;
}

TEST(DocPaths, EveryPathADocNamesExists) {
  const std::regex backticked("`([^`\n]+)`");
  std::vector<std::string> missing;
  size_t checked = 0;
  for (const fs::path& doc : docs()) {
    std::ifstream in(doc);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      for (std::sregex_iterator it(line.begin(), line.end(), backticked), end; it != end; ++it) {
        const std::string path = path_part((*it)[1]);
        if (path.empty()) continue;
        for (const std::string& p : expand(path)) {
          ++checked;
          if (!fs::exists(kSourceRoot / p))
            missing.push_back(fs::relative(doc, kSourceRoot).string() + ":" + std::to_string(n) + ": " + p);
        }
      }
  }
  EXPECT_GT(checked, 100u) << "the check found almost no paths: is the pattern still right?";
  std::string list;
  for (const std::string& m : missing) list += "\n  " + m;
  EXPECT_TRUE(missing.empty()) << missing.size() << " paths named in docs do not exist:" << list;
}

}  // namespace
}  // namespace kvgate
