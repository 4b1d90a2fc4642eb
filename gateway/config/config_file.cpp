// The TOML walk: toml++ parses the text (and reports syntax errors with a
// position); this file maps each [table] key = value onto the option table,
// rejecting what the table does not know. Nothing here throws past
// add_toml_layer() but kvgate::Error: toml++'s parse_error is turned into a
// problem line like every other.
#include "gateway/config/config_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include <toml++/toml.h>

#include "base/error.h"
#include "gateway/config/byte_size.h"
#include "gateway/config/nearest_name.h"

namespace kvgate::config {
namespace {

constexpr size_t kMaxFileBytes = 1 << 20;

Origin where(std::string_view source, const toml::source_region& r) {
  Origin o{std::string(source), r.begin.line, r.begin.column};
  if (r.begin.line > 0) o.where.append(":").append(std::to_string(r.begin.line)).append(":").append(std::to_string(r.begin.column));
  return o;
}

std::string_view type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a floating-point number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

std::vector<std::string> table_names() {
  std::vector<std::string> out;
  for (std::string_view t : option_tables()) out.emplace_back(t);
  return out;
}

// Names for a suggestion: the keys of `table`, or every option's full name.
std::vector<std::string> key_names(std::string_view table) {
  std::vector<std::string> out;
  for (const Option& o : all_options())
    if (table.empty()) out.push_back(o.name());
    else if (o.table == table) out.emplace_back(o.key);
  return out;
}

// "; did you mean server.io_threads?" for a key typed into [table] (or at
// the top level when `table` is empty), or nothing.
std::string suggest_key(std::string_view table, std::string_view key) {
  if (!table.empty())
    if (auto near = nearest_name(key, key_names(table))) return "; did you mean " + std::string(table) + "." + *near + "?";
  // The right key in the wrong table: backend under [server].
  for (const Option& o : all_options())
    if (o.key == key) return "; did you mean " + o.name() + " (in [" + std::string(o.table) + "])?";
  std::vector<std::string> leaves;
  for (const Option& o : all_options()) leaves.emplace_back(o.key);
  if (auto near = nearest_name(key, leaves))
    for (const Option& o : all_options())
      if (o.key == *near) return "; did you mean " + o.name() + "?";
  return {};
}

// Keys reach messages verbatim only when short and printable; anything else
// (a fuzzer's bytes, a quoted key with escapes) is shown shortened.
std::string printable(std::string_view s) {
  std::string out;
  for (char ch : s.substr(0, 64)) out.push_back(static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f ? '?' : ch);
  if (s.size() > 64) out.append("...");
  return out;
}

std::string quoted(std::string_view s) {
  std::string out(1, '\'');
  out.append(printable(s)).push_back('\'');
  return out;
}

// The node as a value of o's kind, or why it is not one.
bool read_value(const Option& o, const toml::node& n, OptionValue& out, std::string& why) {
  auto wrong_type = [&] {
    why = o.name() + " must be " + std::string(kind_description(o.kind)) + ", not " + std::string(type_name(n));
    return false;
  };
  switch (o.kind) {
    case OptionKind::kBool:
      if (const auto* b = n.as_boolean()) return out = b->get(), true;
      return wrong_type();
    case OptionKind::kInt:
      if (const auto* i = n.as_integer()) return out = i->get(), true;
      return wrong_type();
    case OptionKind::kBytes:
      if (const auto* i = n.as_integer()) {
        // kAutoBytes is what "auto" reads as, never what an integer means.
        if (o.allow_auto && i->get() == kAutoBytes) {
          why = o.name() + " must be at least " + format_byte_size(o.min) + " or \"auto\" (got -1)";
          return false;
        }
        return out = i->get(), true;
      }
      if (const auto* s = n.as_string()) {
        if (o.allow_auto && s->get() == "auto") return out = kAutoBytes, true;
        try {
          out = parse_byte_size(s->get());
          return true;
        } catch (const Error& e) {
          why = o.name() + ": " + e.what();
          return false;
        }
      }
      return wrong_type();
    case OptionKind::kString:
    case OptionKind::kChoice:
    case OptionKind::kAddress:
      if (const auto* s = n.as_string()) return out = s->get(), true;
      return wrong_type();
  }
  return wrong_type();
}

void add_table(ConfigLayers& layers, std::string_view source, std::string_view table, const toml::table& t) {
  for (auto&& [key, value] : t) {
    const Option* o = find_option(table, key.str());
    if (!o) {
      layers.add_problem(where(source, key.source()), "unknown key " + quoted(std::string(table) + "." +
                                                                              std::string(key.str())) +
                                                          suggest_key(table, key.str()));
      continue;
    }
    OptionValue v;
    std::string why;
    if (read_value(*o, value, v, why))
      layers.set(*o, v, where(source, value.source()));
    else
      layers.add_problem(where(source, value.source()), why);
  }
}

}  // namespace

void add_toml_layer(ConfigLayers& layers, std::string_view text, std::string_view source_name) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    layers.add_problem(where(source_name, e.source()), "TOML syntax error: " + std::string(e.description()));
    return;
  }
  for (auto&& [name, node] : root) {
    const std::string_view table = name.str();
    const auto tables = option_tables();
    const bool known = std::find(tables.begin(), tables.end(), table) != tables.end();
    if (!known) {
      std::string msg;
      if (!node.is_table()) {
        msg = "unknown key " + quoted(table) + " at the top level" + suggest_key("", table);
      } else {
        msg = "unknown table [" + printable(table) + "]";
        if (auto near = nearest_name(table, table_names())) msg += "; did you mean [" + *near + "]?";
      }
      layers.add_problem(where(source_name, name.source()), msg);
      continue;
    }
    if (const toml::table* t = node.as_table()) {
      add_table(layers, source_name, table, *t);
    } else {
      layers.add_problem(where(source_name, node.source()), std::string(table) + " must be a table ([" +
                                                                std::string(table) + "]), not " +
                                                                std::string(type_name(node)));
    }
  }
}

std::string read_config_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open config file " + path + ": " + std::strerror(errno));
  std::string text;
  char buf[1 << 14];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes) throw Error("config file " + path + " is larger than 1 MiB; is it a config file?");
  }
  if (in.bad() || !in.eof()) throw Error("cannot read config file " + path + " (is it a directory?)");
  return text;
}

ServerConfig parse_config(std::string_view text, std::string_view source_name) {
  ConfigLayers layers;
  add_toml_layer(layers, text, source_name);
  return layers.finish();
}

ServerConfig load_config(const std::string& path) { return parse_config(read_config_file(path), path); }

}  // namespace kvgate::config
