// A Hugging Face tokenizer.json with a BPE model, as Hugging Face's tokenizers crate runs it
// (TokenizerImpl::encode with add_special_tokens=false, decode with skip_special_tokens=false):
//   1. added tokens that match the raw text (special ones, and those with normalized=false)
//      split it, leftmost-longest;
//   2. each remaining piece is normalized, then split again by the normalized added tokens;
//   3. each remaining piece goes through the pre-tokenizers, then the BPE model.
// The post-processor is not run: it only adds special tokens, and servebench never asks for them.
#include <simdjson.h>

#include <algorithm>

#include "core/error.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/hf_pipeline.h"
#include "tokenizer/json_place.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace servebench::tokenizer {
namespace {

using detail::JsonPlace;

// Ids index tables, so a hostile file must not make them huge; real vocabularies stay far below.
constexpr int64_t kMaxTokenId = (1 << 24) - 1;

struct AddedToken {
  std::string content;
  TokenId id = 0;
  bool single_word = false, lstrip = false, rstrip = false, normalized = true, special = false;
};

// A split of text by added tokens: [begin, end) is either plain text (token < 0) or the added
// token tokens[token] (with any whitespace it strips).
struct AddedSplit {
  size_t begin, end;
  int token;
};

// Leftmost-longest matching of added tokens (Hugging Face uses aho-corasick with
// MatchKind::LeftmostLongest), on a byte trie.
class AddedTokenMatcher {
 public:
  void add(std::string_view pattern, int token) {
    if (pattern.empty()) return;
    int node = 0;
    for (char c : pattern) {
      auto& kids = nodes_[static_cast<size_t>(node)].children;
      auto it = std::find_if(kids.begin(), kids.end(), [&](const auto& k) { return k.first == c; });
      if (it != kids.end()) {
        node = it->second;
      } else {
        nodes_.push_back({});
        int child = static_cast<int>(nodes_.size()) - 1;
        nodes_[static_cast<size_t>(node)].children.emplace_back(c, child);
        node = child;
      }
    }
    nodes_[static_cast<size_t>(node)].token = token;
    first_byte_[static_cast<unsigned char>(pattern[0])] = true;
    empty_ = false;
  }
  bool empty() const { return empty_; }

  // Hugging Face's AddedVocabulary::find_matches.
  void split(std::string_view text, const std::vector<AddedToken>& tokens,
             std::vector<AddedSplit>& out) const {
    size_t start_offset = 0;
    for (size_t pos = 0; pos < text.size();) {
      if (!first_byte_[static_cast<unsigned char>(text[pos])]) {
        ++pos;
        continue;
      }
      auto [length, token] = longest_at(text, pos);
      if (token < 0) {
        ++pos;
        continue;
      }
      size_t start = pos, stop = pos + length;
      pos = stop;
      const AddedToken& t = tokens[static_cast<size_t>(token)];
      if (t.single_word && ((start > 0 && ends_with_word(text.substr(0, start))) ||
                            (stop < text.size() && starts_with_word(text.substr(stop))))) {
        continue;
      }
      if (t.lstrip) start = std::max(whitespace_start_before(text, start), start_offset);
      if (t.rstrip) stop = whitespace_end_after(text, stop);
      if (start_offset < start) out.push_back({start_offset, start, -1});
      out.push_back({start, stop, token});
      start_offset = stop;
    }
    if (start_offset < text.size()) out.push_back({start_offset, text.size(), -1});
  }

 private:
  struct Node {
    std::vector<std::pair<char, int>> children;
    int token = -1;
  };

  std::pair<size_t, int> longest_at(std::string_view text, size_t pos) const {
    int node = 0;
    std::pair<size_t, int> best{0, -1};
    for (size_t i = pos; i < text.size(); ++i) {
      const auto& kids = nodes_[static_cast<size_t>(node)].children;
      auto it =
          std::find_if(kids.begin(), kids.end(), [&](const auto& k) { return k.first == text[i]; });
      if (it == kids.end()) break;
      node = it->second;
      if (nodes_[static_cast<size_t>(node)].token >= 0)
        best = {i + 1 - pos, nodes_[static_cast<size_t>(node)].token};
    }
    return best;
  }
  static size_t char_start_before(std::string_view text, size_t end) {
    size_t lead = end - 1;
    while (lead > 0 && (static_cast<unsigned char>(text[lead]) & 0xC0) == 0x80) --lead;
    return lead;
  }
  static bool ends_with_word(std::string_view text) {
    size_t i = char_start_before(text, text.size());
    return detail::is_word_char(detail::next_code_point(text, i));
  }
  static bool starts_with_word(std::string_view text) {
    size_t i = 0;
    return detail::is_word_char(detail::next_code_point(text, i));
  }
  static size_t whitespace_start_before(std::string_view text, size_t end) {
    while (end > 0) {
      size_t lead = char_start_before(text, end), i = lead;
      if (!detail::is_unicode_whitespace(detail::next_code_point(text, i))) break;
      end = lead;
    }
    return end;
  }
  static size_t whitespace_end_after(std::string_view text, size_t pos) {
    while (pos < text.size()) {
      size_t i = pos;
      if (!detail::is_unicode_whitespace(detail::next_code_point(text, i))) break;
      pos = i;
    }
    return pos;
  }

