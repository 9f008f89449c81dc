#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "tokenizer/utf8.h"

namespace servebench::tokenizer::detail {

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

// Per-thread cache of piece → ids: direct-mapped, a collision replaces the old entry. Each
// thread keeps one per model (by serial); a thread that has seen many models starts afresh.
struct PieceCache {
  static constexpr size_t kSlots = 1 << 14;
  static constexpr size_t kMaxPieceBytes = 64;
  struct Entry {
    std::string key;
    std::vector<TokenId> ids;
  };
  std::vector<Entry> entries{kSlots};
};

PieceCache& cache_for(uint64_t serial) {
  thread_local std::unordered_map<uint64_t, std::unique_ptr<PieceCache>> caches;
  auto it = caches.find(serial);
  if (it != caches.end()) return *it->second;
  if (caches.size() >= 8) caches.clear();
  return *caches.emplace(serial, std::make_unique<PieceCache>()).first->second;
}

}  // namespace

BpeModel::BpeModel(const std::vector<std::pair<std::string, TokenId>>& vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options)
    : options_(options), serial_(g_next_serial.fetch_add(1)) {
  vocab_.reserve(vocab.size());
  for (const auto& [key, id] : vocab) vocab_.emplace(key, id);
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
  auto it = vocab_.find(key);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
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
  auto& entry = cache.entries[std::hash<std::string_view>{}(piece) & (PieceCache::kSlots - 1)];
  if (entry.key == piece && !entry.ids.empty()) {
    out.insert(out.end(), entry.ids.begin(), entry.ids.end());
    return;
  }
  const size_t mark = out.size();
  merge_piece(piece, out);
  entry.key.assign(piece);
  entry.ids.assign(out.begin() + static_cast<std::ptrdiff_t>(mark), out.end());
}

void BpeModel::merge_piece(std::string_view piece, std::vector<TokenId>& out) const {
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

  // Initial symbols.
  bool last_was_unk = false;
  auto push = [&](TokenId id) { symbols.push_back({id, static_cast<int>(symbols.size()) - 1, 0}); };
  if (options_.byte_level) {
    for (char c : piece) {
      TokenId id = byte_ids_[static_cast<unsigned char>(c)];
      if (id >= 0) push(id);
    }
  } else {
    for (size_t i = 0; i < piece.size();) {
      size_t len =
          std::min(utf8_char_length(static_cast<unsigned char>(piece[i])), piece.size() - i);
      std::string_view ch = piece.substr(i, len);
      i += len;
      if (auto id = find(ch)) {
        push(*id);
        last_was_unk = false;
        continue;
      }
      if (options_.byte_fallback) {
        bool all = true;
        for (char c : ch) all = all && fallback_[static_cast<unsigned char>(c)] >= 0;
        if (all) {
          for (char c : ch) push(fallback_[static_cast<unsigned char>(c)]);
          last_was_unk = false;
          continue;
        }
      }
      if (options_.unk_id) {
        if (!(options_.fuse_unk && last_was_unk)) push(*options_.unk_id);
        last_was_unk = true;
      }
    }
  }
  const int n = static_cast<int>(symbols.size());
  for (int i = 0; i < n; ++i) symbols[static_cast<size_t>(i)].next = i + 1 < n ? i + 1 : -1;

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
  for (int i = n > 0 ? 0 : -1; i >= 0; i = symbols[static_cast<size_t>(i)].next)
    out.push_back(symbols[static_cast<size_t>(i)].id);
}

}  // namespace servebench::tokenizer::detail
