// File: tokenizer/hf_decoders.cpp
// Decoders of tokenizer.json, after Hugging Face's tokenizers crate (tokenizers/src/decoders):
// same tokens in, same text out.
#include <utility>

#include "tokenizer/hf_pipeline.h"
#include "tokenizer/utf8.h"

namespace servebench::tokenizer::detail {
namespace {

class ByteLevelDecoder final : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const std::string& t : tokens) append_byte_level_bytes(bytes, t);
    tokens.assign(1, utf8_lossy(bytes));
  }
};

class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, PrependScheme scheme)
      : replacement_(std::move(replacement)), scheme_(scheme) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      std::string_view t = tokens[i];
      for (size_t pos = 0; pos < t.size();) {
        if (t.substr(pos).starts_with(replacement_)) {
          if (!(i == 0 && scheme_ != PrependScheme::kNever)) out += ' ';
          pos += replacement_.size();
        } else {
          out += t[pos++];
        }
      }
      tokens[i] = std::move(out);
    }
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) replace_all(t, from_, to_);
  }

 private:
  std::string from_, to_;
};

// Runs of <0xXX> tokens become the bytes they name when those form valid UTF-8, else one
// U+FFFD per byte.
class ByteFallbackDecoder final : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    size_t pending_count = 0;
    auto flush = [&] {
      if (pending_count == 0) return;
      if (is_valid_utf8(pending)) {
        out.push_back(pending);
      } else {
        for (size_t k = 0; k < pending_count; ++k) out.emplace_back("\xEF\xBF\xBD");
      }
      pending.clear();
      pending_count = 0;
    };
    for (std::string& t : tokens) {
      int byte = byte_token_value(t);
      if (byte >= 0) {
        pending += static_cast<char>(byte);
        ++pending_count;
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens = std::move(out);
  }
  static int byte_token_value(std::string_view t) {
    if (t.size() != 6 || !t.starts_with("<0x") || t[5] != '>') return -1;
    int value = 0;
    for (char c : t.substr(3, 2)) {
      int digit = (c >= '0' && c <= '9')   ? c - '0'
                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                           : -1;
      if (digit < 0) return -1;
      value = value * 16 + digit;
    }
    return value;
  }
};

class FuseDecoder final : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const std::string& t : tokens) all += t;
    tokens.assign(1, std::move(all));
  }
};

class StripDecoder final : public Decoder {
 public:
  StripDecoder(char32_t content, size_t start, size_t stop)
      : content_(content), start_(start), stop_(stop) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      std::vector<size_t> starts;  // byte offset of each character
      for (size_t i = 0; i < t.size();) {
        starts.push_back(i);
        i += std::max<size_t>(1, utf8_char_length(static_cast<unsigned char>(t[i])));
      }
      const size_t n = starts.size();
      auto char_at = [&](size_t k) {
        size_t i = starts[k];
        return next_code_point(t, i);
      };
      size_t first = 0;
      while (first < n && first < start_ && char_at(first) == content_) ++first;
      size_t last = n;
      while (last > first && n - last < stop_ && char_at(last - 1) == content_) --last;
      size_t b = first < n ? starts[first] : t.size();
      size_t e = last < n ? starts[last] : t.size();
      t = t.substr(b, e - b);
    }
  }

 private:
  char32_t content_;
  size_t start_, stop_;
};

void add_decoder(DecoderChain& chain, simdjson::dom::element e, const JsonPlace& place) {
  auto o = as_object(e, place);
  std::string_view type = string_member(o, "type", place);
  if (type == "Sequence") {
    for_each_item(o, "decoders", place,
                  [&](auto item, const JsonPlace& at) { add_decoder(chain, item, at); });
  } else if (type == "ByteLevel") {
    chain.steps.push_back(std::make_unique<ByteLevelDecoder>());
  } else if (type == "Metaspace") {
    std::string replacement(string_member(o, "replacement", place));
    chain.steps.push_back(
        std::make_unique<MetaspaceDecoder>(replacement, metaspace_scheme(o, place)));
  } else if (type == "Replace") {
    auto pattern = member(o, "pattern");
    if (!pattern) place.at("pattern").fail("is required");
    auto po = as_object(*pattern, place.at("pattern"));
    auto from = optional_string(po, "String", place.at("pattern"));
    if (!from) place.at("pattern").fail("Replace decoder with a Regex pattern is not supported");
    chain.steps.push_back(std::make_unique<ReplaceDecoder>(
        std::string(*from), std::string(string_member(o, "content", place))));
  } else if (type == "ByteFallback") {
    chain.steps.push_back(std::make_unique<ByteFallbackDecoder>());
  } else if (type == "Fuse") {
    chain.steps.push_back(std::make_unique<FuseDecoder>());
  } else if (type == "Strip") {
    std::string_view content = string_member(o, "content", place);
    size_t i = 0;
    if (content.empty()) place.at("content").fail("must be one character");
    char32_t c = next_code_point(content, i);
    if (i != content.size()) place.at("content").fail("must be one character");
    int64_t start = int_member(o, "start", place), stop = int_member(o, "stop", place);
    if (start < 0 || stop < 0) place.fail("start and stop must be >= 0");
    chain.steps.push_back(
        std::make_unique<StripDecoder>(c, static_cast<size_t>(start), static_cast<size_t>(stop)));
  } else {
    place.at("type").fail("decoder '" + std::string(type) +
                          "' is not supported (supported: Sequence, ByteLevel, Metaspace, Replace, "
                          "ByteFallback, Fuse, Strip)");
  }
}

}  // namespace

DecoderChain parse_decoder(OptionalJson e, const JsonPlace& place) {
  DecoderChain chain;
  if (!e) return chain;
  chain.present = true;
  add_decoder(chain, *e, place);
  chain.only_byte_level =
      chain.steps.size() == 1 && dynamic_cast<ByteLevelDecoder*>(chain.steps[0].get()) != nullptr;
  return chain;
}

}  // namespace servebench::tokenizer::detail
