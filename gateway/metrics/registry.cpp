#include "gateway/metrics/registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <regex>

namespace kvgate::metrics {
namespace {

bool valid_metric_name(const std::string& s) {
  static const std::regex re("[a-zA-Z_:][a-zA-Z0-9_:]*");
  return std::regex_match(s, re);
}

bool valid_label_name(const std::string& s) {
  static const std::regex re("[a-zA-Z_][a-zA-Z0-9_]*");
  return std::regex_match(s, re) && !s.starts_with("__");
}

// HELP text escapes backslash and newline; label values also the quote.
void append_escaped(std::string& out, std::string_view s, bool quote) {
  for (const char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (quote && c == '"') out += "\\\"";
    else out += c;
  }
}

void append_double(std::string& out, double v) {
  if (std::isnan(v)) { out += "NaN"; return; }
  if (std::isinf(v)) { out += v > 0 ? "+Inf" : "-Inf"; return; }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  out.append(buf, r.ptr);
}

// An integer count in units of 10^-decimals, printed exactly ("1.234567").
void append_fixed(std::string& out, uint64_t v, int decimals) {
  std::string digits = std::to_string(v);
  if (decimals == 0) { out += digits; return; }
  if (digits.size() <= static_cast<size_t>(decimals)) digits.insert(0, decimals + 1 - digits.size(), '0');
  out.append(digits, 0, digits.size() - decimals);
  out += '.';
  out.append(digits, digits.size() - decimals);
}

// `{a="x",b="y"}`, with an extra label (le) when given; nothing for no labels.
void append_labels(std::string& out, const FamilyInfo& info, std::span<const std::string> values,
                   std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (values.empty() && extra_name.empty()) return;
  out += '{';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += info.label_names[i];
    out += "=\"";
    append_escaped(out, values[i], true);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!values.empty()) out += ',';
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  out += '}';
}

void append_header(std::string& out, const FamilyInfo& info, const char* type) {
  out += "# HELP ";
  out += info.name;
  out += ' ';
  append_escaped(out, info.help, false);
  out += "\n# TYPE ";
  out += info.name;
  out += ' ';
  out += type;
  out += '\n';
}

void expose_family(std::string& out, const Family<Counter>& f) {
  append_header(out, f.info(), "counter");
  f.each([&](std::span<const std::string> labels, const Counter& c) {
    out += f.info().name;
    append_labels(out, f.info(), labels);
    out += ' ';
    append_fixed(out, c.value(), f.info().decimals);
    out += '\n';
  });
}

void expose_family(std::string& out, const Family<Gauge>& f) {
  append_header(out, f.info(), "gauge");
  f.each([&](std::span<const std::string> labels, const Gauge& g) {
    out += f.info().name;
    append_labels(out, f.info(), labels);
    out += ' ';
    append_double(out, g.value());
    out += '\n';
  });
}

void expose_family(std::string& out, const Family<Histogram>& f) {
  append_header(out, f.info(), "histogram");
  const std::string& name = f.info().name;
  f.each([&](std::span<const std::string> labels, const Histogram& h) {
    const std::vector<uint64_t> counts = h.cumulative_counts();
    for (size_t i = 0; i < counts.size(); ++i) {
      std::string le;
      if (i < h.bounds().size()) append_double(le, h.bounds()[i]);
      else le = "+Inf";
      out += name;
      out += "_bucket";
      append_labels(out, f.info(), labels, "le", le);
      out += ' ';
      out += std::to_string(counts[i]);
      out += '\n';
    }
    out += name;
    out += "_sum";
    append_labels(out, f.info(), labels);
    out += ' ';
    append_double(out, h.sum());
    out += '\n';
    out += name;
    out += "_count";
    append_labels(out, f.info(), labels);
    out += ' ';
    // The +Inf bucket, not count(): the two agree once writers are quiet,
    // and Prometheus requires _count == the +Inf bucket in every scrape.
    out += std::to_string(counts.back());
    out += '\n';
  });
}

}  // namespace

void Registry::check_new(const FamilyInfo& info) {
  if (!valid_metric_name(info.name)) throw Error("metric name '" + info.name + "' is not a Prometheus name");
  for (const std::string& l : info.label_names)
    if (!valid_label_name(l) || l == "le") throw Error(info.name + ": label name '" + l + "' is not allowed");
  if (std::find(names_.begin(), names_.end(), info.name) != names_.end())
    throw Error("metric '" + info.name + "' registered twice");
  if (info.decimals < 0 || info.decimals > 9) throw Error(info.name + ": decimals must be 0..9");
  names_.push_back(info.name);
}

Family<Counter>& Registry::counter(FamilyInfo info) {
  check_new(info);
  return std::get<Family<Counter>>(families_.emplace_back(
      std::in_place_type<Family<Counter>>, std::move(info), kDefaultMaxSeries,
      [] { return std::make_unique<Counter>(); }));
}

Family<Gauge>& Registry::gauge(FamilyInfo info) {
  check_new(info);
  return std::get<Family<Gauge>>(families_.emplace_back(
      std::in_place_type<Family<Gauge>>, std::move(info), kDefaultMaxSeries, [] { return std::make_unique<Gauge>(); }));
}

Family<Histogram>& Registry::histogram(FamilyInfo info, std::vector<double> bounds) {
  if (bounds.empty() || !std::all_of(bounds.begin(), bounds.end(), [](double b) { return std::isfinite(b); }) ||
      std::adjacent_find(bounds.begin(), bounds.end(), std::greater_equal<>()) != bounds.end())
    throw Error(info.name + ": bucket bounds must be finite and strictly increasing");
  check_new(info);
  auto shared = std::make_shared<const std::vector<double>>(std::move(bounds));
  return std::get<Family<Histogram>>(families_.emplace_back(
      std::in_place_type<Family<Histogram>>, std::move(info), kDefaultMaxSeries,
      [shared] { return std::make_unique<Histogram>(shared); }));
}

std::string Registry::expose() const {
  std::string out;
  for (const AnyFamily& f : families_) std::visit([&](const auto& fam) { expose_family(out, fam); }, f);
  return out;
}

}  // namespace kvgate::metrics
