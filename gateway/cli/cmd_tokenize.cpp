// kvgate tokenize: text to token ids with a model's own vocabulary.
#include <cstdio>
#include <memory>

#include <boost/json.hpp>

#include "base/error.h"
#include "base/file_text.h"
#include "engine/model/gguf.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/cli/commands.h"

namespace kvgate::cli {
namespace {

struct TokenizeOptions {
  std::string model;
  std::string text;
  std::string file;
  bool json = false;
  bool no_bos = false;
  bool parse_special = false;
};

void run(const TokenizeOptions& o) {
  auto gguf = GgufFile::open(o.model);
  auto tok = Tokenizer::from_gguf(*gguf);
  const std::string text = o.file.empty() ? o.text : read_file_text(o.file);
  Tokens ids = tok->encode(text, {.add_bos = !o.no_bos, .parse_special = o.parse_special});
  if (o.json) {
    boost::json::array pieces;
    for (TokenId id : ids) pieces.emplace_back(tok->piece(id));
    boost::json::object j;
    j["ids"] = boost::json::value_from(ids);
    j["pieces"] = std::move(pieces);
    j["count"] = ids.size();
    std::printf("%s\n", boost::json::serialize(j).c_str());
    return;
  }
  for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
  std::printf("\n");
}

}  // namespace

void add_tokenize(CLI::App& app) {
  auto o = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Print the token ids of a text");
  cmd->add_option("--model", o->model, "GGUF model or vocabulary file")->required();
  auto* text = cmd->add_option("--text", o->text, "text to tokenize");
  auto* file = cmd->add_option("--file", o->file, "file whose bytes to tokenize");
  text->excludes(file);
  cmd->add_flag("--no-bos", o->no_bos, "do not add BOS even if the vocabulary asks for it");
  cmd->add_flag("--parse-special", o->parse_special, "match control tokens written in the text");
  cmd->add_flag("--json", o->json, "print {ids, pieces, count}");
  cmd->callback([o, text, file] {
    if (text->count() == 0 && file->count() == 0) throw Error("tokenize: give --text or --file");
    run(*o);
  });
}

}  // namespace kvgate::cli
