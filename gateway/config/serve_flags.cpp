// Flags are read as text and go through the same value rules as the file
// (value_from_text, then ConfigLayers::set's check_value), so "--io-threads
// 0" and "io_threads = 0" are refused with the same words.
#include "gateway/config/serve_flags.h"

#include "base/error.h"
#include "gateway/config/config_file.h"
#include "gateway/config/config_layers.h"

namespace kvgate::config {
namespace {

std::string group_of(std::string_view table) {
  std::string g = "Config [";
  return g.append(table).append("]");
}

std::string_view type_name_of(OptionKind kind) {
  switch (kind) {
    case OptionKind::kInt:
      return "N";
    case OptionKind::kBytes:
      return "BYTES";
    case OptionKind::kAddress:
      return "HOST:PORT";
    case OptionKind::kChoice:
      return "NAME";
    default:
      return "TEXT";
  }
}

}  // namespace

std::shared_ptr<ServeFlags> ServeFlags::add_to(CLI::App& cmd, ServerCommand command) {
  std::shared_ptr<ServeFlags> f(new ServeFlags());
  cmd.add_option("--config", f->config_file_, "TOML config file (flags given override its values)")
      ->type_name("FILE");
  cmd.add_flag("--print-config", f->print_config_, "print the effective config as TOML and exit");
  const ServerConfig defaults;
  f->given_.resize(all_options().size());
  for (const Option& o : all_options()) {
    Given& g = f->given_[option_index(o)];
    g.option = &o;
    if (!o.is_flag_of(command)) continue;
    const std::string flag = "--" + std::string(o.flag);
    const std::string help = std::string(o.help) + " [" + o.name() + "]";
    if (o.kind == OptionKind::kBool) {
      g.cli = cmd.add_flag(flag + ",!--no-" + std::string(o.flag), g.flag, help);
    } else {
      g.cli = cmd.add_option(flag, g.text, help)->type_name(std::string(type_name_of(o.kind)));
    }
    g.cli->default_str(format_value(o, o.get(defaults)))->group(group_of(o.table));
  }
  return f;
}

ServerConfig ServeFlags::resolve() const {
  ConfigLayers layers;
  if (!config_file_.empty()) add_toml_layer(layers, read_config_file(config_file_), config_file_);
  for (const Given& g : given_) {
    if (!g.cli || g.cli->count() == 0) continue;
    const std::string flag = "--" + std::string(g.option->flag);
    try {
      const OptionValue v = g.option->kind == OptionKind::kBool ? OptionValue(g.flag) : value_from_text(*g.option, g.text);
      layers.set(*g.option, v, Origin{flag});
    } catch (const Error& e) {
      layers.add_problem(Origin{flag}, e.what());
    }
  }
  return layers.finish();
}

}  // namespace kvgate::config
