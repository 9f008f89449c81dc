#include "dataset/synth.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

namespace servebench::dataset {
namespace {
// vLLM's retry budget for decode → re-encode → adjust.
constexpr int kMaxRetry = 10;
std::atomic<size_t> g_parallel_threads{0};
}  // namespace

void set_parallel_threads(size_t threads) {
  g_parallel_threads = threads;
}

uint64_t Draw::below(uint64_t n) {
  if (n <= 1) return 0;
  unsigned __int128 m = static_cast<unsigned __int128>(engine_()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(engine_()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

void Draw::append_ids(std::vector<tokenizer::TokenId>& ids, size_t count, int32_t vocab) {
  for (size_t i = 0; i < count; ++i) {
    ids.push_back(static_cast<tokenizer::TokenId>(below(static_cast<uint64_t>(vocab))));
  }
}

namespace {

Converged settle(const tokenizer::Tokenizer& tok, std::vector<tokenizer::TokenId> ids,
                 size_t target, const Padding& pad, bool want_ids, int retries) {
  Converged out;
  for (int remaining = retries;; --remaining) {
    out.text = tok.decode(ids);
    if (!want_ids && tok.count(out.text) == target) {
      out.tokens = target;
      return out;
    }
    ids = tok.encode(out.text);
    if (ids.size() == target) break;
    if (remaining <= 0) {
      out.mismatch = static_cast<int64_t>(ids.size()) - static_cast<int64_t>(target);
      break;
    }
    if (ids.size() > target) {
      ids.resize(target);
    } else if (!pad(ids, target - ids.size())) {
      out.stopped_for_padding = true;
      out.retries_left = remaining;
      out.ids = std::move(ids);
      out.text = std::string();  // resume_after_padding decodes again
      return out;
    }
  }
  out.tokens = ids.size();
  if (want_ids) out.ids = std::move(ids);
  return out;
}

}  // namespace

Converged decode_to_target_len(const tokenizer::Tokenizer& tok, std::vector<tokenizer::TokenId> ids,
                               size_t target, const Padding& pad, bool want_ids) {
  return settle(tok, std::move(ids), target, pad, want_ids, kMaxRetry);
}

Converged resume_after_padding(const tokenizer::Tokenizer& tok, Converged stopped, size_t target,
                               const Padding& pad, bool want_ids) {
  std::vector<tokenizer::TokenId> ids = std::move(stopped.ids);
  pad(ids, target - ids.size());
  return settle(tok, std::move(ids), target, pad, want_ids, stopped.retries_left - 1);
}

Converged decode_to_target_len(const tokenizer::Tokenizer& tok, std::vector<tokenizer::TokenId> ids,
                               size_t target, Draw& draw, bool want_ids) {
  return decode_to_target_len(
      tok, std::move(ids), target,
      [&](std::vector<tokenizer::TokenId>& padded, size_t count) {
        draw.append_ids(padded, count, tok.vocab_size());
        return true;
      },
      want_ids);
}

void run_in_parallel(size_t count, const std::function<void(size_t, size_t)>& work) {
  constexpr size_t kMinPerThread = 256;  // below this a thread costs more than it saves
  const size_t limit = g_parallel_threads;
  size_t threads = std::max<size_t>(1, limit ? limit : std::thread::hardware_concurrency());
  threads = std::min(threads, std::max<size_t>(1, count / kMinPerThread));
  if (threads <= 1) {
    work(0, count);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> failures(threads);
  size_t per_thread = (count + threads - 1) / threads;
  for (size_t t = 0; t < threads; ++t) {
    size_t first = std::min(count, t * per_thread), last = std::min(count, first + per_thread);
    pool.emplace_back([&, t, first, last] {
      try {
        work(first, last);
      } catch (...) {
        failures[t] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

uint64_t mix_seed(uint64_t seed, uint64_t key) {
  // splitmix64 of the pair: nearby keys give unrelated streams.
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + key + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace servebench::dataset
