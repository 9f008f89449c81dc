// File: client/arrival_clock.h (internal to the client part)
// When bytes arrived. A client that stamps a token when it gets round to reading it adds its own
// queueing to TTFT and ITL: at 1,000 paced streams on one core the read comes up to ~1.6 ms
// after the bytes reached the machine (docs/performance.md). With SO_TIMESTAMPNS the kernel
// stamps each segment as it enters the socket (on loopback: inside the server's send()), and
// recvmsg hands that stamp back, so the arrival time no longer depends on how busy the client
// is. The stamp is CLOCK_REALTIME; it is moved onto CLOCK_MONOTONIC (core::mono_ns) with the
// offset between the two clocks read at the same moment as the read.
//
// TCP returns the stamp of the last segment a read took: bytes that waited for a later segment
// in the socket get that segment's (later) time, never an earlier one, so a kernel arrival is
// always between the true arrival and the read.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace servebench::client::detail {

// Asks the kernel to stamp the socket's incoming data; false where it cannot.
bool enable_kernel_timestamps(int fd);

// Keeps the kernel's receive stamping on while it lives, and makes sure it is on before a run
// starts. Linux switches stamping on for the whole stack (a static key) from a work queue some
// time after the first socket asks, so without this the first segments of a run's first
// connections (77 of 1,000 response heads in one burst) arrived unstamped.
class KernelStampsOn {
 public:
  // Opens a loopback UDP socket that asks for stamps and sends itself datagrams until one comes
  // back stamped, for at most `timeout_ns`.
  explicit KernelStampsOn(int64_t timeout_ns = 200'000'000);
  ~KernelStampsOn();
  KernelStampsOn(const KernelStampsOn&) = delete;
  KernelStampsOn& operator=(const KernelStampsOn&) = delete;
  bool active() const { return active_; }  // a datagram came back stamped

 private:
  int fd_ = -1;
  bool active_ = false;
};

struct StampedRead {
  ssize_t bytes = 0;          // recv's result (errno set when < 0)
  int64_t read_ns = 0;        // core::mono_ns() right after the read
  int64_t arrival_ns = 0;     // the kernel's stamp on the monotonic clock, else read_ns
  bool kernel_stamp = false;  // arrival_ns came from the kernel
};

// One recv into `buffer`; with `kernel_stamps`, through recvmsg with room for the stamp.
StampedRead receive_stamped(int fd, char* buffer, size_t length, bool kernel_stamps);

// The kernel's realtime stamp moved onto the monotonic clock, given both clocks read at one
// moment (`realtime_now_ns`, `mono_now_ns`). A stamp from the future or from more than
// `kMaxKernelAgeNs` ago (the realtime clock was stepped between arrival and read) is not
// trusted: the result is then `mono_now_ns`, and `*trusted` false.
constexpr int64_t kMaxKernelAgeNs = 60'000'000'000;
int64_t kernel_arrival_mono_ns(int64_t kernel_realtime_ns, int64_t realtime_now_ns,
                               int64_t mono_now_ns, bool* trusted);

// Distribution of non-negative durations in ns (how long bytes waited between arrival and the
// client's read), in log-linear buckets: 16 per power of two, so a quantile is within 1/16
// (6.25%) of the true value. Fixed size, no allocation: one per event loop, merged at the end.
class DelayHistogram {
 public:
  void add(int64_t ns);
  void merge(const DelayHistogram& other);
  uint64_t count() const { return count_; }
  int64_t max_ns() const { return max_ns_; }
  // The value below which a fraction `q` (0..1) of the samples lie (the bucket's upper bound,
  // capped at the maximum seen); 0 when empty.
  int64_t quantile_ns(double q) const;

 private:
  static constexpr int kSubBits = 4;  // 16 buckets per power of two
  static constexpr int kBuckets = (64 - kSubBits + 1) << kSubBits;
  static int bucket_of(uint64_t value);
  static uint64_t upper_bound_of(int bucket);

  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  int64_t max_ns_ = 0;
};

}  // namespace servebench::client::detail