  std::vector<Node> nodes_{1};
  bool first_byte_[256] = {};
  bool empty_ = true;
};

struct HfParts {
  std::string name;
  std::vector<std::unique_ptr<detail::Normalizer>> normalizers;
  detail::PreTokenizerChain pre;
  detail::DecoderChain decoder;
  std::unique_ptr<detail::BpeModel> model;
  int32_t model_vocab_size = 0;
  std::vector<AddedToken> added;
  std::vector<std::string> id_tokens;  // id → token string as tokenizer.json writes it
  std::vector<bool> id_known;
};

class HfTokenizer final : public Tokenizer {
 public:
  explicit HfTokenizer(HfParts parts) : p_(std::move(parts)) {
    for (size_t i = 0; i < p_.added.size(); ++i) {
      const AddedToken& t = p_.added[i];
      if (!t.normalized) {
        raw_matcher_.add(t.content, static_cast<int>(i));
      } else {
        std::string pattern = t.content;
        for (const auto& n : p_.normalizers) n->apply(pattern);
        normalized_matcher_.add(pattern, static_cast<int>(i));
      }
    }
    if (p_.decoder.only_byte_level) {
      id_bytes_.resize(p_.id_tokens.size());
      for (size_t id = 0; id < p_.id_tokens.size(); ++id)
        if (p_.id_known[id]) detail::append_byte_level_bytes(id_bytes_[id], p_.id_tokens[id]);
    }
  }

  std::vector<TokenId> encode(std::string_view text) const override {
    std::string repaired;
    if (!detail::is_valid_utf8(text)) {
      // Python and Rust strings are always valid UTF-8; bytes that are not read as U+FFFD.
      repaired = detail::utf8_lossy(text);
      text = repaired;
    }
    std::vector<TokenId> ids;
    ids.reserve(text.size() / 3 + 4);
    split_by_added(raw_matcher_, text, ids, [&](size_t begin, size_t end) {
      encode_plain(text.substr(begin, end - begin), begin == 0, ids);
    });
    return ids;
  }

  std::string decode(std::span<const TokenId> ids) const override {
    auto known = [&](TokenId id) {
      return id >= 0 && static_cast<size_t>(id) < p_.id_known.size() &&
             p_.id_known[static_cast<size_t>(id)];
    };
    if (p_.decoder.only_byte_level) {
      std::string bytes;
      for (TokenId id : ids)
        if (known(id)) bytes += id_bytes_[static_cast<size_t>(id)];
      return detail::is_valid_utf8(bytes) ? bytes : detail::utf8_lossy(bytes);
    }
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (TokenId id : ids)
      if (known(id)) tokens.push_back(p_.id_tokens[static_cast<size_t>(id)]);
    std::string out;
    if (!p_.decoder.present) {
      for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
      return out;
    }
    for (const auto& step : p_.decoder.steps) step->decode(tokens);
    for (const std::string& t : tokens) out += t;
    return out;
  }

  std::string token_text(TokenId id) const override { return decode(std::span(&id, 1)); }
  int32_t vocab_size() const override { return p_.model_vocab_size; }
  std::string name() const override { return p_.name; }

 private:
  // A piece between raw-matched added tokens: normalize, split by normalized added tokens.
  void encode_plain(std::string_view piece, bool at_origin, std::vector<TokenId>& ids) const {
    if (p_.normalizers.empty() && normalized_matcher_.empty())
      return encode_normalized(piece, at_origin, ids);
    std::string normalized(piece);
    for (const auto& n : p_.normalizers) n->apply(normalized);
    if (normalized_matcher_.empty()) return encode_normalized(normalized, at_origin, ids);
    const std::string_view view = normalized;
    split_by_added(normalized_matcher_, view, ids, [&](size_t begin, size_t end) {
      encode_normalized(view.substr(begin, end - begin), at_origin && begin == 0, ids);
    });
  }

