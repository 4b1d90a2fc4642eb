#include "gateway/template/template.h"

#include <ctime>

#include "gateway/template/parser.h"

namespace kvgate::jinja {

Template Template::compile(std::string_view source) { return Template(std::make_shared<const Body>(parse(source))); }

namespace {

std::tm local_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

}  // namespace

std::string Template::render(const Value& context, const RenderOptions& options) const {
  static const DictData kEmpty;
  const DictData& vars = context.is_mapping() ? context.as_dict() : kEmpty;
  Renderer renderer(vars, options.limits, options.clock ? options.clock : Clock(local_now));
  return renderer.render(*body_);
}

}  // namespace kvgate::jinja
