// `servebench tokenize`: what a tokenizer makes of a text (ids and their count, as JSON), or with
// --decode the text of ids: for users checking that servebench counts as their server does.
// The text comes from the argument, --file, or standard input.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace servebench::cli {
namespace {

struct TokenizeFlags {
  std::string tokenizer, text, file;
  bool decode = false, tokens = false;
  bool text_given = false;
};

std::string read_input(const TokenizeFlags& f) {
  if (f.text_given) return f.text;
  if (!f.file.empty() && f.file != "-") {
    std::ifstream in(f.file, std::ios::binary);
    std::ostringstream all;
    if (!in || !(all << in.rdbuf()))
      throw core::Error(core::ErrorKind::kInput, "--file", "cannot read '" + f.file + "'");
    return all.str();
  }
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

// Ids as a JSON array ("[1, 2]") or separated by spaces, commas or newlines ("1 2", "1,2").
std::vector<tokenizer::TokenId> parse_ids(const std::string& input) {
  std::vector<tokenizer::TokenId> ids;
  std::string token;
  auto flush = [&] {
    if (token.empty()) return;
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(token, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != token.size() || v < 0 || v > INT32_MAX) {
      throw core::Error(core::ErrorKind::kUsage, "--decode",
                        "'" + token + "' is not a token id (a non-negative integer)");
    }
    ids.push_back(static_cast<tokenizer::TokenId>(v));
    token.clear();
  };
  for (char c : input) {
    if (c == ' ' || c == ',' || c == '\n' || c == '\r' || c == '\t' || c == '[' || c == ']') {
      flush();
    } else {
      token += c;
    }
  }
  flush();
  return ids;
}

}  // namespace

Action add_tokenize_command(CLI::App& app) {
  auto flags = std::make_shared<TokenizeFlags>();
  CLI::App* sub = app.add_subcommand(
      "tokenize",
      "Print the token ids of a text and their count as JSON (or, with --decode, "
      "the text of ids)");
  sub->add_option("--tokenizer", flags->tokenizer,
                  "tokenizer.json / .model file, model directory, Hugging Face model id in the "
                  "local cache, or builtin")
      ->required();
  sub->add_option("text", flags->text, "the text (default: --file, else standard input)");
  sub->add_option("--file", flags->file, "read the text from this file ('-' = standard input)");
  sub->add_flag("--decode", flags->decode,
                "the input is token ids (JSON array, or separated by spaces or commas): print "
                "their text");
  sub->add_flag("--tokens", flags->tokens, "also print each id's text (\"tokens\")");
  return [flags, sub]() -> int {
    TokenizeFlags& f = *flags;
    f.text_given = sub->count("text") > 0;
    if (f.text_given && !f.file.empty())
      throw core::Error(core::ErrorKind::kUsage, "--file", "give the text or --file, not both");
    const std::unique_ptr<tokenizer::Tokenizer> tok = tokenizer::load_tokenizer(f.tokenizer);
    const std::string input = read_input(f);
    nlohmann::json out;
    out["tokenizer"] = tok->name();
    std::vector<tokenizer::TokenId> ids;
    if (f.decode) {
      ids = parse_ids(input);
      out["count"] = ids.size();
      out["text"] = tok->decode(ids);
    } else {
      ids = tok->encode(input);
      out["count"] = ids.size();
      out["ids"] = ids;
    }
    if (f.tokens) {
      nlohmann::json texts = nlohmann::json::array();
      for (tokenizer::TokenId id : ids) texts.push_back(tok->token_text(id));
      out["tokens"] = std::move(texts);
    }
    // Replace, not throw, should a text not be valid UTF-8 (SentencePiece byte pieces).
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  };
}

}  // namespace servebench::cli