  // Appends the ids of the added tokens `matcher` finds in `text`; hands the text between them
  // to plain(begin, end).
  template <typename Plain>
  void split_by_added(const AddedTokenMatcher& matcher, std::string_view text,
                      std::vector<TokenId>& ids, Plain&& plain) const {
    std::vector<AddedSplit> splits;
    matcher.split(text, p_.added, splits);
    for (const AddedSplit& s : splits) {
      if (s.token >= 0) {
        ids.push_back(p_.added[static_cast<size_t>(s.token)].id);
      } else {
        plain(s.begin, s.end);
      }
    }
  }

  void encode_normalized(std::string_view text, bool at_origin, std::vector<TokenId>& ids) const {
    if (text.empty()) return;
    if (p_.pre.steps.empty()) return p_.model->encode(text, ids);
    thread_local std::vector<detail::Piece> pieces, next;
    thread_local detail::Arena arena;
    arena.clear();
    pieces.assign(1, {text, at_origin});
    for (const auto& step : p_.pre.steps) {
      next.clear();
      step->split(pieces, next, arena);
      pieces.swap(next);
    }
    for (const detail::Piece& piece : pieces) p_.model->encode(piece.text, ids);
  }

  HfParts p_;
  AddedTokenMatcher raw_matcher_, normalized_matcher_;
  std::vector<std::string> id_bytes_;  // byte-level decoding: each id's bytes
};

// ---- reading tokenizer.json

std::vector<AddedToken> parse_added_tokens(simdjson::dom::object root, const JsonPlace& top) {
  std::vector<AddedToken> out;
  auto list = detail::member(root, "added_tokens");
  if (!list) return out;
  JsonPlace place = top.at("added_tokens");
  size_t i = 0;
  for (auto item : detail::as_array(*list, place)) {
    JsonPlace at = place.at(i++);
    auto o = detail::as_object(item, at);
    AddedToken t;
    t.content = std::string(detail::string_member(o, "content", at));
    int64_t id = detail::int_member(o, "id", at);
    if (id < 0 || id > kMaxTokenId)
      at.at("id").fail(std::to_string(id) + " is out of range [0, " + std::to_string(kMaxTokenId) +
                       "]");
    t.id = static_cast<TokenId>(id);
    t.single_word = detail::bool_member(o, "single_word", false, at);
    t.lstrip = detail::bool_member(o, "lstrip", false, at);
    t.rstrip = detail::bool_member(o, "rstrip", false, at);
    t.normalized = detail::bool_member(o, "normalized", true, at);
    t.special = detail::bool_member(o, "special", false, at);
    if (!t.content.empty()) out.push_back(std::move(t));
  }
  return out;
}

// A vocabulary key as the model matches it: byte-level keys go back to raw bytes. nullopt when
// a character is outside the byte-level alphabet (such an entry can only be decoded).
std::optional<std::string> model_key(std::string_view key, bool byte_level) {
  if (!byte_level) return std::string(key);
  std::string bytes;
  for (size_t i = 0; i < key.size();) {
    int b = detail::code_point_to_byte(detail::next_code_point(key, i));
    if (b < 0) return std::nullopt;
    bytes += static_cast<char>(b);
  }
  return bytes;
}

void parse_model(simdjson::dom::object root, const JsonPlace& top, HfParts& parts) {
  auto model = detail::member(root, "model");
  if (!model) top.at("model").fail("is required");
  JsonPlace place = top.at("model");
  auto o = detail::as_object(*model, place);
  std::string_view type = detail::optional_string(o, "type", place).value_or("BPE");
  if (type != "BPE") {
    place.at("type").fail("model '" + std::string(type) +
                          "' is not supported (supported: BPE; SentencePiece .model files "
                          "through libsentencepiece)");
  }
  if (auto dropout = detail::member(o, "dropout")) {
    double d = 0;
    if (dropout->get_double().get(d) != simdjson::SUCCESS || d != 0.0)
      place.at("dropout").fail("BPE dropout is not supported (it makes encoding random)");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    auto v = detail::optional_string(o, key, place);
    if (v && !v->empty()) place.at(key).fail("a non-empty value is not supported");
  }
  const bool byte_level = parts.pre.byte_level;
  detail::BpeOptions options;
  options.byte_level = byte_level;
  options.byte_fallback = detail::bool_member(o, "byte_fallback", false, place);
  options.ignore_merges = detail::bool_member(o, "ignore_merges", false, place);
  options.fuse_unk = detail::bool_member(o, "fuse_unk", false, place);

  auto vocab_e = detail::member(o, "vocab");
  if (!vocab_e) place.at("vocab").fail("is required");
  auto vocab_o = detail::as_object(*vocab_e, place.at("vocab"));
  std::vector<std::pair<std::string, TokenId>> vocab;
  vocab.reserve(vocab_o.size());
  for (auto [key, value] : vocab_o) {
    JsonPlace at = place.at("vocab").at(key);
    int64_t id = detail::as_int(value, at);
    if (id < 0 || id > kMaxTokenId) at.fail("id " + std::to_string(id) + " is out of range");
    const auto tid = static_cast<TokenId>(id);
    if (static_cast<size_t>(tid) >= parts.id_tokens.size()) {
      parts.id_tokens.resize(static_cast<size_t>(tid) + 1);
      parts.id_known.resize(static_cast<size_t>(tid) + 1);
    }
    parts.id_tokens[static_cast<size_t>(tid)] = std::string(key);
    parts.id_known[static_cast<size_t>(tid)] = true;
    if (auto k = model_key(key, byte_level)) vocab.emplace_back(std::move(*k), tid);
  }
  // Every consumer draws ids below the vocabulary size (random prompts, the simulator's output
  // tokens): an empty one would divide by zero.
  if (vocab_o.size() == 0) place.at("vocab").fail("is empty: a tokenizer needs at least one token");
  parts.model_vocab_size = static_cast<int32_t>(vocab_o.size());

  if (auto unk = detail::optional_string(o, "unk_token", place)) {
    auto it =
        std::find_if(vocab.begin(), vocab.end(), [&](const auto& v) { return v.first == *unk; });
    if (it == vocab.end())
      place.at("unk_token").fail("'" + std::string(*unk) + "' is not in the vocabulary");
    options.unk_id = it->second;
  }

  std::vector<std::pair<std::string, std::string>> merges;
  if (auto merges_e = detail::member(o, "merges")) {
    JsonPlace mp = place.at("merges");
    auto list = detail::as_array(*merges_e, mp);
    merges.reserve(list.size());
    size_t i = 0;
    for (auto item : list) {
      JsonPlace at = mp.at(i++);
      std::string_view left, right;
      std::string_view line;
      simdjson::dom::array pair;
      if (item.get_string().get(line) == simdjson::SUCCESS) {
        size_t space = line.find(' ');
        if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos)
          at.fail("expected \"LEFT RIGHT\" (two parts separated by one space)");
        left = line.substr(0, space);
        right = line.substr(space + 1);
      } else if (item.get_array().get(pair) == simdjson::SUCCESS && pair.size() == 2) {
        left = detail::as_string(pair.at(0).value_unsafe(), at.at(size_t{0}));
        right = detail::as_string(pair.at(1).value_unsafe(), at.at(size_t{1}));
      } else {
        at.fail("expected \"LEFT RIGHT\" or [\"LEFT\", \"RIGHT\"]");
      }
      auto l = model_key(left, byte_level), r = model_key(right, byte_level);
      if (!l || !r) at.fail("a merge part is outside the byte-level alphabet");
      merges.emplace_back(std::move(*l), std::move(*r));
    }
  }
  try {
    parts.model = std::make_unique<detail::BpeModel>(vocab, merges, options);
  } catch (const detail::BpeModel::BadMerge& e) {
    place.at("merges").at(e.rank).fail("'" + e.token + "' is not in the vocabulary");
  }
}

}  // namespace

