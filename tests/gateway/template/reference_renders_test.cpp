// Every (template, conversation) pair of ../shared/templates rendered as
// Jinja2 renders it for Hugging Face: each `rendered` pair byte for byte,
// each `refused` pair refused with the template's own message, and the
// `unparsable` template refused at compile time.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "gateway/template/chat_context.h"
#include "gateway/template/template.h"
#include "tests/gateway/template/reference_templates.h"

namespace kvgate::jinja {
namespace {

using kvgate::testing::read_file;
using kvgate::testing::reference_conversation;
using kvgate::testing::reference_now;
using kvgate::testing::reference_pairs;
using kvgate::testing::templates_dir;

// The first byte where two texts differ, with some context, for a failure message.
std::string first_difference(const std::string& want, const std::string& got) {
  std::size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
  const std::size_t from = i > 40 ? i - 40 : 0;
  return "at byte " + std::to_string(i) + "\n  want: " + want.substr(from, 100) + "\n  got:  " + got.substr(from, 100);
}

class ReferenceRenders : public ::testing::Test {
 protected:
  const Template* compiled(const std::string& file) {
    auto it = cache_.find(file);
    if (it == cache_.end())
      it = cache_.emplace(file, Template::compile(read_file(templates_dir() + "/jinja/" + file))).first;
    return &it->second;
  }
  std::map<std::string, Template> cache_;
};

TEST_F(ReferenceRenders, EveryPairAsJinja2) {
  RenderOptions options;
  options.clock = reference_now;
  int rendered = 0, refused = 0, unparsable = 0, total_rendered = 0, total_refused = 0;
  for (const auto& pair : reference_pairs()) {
    SCOPED_TRACE(pair.template_file + " / " + pair.conversation);
    if (pair.status == "unparsable") {
      EXPECT_THROW(Template::compile(read_file(templates_dir() + "/jinja/" + pair.template_file)), TemplateError);
      ++unparsable;
      continue;
    }
    const Value context = chat_context(reference_conversation(pair.conversation));
    if (pair.status == "rendered") {
      ++total_rendered;
      try {
        const std::string got = compiled(pair.template_file)->render(context, options);
        if (got == pair.expected) {
          ++rendered;
        } else {
          ADD_FAILURE() << "render differs " << first_difference(pair.expected, got);
        }
      } catch (const TemplateError& e) {
        ADD_FAILURE() << "refused: " << e.what();
      }
      continue;
    }
    ++total_refused;
    try {
      compiled(pair.template_file)->render(context, options);
      ADD_FAILURE() << "rendered, but Jinja2 refused: " << pair.expected;
    } catch (const TemplateError& e) {
      if (std::string(e.what()) == pair.expected) {
        ++refused;
      } else {
        ADD_FAILURE() << "refused with \"" << e.what() << "\", Jinja2 with \"" << pair.expected << "\"";
      }
    }
  }
  EXPECT_EQ(total_rendered, 292);
  EXPECT_EQ(total_refused, 30);
  EXPECT_EQ(unparsable, 1);
  EXPECT_EQ(rendered, total_rendered);
  EXPECT_EQ(refused, total_refused);
  std::printf("renders matched %d/%d, refusals matched %d/%d\n", rendered, total_rendered, refused, total_refused);
}

}  // namespace
}  // namespace kvgate::jinja
