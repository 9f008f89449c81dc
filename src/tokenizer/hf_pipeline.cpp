// Normalizers and pre-tokenizers of tokenizer.json (decoders: hf_decoders.cpp), after Hugging
// Face's tokenizers crate (tokenizers/src/{normalizers,pre_tokenizers,decoders}): same inputs, same
// outputs.
#include "tokenizer/hf_pipeline.h"

#include <unicode/bytestream.h>
#include <unicode/casemap.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>

#include <algorithm>
#include <utility>

#include "tokenizer/regex.h"
#include "tokenizer/utf8.h"

namespace servebench::tokenizer::detail {
namespace {

using Spans = std::vector<std::pair<size_t, size_t>>;

// ---- normalizers

class UnicodeForm final : public Normalizer {
 public:
  UnicodeForm(const icu::Normalizer2* form) : form_(form) {}
  void apply(std::string& text) const override {
    // ASCII is stable under every normalization form.
    if (std::all_of(text.begin(), text.end(), [](char c) { return (c & 0x80) == 0; })) return;
    UErrorCode status = U_ZERO_ERROR;
    if (form_->isNormalizedUTF8(text, status) && U_SUCCESS(status)) return;
    std::string out;
    icu::StringByteSink<std::string> sink(&out);
    status = U_ZERO_ERROR;
    form_->normalizeUTF8(0, text, sink, nullptr, status);
    if (U_SUCCESS(status)) text = std::move(out);
  }