std::unique_ptr<Tokenizer> parse_hf_tokenizer_json(std::string_view json, const std::string& file,
                                                   const std::string& name) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element root_e;
  if (auto err = parser.parse(padded).get(root_e)) {
    throw core::Error(core::ErrorKind::kInput, file,
                      std::string("is not valid JSON: ") + simdjson::error_message(err));
  }
  const JsonPlace top{&file, ""};
  auto root = detail::as_object(root_e, top);
  HfParts parts;
  parts.name = name;
  parts.normalizers =
      detail::parse_normalizer(detail::member(root, "normalizer"), top.at("normalizer"));
  parts.pre =
      detail::parse_pre_tokenizer(detail::member(root, "pre_tokenizer"), top.at("pre_tokenizer"));
  parts.decoder = detail::parse_decoder(detail::member(root, "decoder"), top.at("decoder"));
  parse_model(root, top, parts);
  parts.added = parse_added_tokens(root, top);
  for (const AddedToken& t : parts.added) {
    const auto id = static_cast<size_t>(t.id);
    if (id >= parts.id_tokens.size()) {
      parts.id_tokens.resize(id + 1);
      parts.id_known.resize(id + 1);
    }
    parts.id_tokens[id] = t.content;
    parts.id_known[id] = true;
  }
  return std::make_unique<HfTokenizer>(std::move(parts));
}

}  // namespace servebench::tokenizer
