#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unordered_map>
#include <utility>

#include "tokenizer/utf8.h"

namespace servebench::tokenizer::detail {
namespace {

// A fast hash of short byte strings (8 bytes a step, then murmur's finalizer): the vocabulary
// and the piece cache hash every piece.
uint64_t hash_bytes(std::string_view s) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (s.size() * 0xff51afd7ed558ccdull);
  const char* p = s.data();
  size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * 0x94d049bb133111ebull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

}  // namespace

// key bytes → id. Keys live back to back in one string; a slot holds where, and the hash's low
// half to skip most comparisons.
struct BpeModel::VocabTable {
  struct Slot {
    uint32_t tag = 0;
    uint32_t offset = 0;
    uint32_t length = 0;
    TokenId id = -1;  // -1: empty
  };
  std::string keys;
  std::vector<Slot> slots;
  uint64_t mask = 0;

  explicit VocabTable(const std::vector<std::pair<std::string, TokenId>>& vocab) {
    size_t capacity = 16;
    while (capacity < vocab.size() * 2) capacity *= 2;
    slots.resize(capacity);
    mask = capacity - 1;
    size_t bytes = 0;
    for (const auto& entry : vocab) bytes += entry.first.size();
    keys.reserve(bytes);
    for (const auto& [key, id] : vocab) {
      const uint64_t h = hash_bytes(key);
      Slot* slot = probe(key, h);
      if (slot->id >= 0) continue;  // a repeated key keeps its first id (as emplace did)
      *slot = {static_cast<uint32_t>(h), static_cast<uint32_t>(keys.size()),
               static_cast<uint32_t>(key.size()), id};
      keys += key;
    }
  }
  // The slot holding `key`, or the empty slot where it would go.
  Slot* probe(std::string_view key, uint64_t h) {
    return const_cast<Slot*>(std::as_const(*this).probe(key, h));
  }
  const Slot* probe(std::string_view key, uint64_t h) const {
    const auto tag = static_cast<uint32_t>(h);
    for (uint64_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots[i];
      if (s.id < 0) return &s;
      if (s.tag == tag && s.length == key.size() &&
          std::memcmp(keys.data() + s.offset, key.data(), key.size()) == 0)
        return &s;
    }
  }
  std::optional<TokenId> find(std::string_view key) const {
    const Slot* s = probe(key, hash_bytes(key));
    if (s->id < 0) return std::nullopt;
    return s->id;
  }
};

// (left, right) → (rank, merged id), open addressing with linear probing.
struct BpeModel::MergeTable {
  struct Slot {
    uint64_t key = kEmpty;
    uint32_t rank = 0;
    TokenId id = 0;
  };
  static constexpr uint64_t kEmpty = ~0ull;
  std::vector<Slot> slots;
  uint64_t mask = 0;