 private:
  const icu::Normalizer2* form_;
};

class Lowercase final : public Normalizer {
 public:
  void apply(std::string& text) const override {
    std::string out;
    icu::StringByteSink<std::string> sink(&out);
    UErrorCode status = U_ZERO_ERROR;
    icu::CaseMap::utf8ToLower("", 0, text, sink, nullptr, status);
    if (U_SUCCESS(status)) text = std::move(out);
  }
};

class StripAccents final : public Normalizer {
 public:
  void apply(std::string& text) const override {
    std::string out;
    for (size_t i = 0; i < text.size();) {
      size_t start = i;
      char32_t c = next_code_point(text, i);
      int8_t type = u_charType(static_cast<UChar32>(c));
      if (type != U_NON_SPACING_MARK && type != U_ENCLOSING_MARK &&
          type != U_COMBINING_SPACING_MARK) {
        out.append(text, start, i - start);
      }
    }
    text = std::move(out);
  }
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  void apply(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

class StripSpaces final : public Normalizer {
 public:
  StripSpaces(bool left, bool right) : left_(left), right_(right) {}
  void apply(std::string& text) const override {
    size_t begin = 0, end = text.size();
    if (left_) {
      while (begin < end) {
        size_t i = begin;
        if (!is_unicode_whitespace(next_code_point(text, i))) break;
        begin = i;
      }
    }
    if (right_) {
      while (end > begin) {
        size_t lead = end - 1;
        while (lead > begin && (static_cast<unsigned char>(text[lead]) & 0xC0) == 0x80) --lead;
        size_t i = lead;
        if (!is_unicode_whitespace(next_code_point(text, i))) break;
        end = lead;
      }
    }
    text = text.substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

// "pattern": {"String": s} or {"Regex": r}. Both become a regex (a string is escaped).
std::string pattern_regex(simdjson::dom::element e, const JsonPlace& place, bool* is_string) {
  auto o = as_object(e, place);
  if (auto s = optional_string(o, "String", place)) {
    if (is_string) *is_string = true;
    std::string escaped;
    for (char c : *s) {
      auto u = static_cast<unsigned char>(c);
      if (u < 0x80 && !std::isalnum(u)) escaped += '\\';
      escaped += c;
    }
    return escaped;
  }
  if (auto r = optional_string(o, "Regex", place)) {
    if (is_string) *is_string = false;
    return std::string(*r);
  }
  place.fail("expected {\"String\": …} or {\"Regex\": …}");
}

std::string literal_of(simdjson::dom::element e, const JsonPlace& place) {
  auto o = as_object(e, place);
  if (auto s = optional_string(o, "String", place)) return std::string(*s);
  return {};
}

class Replace final : public Normalizer {
 public:
  Replace(simdjson::dom::element pattern, std::string content, const JsonPlace& place)
      : content_(std::move(content)) {
    bool is_string = false;
    std::string regex = pattern_regex(pattern, place, &is_string);
    if (is_string) {
      literal_ = literal_of(pattern, place);
    } else {
      regex_ = std::make_unique<Regex>(regex, *place.file + ": " + place.path);
    }
  }
  void apply(std::string& text) const override {
    if (!regex_) return replace_all(text, literal_, content_);
    Spans spans;
    regex_->find_all(text, spans);
    if (spans.empty()) return;
    std::string out;
    size_t pos = 0;
    for (auto [b, e] : spans) {
      out.append(text, pos, b - pos);
      out += content_;
      pos = e;
    }
    out.append(text, pos);
    text = std::move(out);
  }

 private:
  std::string literal_, content_;
  std::unique_ptr<Regex> regex_;
};

void add_normalizer(std::vector<std::unique_ptr<Normalizer>>& out, simdjson::dom::element e,
                    const JsonPlace& place) {
  auto o = as_object(e, place);
  std::string_view type = string_member(o, "type", place);
  UErrorCode status = U_ZERO_ERROR;
  if (type == "Sequence") {
    for_each_item(o, "normalizers", place,
                  [&](auto item, const JsonPlace& at) { add_normalizer(out, item, at); });
  } else if (type == "NFC") {
    out.push_back(std::make_unique<UnicodeForm>(icu::Normalizer2::getNFCInstance(status)));
  } else if (type == "NFD") {
    out.push_back(std::make_unique<UnicodeForm>(icu::Normalizer2::getNFDInstance(status)));
  } else if (type == "NFKC") {
    out.push_back(std::make_unique<UnicodeForm>(icu::Normalizer2::getNFKCInstance(status)));
  } else if (type == "NFKD") {
    out.push_back(std::make_unique<UnicodeForm>(icu::Normalizer2::getNFKDInstance(status)));
  } else if (type == "Lowercase") {
    out.push_back(std::make_unique<Lowercase>());
  } else if (type == "StripAccents") {
    out.push_back(std::make_unique<StripAccents>());
  } else if (type == "Prepend") {
    out.push_back(std::make_unique<Prepend>(std::string(string_member(o, "prepend", place))));
  } else if (type == "Strip") {
    out.push_back(std::make_unique<StripSpaces>(bool_member(o, "strip_left", true, place),
                                                bool_member(o, "strip_right", true, place)));
  } else if (type == "Replace") {
    auto pattern = member(o, "pattern");
    if (!pattern) place.at("pattern").fail("is required");
    out.push_back(std::make_unique<Replace>(
        *pattern, std::string(string_member(o, "content", place)), place.at("pattern")));
  } else {
    place.at("type").fail("normalizer '" + std::string(type) +
                          "' is not supported (supported: Sequence, NFC, NFD, NFKC, NFKD, "
                          "Lowercase, StripAccents, Prepend, Strip, Replace)");
  }
  if (U_FAILURE(status)) place.fail(std::string("ICU: ") + u_errorName(status));
}

// ---- pre-tokenizers

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

Behavior parse_behavior(std::string_view name, const JsonPlace& place) {
  if (name == "Removed") return Behavior::kRemoved;
  if (name == "Isolated") return Behavior::kIsolated;
  if (name == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return Behavior::kMergedWithNext;
  if (name == "Contiguous") return Behavior::kContiguous;
  place.fail("split behavior '" + std::string(name) + "' is not one of Removed, Isolated, " +
             "MergedWithPrevious, MergedWithNext, Contiguous");
}

struct Segment {
  size_t begin, end;
  bool is_match;
};

// Hugging Face's NormalizedString::split: matches and the gaps between them cover the text;
// the behavior decides what becomes of the matches. Empty results are dropped.
void split_piece(const Piece& piece, const Spans& matches, bool invert, Behavior behavior,
                 std::vector<Piece>& out) {
  const std::string_view text = piece.text;
  // Called once per piece of every encode: reuse the buffers rather than allocate.
  thread_local std::vector<Segment> segs, kept;
  segs.clear();
  kept.clear();
  size_t prev = 0;
  for (auto [b, e] : matches) {
    if (prev != b) segs.push_back({prev, b, invert});
    segs.push_back({b, e, !invert});
    prev = e;
  }
  if (prev != text.size()) segs.push_back({prev, text.size(), invert});

  switch (behavior) {
    case Behavior::kRemoved:
      for (const auto& s : segs)
        if (!s.is_match) kept.push_back(s);
      break;
    case Behavior::kIsolated:
      kept = segs;
      break;
    case Behavior::kMergedWithPrevious: {
      bool previous_match = false;
      for (const auto& s : segs) {
        if (s.is_match && !previous_match && !kept.empty()) {
          kept.back().end = s.end;
        } else {
          kept.push_back(s);
        }
        previous_match = s.is_match;
      }
      break;
    }
    case Behavior::kMergedWithNext: {
      bool previous_match = false;
      for (auto it = segs.rbegin(); it != segs.rend(); ++it) {
        if (it->is_match && !previous_match && !kept.empty()) {
          kept.back().begin = it->begin;
        } else {
          kept.push_back(*it);
        }
        previous_match = it->is_match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
    }
    case Behavior::kContiguous: {
      bool previous_match = false;
      for (const auto& s : segs) {
        if (s.is_match == previous_match && !kept.empty()) {
          kept.back().end = s.end;
        } else {
          kept.push_back(s);
        }
        previous_match = s.is_match;
      }
      break;
    }
  }
  for (const auto& s : kept) {
    if (s.end > s.begin) {
      out.push_back({text.substr(s.begin, s.end - s.begin), piece.at_origin && s.begin == 0});
    }
  }
}

class RegexSplit final : public PreTokenizer {
 public:
  RegexSplit(const std::string& regex, bool invert, Behavior behavior, const std::string& where)
      : regex_(regex, where), invert_(invert), behavior_(behavior) {}
  void split(const std::vector<Piece>& in, std::vector<Piece>& out, Arena&) const override {
    thread_local Spans spans;
    for (const Piece& p : in) {
      spans.clear();
      regex_.find_all(p.text, spans);
      split_piece(p, spans, invert_, behavior_, out);
    }
  }

 private:
  Regex regex_;
  bool invert_;
  Behavior behavior_;
};

// GPT-2's split, used by ByteLevel when use_regex is true.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class ByteLevelPre final : public PreTokenizer {
 public:
  ByteLevelPre(bool add_prefix_space, bool use_regex, const std::string& where)
      : add_prefix_space_(add_prefix_space) {
    if (use_regex) regex_ = std::make_unique<Regex>(kGpt2Pattern, where);
  }
  void split(const std::vector<Piece>& in, std::vector<Piece>& out, Arena& arena) const override {
    thread_local Spans spans;
    for (Piece p : in) {
      if (add_prefix_space_ && !p.text.starts_with(' ')) {
        arena.push_back(" " + std::string(p.text));
        p.text = arena.back();
      }
      if (!regex_) {
        if (!p.text.empty()) out.push_back(p);
        continue;
      }
      spans.clear();
      regex_->find_all(p.text, spans);
      split_piece(p, spans, false, Behavior::kIsolated, out);
    }
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Regex> regex_;
};

class MetaspacePre final : public PreTokenizer {
 public:
  MetaspacePre(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void split(const std::vector<Piece>& in, std::vector<Piece>& out, Arena& arena) const override {
    for (const Piece& p : in) {
      std::string text(p.text);
      replace_all(text, " ", replacement_);
      bool prepend =
          scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && p.at_origin);
      if (prepend && !text.starts_with(replacement_)) text.insert(0, replacement_);
      arena.push_back(std::move(text));
      Piece rewritten{arena.back(), p.at_origin};
      if (!split_) {
        if (!rewritten.text.empty()) out.push_back(rewritten);
        continue;
      }
      Spans spans;
      for (size_t pos = 0; (pos = rewritten.text.find(replacement_, pos)) != std::string::npos;
           pos += replacement_.size()) {
        spans.emplace_back(pos, pos + replacement_.size());
      }
      split_piece(rewritten, spans, false, Behavior::kMergedWithNext, out);
    }
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

void add_pre_tokenizer(PreTokenizerChain& chain, simdjson::dom::element e, const JsonPlace& place) {
  auto o = as_object(e, place);
  std::string_view type = string_member(o, "type", place);
  if (chain.byte_level) {
    place.at("type").fail("pre-tokenizer '" + std::string(type) +
                          "' after ByteLevel is not supported (ByteLevel must come last)");
  }
  const std::string where = *place.file + ": " + place.path;
  if (type == "Sequence") {
    for_each_item(o, "pretokenizers", place,
                  [&](auto item, const JsonPlace& at) { add_pre_tokenizer(chain, item, at); });
  } else if (type == "Split") {
    auto pattern = member(o, "pattern");
    if (!pattern) place.at("pattern").fail("is required");
    std::string regex = pattern_regex(*pattern, place.at("pattern"), nullptr);
    Behavior behavior = parse_behavior(string_member(o, "behavior", place), place.at("behavior"));
    chain.steps.push_back(std::make_unique<RegexSplit>(
        regex, bool_member(o, "invert", false, place), behavior, where + ".pattern"));
  } else if (type == "ByteLevel") {
    bool add_prefix_space = bool_member(o, "add_prefix_space", true, place);
    bool use_regex = bool_member(o, "use_regex", true, place);
    if (add_prefix_space || use_regex)
      chain.steps.push_back(std::make_unique<ByteLevelPre>(add_prefix_space, use_regex, where));
    chain.byte_level = true;
  } else if (type == "Metaspace") {
    std::string replacement(string_member(o, "replacement", place));
    if (replacement.empty()) place.at("replacement").fail("must not be empty");
    chain.steps.push_back(std::make_unique<MetaspacePre>(replacement, metaspace_scheme(o, place),
                                                         bool_member(o, "split", true, place)));
  } else if (type == "Digits") {
    bool individual = bool_member(o, "individual_digits", false, place);
    chain.steps.push_back(std::make_unique<RegexSplit>(individual ? "\\p{N}" : "\\p{N}+", false,
                                                       Behavior::kIsolated, where));
  } else {
    place.at("type").fail("pre-tokenizer '" + std::string(type) +
                          "' is not supported (supported: Sequence, Split, ByteLevel, Metaspace, "
                          "Digits)");
  }
}

}  // namespace

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  if (from.empty() || text.find(from) == std::string::npos) return;
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = text.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(text, pos, hit - pos);
    out += to;
  }
  out.append(text, pos);
  text = std::move(out);
}

PrependScheme metaspace_scheme(simdjson::dom::object o, const JsonPlace& place) {
  if (auto scheme = optional_string(o, "prepend_scheme", place)) {
    if (*scheme == "always") return PrependScheme::kAlways;
    if (*scheme == "first") return PrependScheme::kFirst;
    if (*scheme == "never") return PrependScheme::kNever;
    place.at("prepend_scheme").fail("'" + std::string(*scheme) + "' is not always, first or never");
  }
  // Files older than prepend_scheme say add_prefix_space.
  return bool_member(o, "add_prefix_space", true, place) ? PrependScheme::kAlways
                                                         : PrependScheme::kNever;
}

void append_byte_level_bytes(std::string& bytes, std::string_view token) {
  const size_t mark = bytes.size();
  for (size_t i = 0; i < token.size();) {
    int b = code_point_to_byte(next_code_point(token, i));
    if (b < 0) {
      bytes.resize(mark);
      bytes += token;
      return;
    }
    bytes += static_cast<char>(b);
  }
}

bool is_word_char(char32_t c) {
  auto u = static_cast<UChar32>(c);
  int8_t type = u_charType(u);
  return u_hasBinaryProperty(u, UCHAR_ALPHABETIC) || type == U_NON_SPACING_MARK ||
         type == U_ENCLOSING_MARK || type == U_COMBINING_SPACING_MARK ||
         type == U_DECIMAL_DIGIT_NUMBER || type == U_CONNECTOR_PUNCTUATION ||
         u_hasBinaryProperty(u, UCHAR_JOIN_CONTROL);
}

std::vector<std::unique_ptr<Normalizer>> parse_normalizer(OptionalJson e, const JsonPlace& place) {
  std::vector<std::unique_ptr<Normalizer>> out;
  if (e) add_normalizer(out, *e, place);
  return out;
}

PreTokenizerChain parse_pre_tokenizer(OptionalJson e, const JsonPlace& place) {
  PreTokenizerChain chain;
  if (e) add_pre_tokenizer(chain, *e, place);
  return chain;
}

}  // namespace servebench::tokenizer::detail
