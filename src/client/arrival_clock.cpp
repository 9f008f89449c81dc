#include "client/arrival_clock.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <thread>

#include "core/clock.h"

namespace servebench::client::detail {

namespace {

int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

bool enable_kernel_timestamps(int fd) {
  int one = 1;
  return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) == 0;
}

KernelStampsOn::KernelStampsOn(int64_t timeout_ns) {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  sockaddr_in self{};
  self.sin_family = AF_INET;
  self.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof self;
  if (!enable_kernel_timestamps(fd_) ||
      ::bind(fd_, reinterpret_cast<sockaddr*>(&self), sizeof self) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&self), &length) != 0)
    return;
  const int64_t deadline = core::mono_ns() + timeout_ns;
  char byte = 0;
  do {
    if (::sendto(fd_, &byte, 1, 0, reinterpret_cast<sockaddr*>(&self), sizeof self) != 1) return;
    const StampedRead read = receive_stamped(fd_, &byte, 1, /*kernel_stamps=*/true);
    if (read.bytes == 1 && read.kernel_stamp) {
      active_ = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  } while (core::mono_ns() < deadline);
}

KernelStampsOn::~KernelStampsOn() {
  if (fd_ >= 0) ::close(fd_);
}

StampedRead receive_stamped(int fd, char* buffer, size_t length, bool kernel_stamps) {
  // Raw system calls: libc's recv and recvmsg are thread-cancellation points, and in a process
  // with threads each call switches asynchronous cancellation on and off around the kernel call
  // (~2% of the client's CPU per paced event in perf). servebench never cancels a thread.
  StampedRead read;
  if (!kernel_stamps) {
    read.bytes = ::syscall(SYS_recvfrom, fd, buffer, length, 0, nullptr, nullptr);
    read.read_ns = read.arrival_ns = core::mono_ns();
    return read;
  }
  iovec part{buffer, length};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  read.bytes = ::syscall(SYS_recvmsg, fd, &message, 0);
  read.read_ns = read.arrival_ns = core::mono_ns();
  if (read.bytes <= 0) return read;
  for (cmsghdr* item = CMSG_FIRSTHDR(&message); item != nullptr;
       item = CMSG_NXTHDR(&message, item)) {
    if (item->cmsg_level != SOL_SOCKET || item->cmsg_type != SCM_TIMESTAMPNS) continue;
    timespec stamp;
    std::memcpy(&stamp, CMSG_DATA(item), sizeof stamp);
    const int64_t stamp_ns = static_cast<int64_t>(stamp.tv_sec) * 1'000'000'000 + stamp.tv_nsec;
    if (stamp_ns == 0) break;  // the segment was not stamped
    read.arrival_ns =
        kernel_arrival_mono_ns(stamp_ns, realtime_ns(), read.read_ns, &read.kernel_stamp);
    break;
  }
  return read;
}

int64_t kernel_arrival_mono_ns(int64_t kernel_realtime_ns, int64_t realtime_now_ns,
                               int64_t mono_now_ns, bool* trusted) {
  const int64_t age = realtime_now_ns - kernel_realtime_ns;
  // A few µs of "future" is the gap between reading the two clocks, not a step.
  constexpr int64_t kClockReadSlackNs = 100'000;
  *trusted = age >= -kClockReadSlackNs && age <= kMaxKernelAgeNs;
  if (!*trusted) return mono_now_ns;
  return mono_now_ns - std::max<int64_t>(age, 0);
}

int DelayHistogram::bucket_of(uint64_t value) {
  // Values below 2^kSubBits have a bucket each; above, a power of two splits into 2^kSubBits.
  if (value < (1u << kSubBits)) return static_cast<int>(value);
  const int exponent = std::bit_width(value) - 1;  // >= kSubBits
  const auto mantissa = static_cast<int>((value >> (exponent - kSubBits)) & ((1u << kSubBits) - 1));
  return ((exponent - kSubBits + 1) << kSubBits) + mantissa;
}

uint64_t DelayHistogram::upper_bound_of(int bucket) {
  if (bucket < (1 << kSubBits)) return static_cast<uint64_t>(bucket);
  const int exponent = (bucket >> kSubBits) + kSubBits - 1;
  const uint64_t mantissa = static_cast<uint64_t>(bucket & ((1 << kSubBits) - 1));
  const uint64_t low = (uint64_t{1} << exponent) + (mantissa << (exponent - kSubBits));
  return low + (uint64_t{1} << (exponent - kSubBits)) - 1;
}

void DelayHistogram::add(int64_t ns) {
  const auto value = static_cast<uint64_t>(std::max<int64_t>(ns, 0));
  ++buckets_[static_cast<size_t>(bucket_of(value))];
  ++count_;
  max_ns_ = std::max(max_ns_, static_cast<int64_t>(value));
}

void DelayHistogram::merge(const DelayHistogram& other) {
  for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  max_ns_ = std::max(max_ns_, other.max_ns_);
}

int64_t DelayHistogram::quantile_ns(double q) const {
  if (count_ == 0) return 0;
  // The sample of rank ceil(q * count), at least the first.
  const auto rank = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_))));
  uint64_t seen = 0;
  for (int bucket = 0; bucket < kBuckets; ++bucket) {
    seen += buckets_[static_cast<size_t>(bucket)];
    if (seen >= rank) {
      return std::min(static_cast<int64_t>(upper_bound_of(bucket)), max_ns_);
    }
  }
  return max_ns_;
}

}  // namespace servebench::client::detail
