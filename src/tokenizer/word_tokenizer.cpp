#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace servebench::tokenizer {
namespace {

constexpr std::string_view kConsonants = "bcdfghjklmnprstvwz";  // 18
constexpr std::string_view kVowels = "aeiou";                   // 5
constexpr int kSyllables = 18 * 5;                              // 90; 90^3 = 729,000 words
constexpr int32_t kVocabSize = 32000;

// Byte classes by table: counting tokens runs over every synthetic prompt's text.
enum ByteClass : uint8_t { kOther, kWord, kSpace };
constexpr std::array<uint8_t, 256> kByteClasses = [] {
  std::array<uint8_t, 256> classes{};
  for (int c = 0; c < 256; ++c) {
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c >= 0x80;
    bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    classes[c] = word ? kWord : space ? kSpace : kOther;
  }
  return classes;
}();
bool is_word_byte(unsigned char c) {
  return kByteClasses[c] == kWord;
}
bool is_space(unsigned char c) {
  return kByteClasses[c] == kSpace;
}

// Calls emit(begin, end) for each token of the word rule.
template <typename Emit>
void split(std::string_view text, Emit&& emit) {
  const size_t n = text.size();
  size_t i = 0;
  auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  while (i < n) {
    size_t start = i;
    if (is_space(at(i))) {
      size_t j = i;
      while (j < n && is_space(at(j))) ++j;
      // A single ' ' right before a non-space joins the next token.
      if (j < n && at(j - 1) == ' ' && j - 1 > i) {
        emit(start, j - 1);
        i = j - 1;
        continue;
      }
      if (j < n && at(j - 1) == ' ' && j - 1 == i) {
        i = j;  // fall through with the leading space attached
      } else {
        emit(start, j);
        i = j;
        continue;
      }
    }
    if (is_word_byte(at(i))) {
      while (i < n && is_word_byte(at(i))) ++i;
    } else {
      ++i;  // one punctuation or control byte
    }
    emit(start, i);
  }
}

// Inverse of word_for_id, or -1 when `word` is not a vocabulary word.
TokenId id_for_word(std::string_view word) {
  if (word.size() != 6) return -1;
  int value = 0;
  for (int s = 0; s < 3; ++s) {
    size_t c = kConsonants.find(word[2 * s]);
    size_t v = kVowels.find(word[2 * s + 1]);
    if (c == std::string_view::npos || v == std::string_view::npos) return -1;
    value = value * kSyllables + static_cast<int>(c * kVowels.size() + v);
  }
  return value < kVocabSize ? value : -1;
}

// The six letters of every vocabulary word, computed once (decode runs for every synthetic
// prompt; the divisions per token were most of its time).
const std::vector<std::array<char, 6>>& vocabulary_words() {
  static const std::vector<std::array<char, 6>> words = [] {
    std::vector<std::array<char, 6>> all(kVocabSize);
    for (int id = 0; id < kVocabSize; ++id) {
      int value = id;
      for (int s = 2; s >= 0; --s) {
        int syl = value % kSyllables;
        value /= kSyllables;
        all[id][2 * s] = kConsonants[syl / kVowels.size()];
        all[id][2 * s + 1] = kVowels[syl % kVowels.size()];
      }
    }
    return all;
  }();
  return words;
}

// Writes the six letters of id's word at `out` (ids outside the vocabulary wrap around).
void write_word(TokenId id, char* out) {
  if (id < 0 || id >= kVocabSize) id = ((id % kVocabSize) + kVocabSize) % kVocabSize;
  const std::array<char, 6>& word = vocabulary_words()[static_cast<size_t>(id)];
  std::copy(word.begin(), word.end(), out);
}

TokenId hash_id(std::string_view token) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : token) h = (h ^ c) * 1099511628211ull;
  return static_cast<TokenId>(h % kVocabSize);
}

class WordTokenizer final : public Tokenizer {
 public:
  std::vector<TokenId> encode(std::string_view text) const override {
    std::vector<TokenId> ids;
    split(text, [&](size_t b, size_t e) {
      std::string_view tok = text.substr(b, e - b);
      std::string_view word = tok.starts_with(' ') ? tok.substr(1) : tok;
      TokenId id = tok.starts_with(' ') ? id_for_word(word) : -1;
      ids.push_back(id >= 0 ? id : hash_id(tok));
    });
    return ids;
  }
  size_t count(std::string_view text) const override {
    size_t n = 0;
    split(text, [&](size_t, size_t) { ++n; });
    return n;
  }
  std::string decode(std::span<const TokenId> ids) const override {
    // Sized once and written in place: decode runs for every synthetic prompt.
    std::string out(ids.size() * 7, ' ');
    for (size_t i = 0; i < ids.size(); ++i) write_word(ids[i], out.data() + i * 7 + 1);
    return out;
  }
  std::string token_text(TokenId id) const override { return " " + word_for_id(id); }
  int32_t vocab_size() const override { return kVocabSize; }
  std::string name() const override { return "builtin-word"; }
};

}  // namespace

std::string word_for_id(TokenId id) {
  std::string word(6, ' ');
  write_word(id, word.data());
  return word;
}

std::unique_ptr<Tokenizer> make_word_tokenizer() {
  return std::make_unique<WordTokenizer>();
}

}  // namespace servebench::tokenizer
