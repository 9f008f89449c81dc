#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// Byte classes of 64 bytes as bit masks (bit i: byte i).
struct ClassMasks {
  uint64_t word = 0;
  uint64_t space = 0;
  uint64_t blank = 0;  // the byte ' '
  uint64_t in_text = ~uint64_t{0};
};

#if defined(__SSE2__)
// 16 bytes per step, no branch per byte. Each range test shifts the range's first byte to -128
// and compares signed.
ClassMasks classify_64(const unsigned char* bytes) {
  auto below = [](__m128i v, int first, int size) {
    const __m128i shifted = _mm_add_epi8(v, _mm_set1_epi8(static_cast<char>(0x80 - first)));
    return _mm_cmplt_epi8(shifted, _mm_set1_epi8(static_cast<char>(-128 + size)));
  };
  ClassMasks masks;
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 16 * k));
    const __m128i letter = below(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 26);
    const __m128i word = _mm_or_si128(_mm_or_si128(letter, below(v, '0', 10)),
                                      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('_')),
                                                   _mm_cmplt_epi8(v, _mm_setzero_si128())));
    const __m128i blank = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
    const __m128i space = _mm_or_si128(blank, below(v, '\t', 5));  // \t \n \v \f \r
    const int shift = 16 * k;
    masks.word |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(word))) << shift;
    masks.space |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(space))) << shift;
    masks.blank |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(blank))) << shift;
  }
  return masks;
}
#else
ClassMasks classify_64(const unsigned char* bytes) {
  ClassMasks masks;
  for (int i = 0; i < 64; ++i) {
    masks.word |= static_cast<uint64_t>(kByteClasses[bytes[i]] == kWord) << i;
    masks.space |= static_cast<uint64_t>(kByteClasses[bytes[i]] == kSpace) << i;
    masks.blank |= static_cast<uint64_t>(bytes[i] == ' ') << i;
  }
  return masks;
}
#endif

// The word rule's tokens that start in these 64 bytes (`last`: the 64 before, or none): one
// per word run, per other byte and per whitespace run, but a ' ' that is a whole whitespace run
// before more text joins the next token.
size_t count_in_masks(const ClassMasks& m, const ClassMasks& last) {
  const uint64_t word_before = (m.word << 1) | (last.word >> 63);  // bit i: byte i-1
  const uint64_t space_before = (m.space << 1) | (last.space >> 63);
  const uint64_t space_two_before = (m.space << 2) | (last.space >> 62);
  const uint64_t blank_before = (m.blank << 1) | (last.blank >> 63);
  const uint64_t word_starts = m.word & m.in_text & ~word_before;
  const uint64_t space_starts = m.space & m.in_text & ~space_before;
  const uint64_t other = m.in_text & ~m.word & ~m.space;
  // The byte after such a ' ' (a word start or an other byte): its token began at the ' '.
  const uint64_t after_lone_blank = m.in_text & ~m.space & blank_before & ~space_two_before;
  // One popcount (a libgcc call without -mpopcnt): the starts are disjoint bits.
  return static_cast<size_t>(
      std::popcount((word_starts | other | space_starts) & ~after_lone_blank));
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
  // split's tokens; longer texts (every response text a server gave no usage for) counted
  // without splitting, as bit masks of 64 bytes (count_in_masks).
  size_t count(std::string_view text) const override {
    if (text.size() < 64) {  // a few tokens: splitting is quicker than padding a block
      size_t tokens = 0;
      split(text, [&](size_t, size_t) { ++tokens; });
      return tokens;
    }
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    size_t tokens = 0;
    ClassMasks last;
    for (size_t base = 0; base < n; base += 64) {
      ClassMasks masks;
      if (n - base >= 64) {
        masks = classify_64(bytes + base);
      } else {
        // The tail, zero-padded: a 0 byte is "other", and count_in_masks looks at none of the
        // padding (`in_text`).
        unsigned char padded[64] = {};
        std::memcpy(padded, bytes + base, n - base);
        masks = classify_64(padded);
        masks.in_text = (uint64_t{1} << (n - base)) - 1;
      }
      tokens += count_in_masks(masks, last);
      last = masks;
    }
    return tokens;
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
