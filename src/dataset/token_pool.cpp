#include "dataset/token_pool.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "dataset/synth.h"

namespace servebench::dataset {
namespace {

using tokenizer::TokenId;

bool is_ascii_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// " " followed by one or more ASCII letters.
bool is_spaced_word(std::string_view s) {
  return s.size() >= 2 && s[0] == ' ' && std::all_of(s.begin() + 1, s.end(), is_ascii_letter);
}

[[noreturn]] void refuse(const tokenizer::Tokenizer& tok, const std::string& why) {
  throw core::Error(core::ErrorKind::kUsage, "--random-token-rule",
                    "round-trip cannot be used with tokenizer '" + tok.name() + "': " + why +
                        "; use --random-token-rule vllm");
}

}  // namespace

RoundTripPool::RoundTripPool(const tokenizer::Tokenizer& tok) {
  const auto vocab = static_cast<size_t>(std::max(tok.vocab_size(), 0));
  std::vector<char> keep(vocab, 0);
  std::vector<std::string> lead(vocab), inner(vocab);
  // Each id is judged on its own: split the vocabulary across cores.
  run_in_parallel(vocab, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      const auto t = static_cast<TokenId>(i);
      const TokenId one[] = {t}, two[] = {t, t};
      std::string alone = tok.decode(one);
      // Cheap rejection first: most tokens are not letters.
      if (alone.empty() || alone.size() > 64 ||
          !std::all_of(alone.begin() + (alone[0] == ' ' ? 1 : 0), alone.end(), is_ascii_letter))
        continue;
      std::string twice = tok.decode(two);
      if (!twice.starts_with(alone)) continue;
      std::string after = twice.substr(alone.size());
      if (!is_spaced_word(after)) continue;
      if (alone != after && alone != std::string_view(after).substr(1)) continue;
      const std::vector<TokenId> want_one{t}, want_two{t, t};
      if (tok.encode(alone) != want_one || tok.encode(twice) != want_two) continue;
      keep[i] = 1;
      lead[i] = std::move(alone);
      inner[i] = std::move(after);
    }
  });
  inner_offset_.push_back(0);
  for (size_t i = 0; i < vocab; ++i) {
    if (!keep[i]) continue;
    ids_.push_back(static_cast<TokenId>(i));
    lead_.push_back(std::move(lead[i]));
    inner_ += inner[i];
    inner_offset_.push_back(inner_.size());
  }
  if (ids_.size() < 2) {
    refuse(tok, "it has " + std::to_string(ids_.size()) +
                    " tokens that are a space and letters and encode back to themselves");
  }

  // Neighbours: every pool token next to others in three orders. A tokenizer whose
  // pre-tokenizer or merges join words fails here, whichever tokens it joins.
  std::vector<uint32_t> order(ids_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::vector<std::vector<uint32_t>> orders{order, {order.rbegin(), order.rend()}, order};
  Draw shuffle(0x5eed);
  auto& shuffled = orders[2];
  for (size_t i = shuffled.size() - 1; i > 0; --i)
    std::swap(shuffled[i], shuffled[shuffle.below(i + 1)]);
  for (const auto& indexes : orders) {
    std::vector<TokenId> ids;
    ids.reserve(indexes.size());
    for (uint32_t k : indexes) ids.push_back(ids_[k]);
    const std::string joined = text(indexes);
    if (tok.decode(ids) != joined) refuse(tok, "its decoder does not join whole words as expected");
    const std::vector<TokenId> back = tok.encode(joined);
    if (back != ids) {
      size_t at = 0;
      while (at < back.size() && at < ids.size() && back[at] == ids[at]) ++at;
      refuse(tok,
             "joined whole-word tokens do not encode back to themselves (first difference at "
             "token " +
                 std::to_string(at) + " of " + std::to_string(ids.size()) + ")");
    }
  }
}

std::string RoundTripPool::text(const std::vector<uint32_t>& indexes) const {
  std::string out;
  if (indexes.empty()) return out;
  size_t bytes = lead_[indexes[0]].size();
  for (size_t k = 1; k < indexes.size(); ++k)
    bytes += inner_offset_[indexes[k] + 1] - inner_offset_[indexes[k]];
  out.reserve(bytes);
  out += lead_[indexes[0]];
  for (size_t k = 1; k < indexes.size(); ++k)
    out.append(inner_, inner_offset_[indexes[k]],
               inner_offset_[indexes[k] + 1] - inner_offset_[indexes[k]]);
  return out;
}

size_t RoundTripPool::run_bytes(size_t first, size_t count, bool at_start) const {
  if (count == 0) return 0;
  const size_t n = ids_.size();
  first %= n;
  size_t bytes = 0;
  if (at_start) {
    bytes += lead_[first].size();
    first = (first + 1) % n;
    --count;
  }
  const size_t whole = count / n, rest = count % n;
  bytes += whole * inner_.size();
  const size_t end = first + rest;
  bytes += end <= n ? inner_offset_[end] - inner_offset_[first]
                    : (inner_.size() - inner_offset_[first]) + inner_offset_[end - n];
  return bytes;
}

void RoundTripPool::append_run(std::string& out, size_t first, size_t count, bool at_start) const {
  if (count == 0) return;
  const size_t n = ids_.size();
  first %= n;
  if (at_start) {
    out += lead_[first];
    first = (first + 1) % n;
    --count;
  }
  for (size_t k = 0; k < count / n; ++k) {  // runs longer than the pool wrap around whole
    out.append(inner_, inner_offset_[first], std::string::npos);
    out.append(inner_, 0, inner_offset_[first]);
  }
  const size_t end = first + count % n;
  if (end <= n) {
    out.append(inner_, inner_offset_[first], inner_offset_[end] - inner_offset_[first]);
  } else {
    out.append(inner_, inner_offset_[first], std::string::npos);
    out.append(inner_, 0, inner_offset_[end - n]);
  }
}

}  // namespace servebench::dataset