  explicit MergeTable(size_t count) {
    size_t capacity = 16;
    while (capacity < count * 2) capacity *= 2;
    slots.resize(capacity);
    mask = capacity - 1;
  }
  static uint64_t key_of(TokenId a, TokenId b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  static uint64_t hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
  }
  // A pair listed twice keeps its last rank, as Hugging Face's map built from the list does.
  void put(TokenId a, TokenId b, uint32_t rank, TokenId id) {
    const uint64_t k = key_of(a, b);
    for (uint64_t i = hash(k) & mask;; i = (i + 1) & mask) {
      if (slots[i].key == kEmpty || slots[i].key == k) {
        slots[i] = {k, rank, id};
        return;
      }
    }
  }
  const Slot* get(TokenId a, TokenId b) const {
    const uint64_t k = key_of(a, b);
    for (uint64_t i = hash(k) & mask;; i = (i + 1) & mask) {
      if (slots[i].key == k) return &slots[i];
      if (slots[i].key == kEmpty) return nullptr;
    }
  }
};

namespace {

std::atomic<uint64_t> g_next_serial{1};

// Per-thread cache of piece → ids: direct-mapped, a collision replaces the old entry. Entries
// are fixed-size and allocation-free (a piece longer than kMaxPieceBytes, or of more than
// kMaxIds tokens, is not cached); the table is calloc'd, so pages are only touched when used.
// Each thread keeps one per model (by serial); a thread that has seen many models starts afresh.
struct PieceCache {
  static constexpr size_t kSlots = 1 << 17;  // 8 MiB a thread: the random dataset's pieces are many
  static constexpr size_t kMaxPieceBytes = 30;
  static constexpr size_t kMaxIds = 6;
  struct Entry {  // 64 bytes, one cache line
    uint64_t hash;
    uint8_t key_length;
    uint8_t id_count;  // 0: empty
    char key[kMaxPieceBytes];
    TokenId ids[kMaxIds];
  };
  static_assert(sizeof(Entry) == 64);
  struct Free {
    void operator()(Entry* e) const { std::free(e); }
  };
  std::unique_ptr<Entry[], Free> entries{static_cast<Entry*>(std::calloc(kSlots, sizeof(Entry)))};
};

PieceCache& cache_for(uint64_t serial) {
  thread_local std::unordered_map<uint64_t, std::unique_ptr<PieceCache>> caches;
  auto it = caches.find(serial);
  if (it != caches.end()) return *it->second;
  if (caches.size() >= 8) caches.clear();
  auto cache = std::make_unique<PieceCache>();
  if (!cache->entries) throw std::bad_alloc();
  return *caches.emplace(serial, std::move(cache)).first->second;
}

}  // namespace

BpeModel::BpeModel(const std::vector<std::pair<std::string, TokenId>>& vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options)
    : options_(options),
      vocab_(std::make_unique<VocabTable>(vocab)),
      serial_(g_next_serial.fetch_add(1)) {
  byte_ids_.assign(256, -1);
  fallback_.assign(256, -1);
  for (int b = 0; b < 256; ++b) {
    if (auto id = find(std::string(1, static_cast<char>(b))))
      byte_ids_[static_cast<size_t>(b)] = *id;
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    if (auto id = find(name)) fallback_[static_cast<size_t>(b)] = *id;
  }
  merges_ = std::make_unique<MergeTable>(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    auto a = find(left), b = find(right), merged = find(left + right);
    if (!a || !b || !merged) {
      throw BadMerge{rank, !a ? left : !b ? right : left + right};
    }
    merges_->put(*a, *b, static_cast<uint32_t>(rank), *merged);
  }
}

BpeModel::~BpeModel() = default;

std::optional<TokenId> BpeModel::find(std::string_view key) const {
  return vocab_->find(key);
}

void BpeModel::encode(std::string_view piece, std::vector<TokenId>& out) const {
  if (piece.empty()) return;
  if (options_.ignore_merges) {
    if (auto id = find(piece)) {
      out.push_back(*id);
      return;
    }
  }
  if (piece.size() > PieceCache::kMaxPieceBytes) return merge_piece(piece, out);
  PieceCache& cache = cache_for(serial_);
  const uint64_t h = hash_bytes(piece);
  PieceCache::Entry& entry = cache.entries[h & (PieceCache::kSlots - 1)];
  if (entry.id_count > 0 && entry.hash == h && entry.key_length == piece.size() &&
      std::memcmp(entry.key, piece.data(), piece.size()) == 0) {
    out.insert(out.end(), entry.ids, entry.ids + entry.id_count);
    return;
  }
  const size_t mark = out.size();
  merge_piece(piece, out);
  const size_t count = out.size() - mark;
  if (count == 0 || count > PieceCache::kMaxIds) return;
  entry.hash = h;
  entry.key_length = static_cast<uint8_t>(piece.size());
  entry.id_count = static_cast<uint8_t>(count);
  std::memcpy(entry.key, piece.data(), piece.size());
  std::copy(out.begin() + static_cast<std::ptrdiff_t>(mark), out.end(), entry.ids);
}

void BpeModel::initial_symbols(std::string_view piece, std::vector<TokenId>& out) const {
  if (options_.byte_level) {
    for (char c : piece) {
      TokenId id = byte_ids_[static_cast<unsigned char>(c)];
      if (id >= 0) out.push_back(id);
    }
    return;
  }
  bool last_was_unk = false;
  for (size_t i = 0; i < piece.size();) {
    size_t len = std::min(utf8_char_length(static_cast<unsigned char>(piece[i])), piece.size() - i);
    std::string_view ch = piece.substr(i, len);
    i += len;
    if (auto id = find(ch)) {
      out.push_back(*id);
      last_was_unk = false;
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      for (char c : ch) all = all && fallback_[static_cast<unsigned char>(c)] >= 0;
      if (all) {
        for (char c : ch) out.push_back(fallback_[static_cast<unsigned char>(c)]);
        last_was_unk = false;
        continue;
      }
    }
    if (options_.unk_id) {
      if (!(options_.fuse_unk && last_was_unk)) out.push_back(*options_.unk_id);
      last_was_unk = true;
    }
  }
}

void BpeModel::merge_piece(std::string_view piece, std::vector<TokenId>& out) const {
  thread_local std::vector<TokenId> start;
  start.clear();
  initial_symbols(piece, start);
  const int n = static_cast<int>(start.size());
  if (n <= 1) {
    out.insert(out.end(), start.begin(), start.end());
    return;
  }
  constexpr uint32_t kNoMerge = ~0u;

  // Short pieces (most words): symbols and the rank of each adjacent pair in flat arrays; each
  // step merges the lowest rank, leftmost first, and looks up only the two pairs it changed.
  // This picks the same merge as the heap below at every step, without the heap's cost.
  constexpr int kLinearMax = 48;
  if (n <= kLinearMax) {
    TokenId symbols[kLinearMax], merged[kLinearMax];
    uint32_t ranks[kLinearMax];
    auto pair_rank = [&](int i) {
      if (const auto* m = merges_->get(symbols[i], symbols[i + 1])) {
        merged[i] = m->id;
        return m->rank;
      }
      return kNoMerge;
    };
    std::copy(start.begin(), start.end(), symbols);
    int count = n;
    for (int i = 0; i + 1 < count; ++i) ranks[i] = pair_rank(i);
    for (;;) {
      int best = -1;
      uint32_t best_rank = kNoMerge;
      for (int i = 0; i + 1 < count; ++i) {
        if (ranks[i] < best_rank) {
          best_rank = ranks[i];
          best = i;
        }
      }
      if (best < 0) break;
      symbols[best] = merged[best];
      // Remove symbol best + 1 and pair best (its pair with best + 1 is gone).
      for (int i = best + 1; i + 1 < count; ++i) symbols[i] = symbols[i + 1];
      for (int i = best + 1; i + 2 < count; ++i) {
        ranks[i] = ranks[i + 1];
        merged[i] = merged[i + 1];
      }
      --count;
      if (best > 0) ranks[best - 1] = pair_rank(best - 1);
      if (best + 1 < count) ranks[best] = pair_rank(best);
    }
    out.insert(out.end(), symbols, symbols + count);
    return;
  }

  // Long pieces: a heap of candidate merges over a linked list of symbols (Hugging Face's
  // Word::merge_all).
  struct Symbol {
    TokenId id;
    int prev, next;
  };
  struct Candidate {
    uint32_t rank;
    int pos;
    TokenId id;
    // std::push_heap keeps the largest on top: lowest rank, then leftmost, wins.
    bool operator<(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Candidate> heap;
  symbols.clear();
  heap.clear();
  for (int i = 0; i < n; ++i)
    symbols.push_back({start[static_cast<size_t>(i)], i - 1, i + 1 < n ? i + 1 : -1});

  auto consider = [&](int pos) {
    const Symbol& s = symbols[static_cast<size_t>(pos)];
    if (s.next < 0) return;
    if (const auto* m = merges_->get(s.id, symbols[static_cast<size_t>(s.next)].id)) {
      heap.push_back({m->rank, pos, m->id});
      std::push_heap(heap.begin(), heap.end());
    }
  };
  for (int i = 0; i + 1 < n; ++i) consider(i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[static_cast<size_t>(top.pos)];
    if (left.id < 0 || left.next < 0) continue;  // merged away, or nothing to the right
    Symbol& right = symbols[static_cast<size_t>(left.next)];
    const auto* m = merges_->get(left.id, right.id);
    if (!m || m->id != top.id || m->rank != top.rank) continue;  // stale candidate
    left.id = top.id;
    right.id = -1;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = top.pos;
    if (left.prev >= 0) consider(left.prev);
    consider(top.pos);
  }
  for (int i = 0; i >= 0; i = symbols[static_cast<size_t>(i)].next)
    out.push_back(symbols[static_cast<size_t>(i)].id);
}

}  // namespace servebench::tokenizer::detail
