#include "engine/text/stop_strings.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/error.h"

namespace kvgate {
namespace {

struct Outcome {
  std::string emitted;
  bool stopped = false;
  std::string matched;
};

// Streams `pieces` through a StopStrings as a server would, flushing at the end.
Outcome run(std::vector<std::string> stops, const std::vector<std::string>& pieces) {
  StopStrings s(std::move(stops));
  Outcome o;
  for (const std::string& p : pieces) {
    StopStrings::Step step = s.push(p);
    o.emitted += step.emit;
    if (step.stopped) {
      o.stopped = true;
      o.matched = step.matched;
    }
  }
  o.emitted += s.flush();
  return o;
}

std::vector<std::string> chars(const std::string& text) {
  std::vector<std::string> out;
  for (char c : text) out.emplace_back(1, c);
  return out;
}

TEST(StopStrings, NoStopStringsPassEverythingThrough) {
  StopStrings s;
  EXPECT_EQ(s.push("Hello").emit, "Hello");
  EXPECT_EQ(s.push(", world").emit, ", world");
  EXPECT_EQ(s.flush(), "");
  EXPECT_FALSE(s.stopped());
  EXPECT_EQ(run({"", ""}, {"a", "b"}).emitted, "ab");  // empty stops are ignored
}

TEST(StopStrings, MatchInOnePieceCutsItAndEverythingAfter) {
  Outcome o = run({"###"}, {"The end.### More", " text"});
  EXPECT_TRUE(o.stopped);
  EXPECT_EQ(o.matched, "###");
  EXPECT_EQ(o.emitted, "The end.");
}

TEST(StopStrings, MatchAcrossPieceBoundariesIsHeldBackThenCut) {
  StopStrings s({"\nUser:"});
  EXPECT_EQ(s.push("Sure.").emit, "Sure.");
  EXPECT_EQ(s.push("\nUs").emit, "");  // could be the start of the stop
  StopStrings::Step last = s.push("er: hi");
  EXPECT_TRUE(last.stopped);
  EXPECT_EQ(last.emit, "");
  EXPECT_EQ(last.matched, "\nUser:");
  EXPECT_EQ(s.push("more").emit, "");  // nothing after a stop
  EXPECT_EQ(s.flush(), "");
}

TEST(StopStrings, FalseStartIsReleasedWhenItStopsMatching) {
  StopStrings s({"STOP"});
  EXPECT_EQ(s.push("ST").emit, "");
  EXPECT_EQ(s.push("OCK").emit, "STOCK");
  EXPECT_EQ(s.push("S").emit, "");
  EXPECT_EQ(s.flush(), "S");  // generation ended for another reason
  EXPECT_FALSE(s.stopped());
}

TEST(StopStrings, HoldsOnlyTheLongestPossiblePrefix) {
  StopStrings s({"abcd", "xy"});
  EXPECT_EQ(s.push("zzab").emit, "zz");
  EXPECT_EQ(s.push("cx").emit, "abc");  // "abcx" no longer starts "abcd"; "x" may start "xy"
  EXPECT_EQ(s.flush(), "x");
}

TEST(StopStrings, OverlappingCandidatesFirstToEndWins) {
  // "bc" ends before "abcd" would, whatever the chunking.
  for (auto pieces : {std::vector<std::string>{"xabcd"}, chars("xabcd"), std::vector<std::string>{"xa", "bcd"}}) {
    Outcome o = run({"abcd", "bc"}, pieces);
    EXPECT_EQ(o.matched, "bc");
    EXPECT_EQ(o.emitted, "xa");
  }
  // Two ending at the same place: the longer one, which starts first.
  Outcome o = run({"c", "abc"}, {"zab", "c!"});
  EXPECT_EQ(o.matched, "abc");
  EXPECT_EQ(o.emitted, "z");
  // A repeated-prefix stop string whose first partial match fails.
  Outcome r = run({"aab"}, chars("xaaab"));
  EXPECT_EQ(r.matched, "aab");
  EXPECT_EQ(r.emitted, "xa");
}

TEST(StopStrings, ResultDoesNotDependOnChunking) {
  const std::string text = "one two <|end|> three";
  const std::vector<std::string> stops{"<|end|>", "<|e", "tw0", "three"};
  Outcome whole = run(stops, {text});
  EXPECT_EQ(whole.emitted, "one two ");
  EXPECT_EQ(whole.matched, "<|e");
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    Outcome o = run(stops, {text.substr(0, cut), text.substr(cut)});
    EXPECT_EQ(o.emitted, whole.emitted) << "cut at " << cut;
    EXPECT_EQ(o.matched, whole.matched) << "cut at " << cut;
  }
  EXPECT_EQ(run(stops, chars(text)).emitted, whole.emitted);
}

// Against the definition, on texts and stops over a two-letter alphabet
// (borders everywhere, the case KMP's failure links exist for), in pieces
// of random sizes: the emitted text is everything before the first match to
// end (the longest of those ending together), or all of it.
TEST(StopStrings, MatchesTheDefinitionOnRandomTexts) {
  std::mt19937 rng(11);
  auto word = [&](size_t n) {
    std::string w;
    for (size_t i = 0; i < n; ++i) w += "ab"[rng() % 2];
    return w;
  };
  for (int round = 0; round < 3000; ++round) {
    std::vector<std::string> stops;
    for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) stops.push_back(word(1 + rng() % 6));
    const std::string text = word(rng() % 24);
    size_t end = std::string::npos, start = 0;
    std::string matched;
    for (const std::string& st : stops) {
      const size_t at = text.find(st);
      if (at == std::string::npos) continue;
      if (at + st.size() < end || (at + st.size() == end && at < start)) {
        end = at + st.size(), start = at, matched = st;
      }
    }
    std::vector<std::string> pieces;
    for (size_t i = 0; i < text.size();) {
      const size_t n = std::min<size_t>(text.size() - i, 1 + rng() % 4);
      pieces.push_back(text.substr(i, n));
      i += n;
    }
    const Outcome o = run(stops, pieces);
    ASSERT_EQ(o.emitted, matched.empty() ? text : text.substr(0, start)) << text;
    ASSERT_EQ(o.matched, matched) << text;
  }
}

// A long stop string with a long border costs a pass over the text, not a
// search per piece (40,000 one-byte pieces against a 20,001-byte stop:
// quadratic work per piece would be 10^13 steps).
TEST(StopStrings, ALongStopStringStaysLinear) {
  StopStrings s({std::string(20000, 'a') + "b"});
  size_t emitted = 0;
  for (int i = 0; i < 40000; ++i) emitted += s.push("a").emit.size();
  EXPECT_EQ(emitted, 20000u);  // the last 20,000 a's may still begin the stop
  const StopStrings::Step last = s.push("b");
  EXPECT_TRUE(last.stopped);
  EXPECT_EQ(last.emit, "");
}

TEST(StopStrings, MultibyteTextIsNeverSplit) {
  // "é" is two bytes; the held suffix starts where the stop does.
  StopStrings s({"éx"});
  EXPECT_EQ(s.push("caf\xc3\xa9").emit, "caf");
  EXPECT_EQ(s.push("!").emit, "\xc3\xa9!");
}

}  // namespace
}  // namespace kvgate
