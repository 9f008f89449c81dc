// Kernel receive stamps on real loopback sockets, their move onto the monotonic clock, and the
// read-delay histogram's quantiles.
#include "client/arrival_clock.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "core/clock.h"

namespace servebench::client::detail {
namespace {

// A connected loopback TCP pair: {client, server}; the client stamps arrivals when asked (with
// stamping made sure of first, as the transport does: a fresh process would otherwise race the
// kernel switching it on).
struct SocketPair {
  std::optional<KernelStampsOn> stamps_on;
  int client = -1, server = -1;
  explicit SocketPair(bool stamps) {
    if (stamps) {
      EXPECT_TRUE(stamps_on.emplace().active());
    }
    int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    EXPECT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(::listen(listener, 1), 0);
    EXPECT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
    client = ::socket(AF_INET, SOCK_STREAM, 0);
    if (stamps) {
      EXPECT_TRUE(enable_kernel_timestamps(client));
    }
    EXPECT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    server = ::accept(listener, nullptr, nullptr);
    ::close(listener);
  }
  ~SocketPair() {
    ::close(client);
    ::close(server);
  }
};

TEST(KernelStampsOn, ADatagramComesBackStamped) {
  KernelStampsOn on;
  EXPECT_TRUE(on.active());
}

// Linux stamps for the whole stack or not at all, switched by a reference count over every
// process's stamping sockets (from a work queue). Other test processes opening and closing such
// sockets can leave a segment unstamped now and then (the transport then times the read, and
// the run says "mixed"), so a check that needs a stamp tries a few times.
constexpr int kStampAttempts = 5;

TEST(ReceiveStamped, KernelStampIsWhenTheBytesArrivedNotWhenTheyWereRead) {
  SocketPair pair(/*stamps=*/true);
  int stamped = 0;
  for (int attempt = 0; attempt < kStampAttempts && stamped == 0; ++attempt) {
    const int64_t before_send = core::mono_ns();
    ASSERT_EQ(::send(pair.server, "data", 4, 0), 4);
    const int64_t after_send = core::mono_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // a busy client, late to read

    char buffer[64];
    const StampedRead read = receive_stamped(pair.client, buffer, sizeof buffer, true);
    ASSERT_EQ(read.bytes, 4);
    if (!read.kernel_stamp) {
      EXPECT_EQ(read.arrival_ns, read.read_ns);
      continue;
    }
    ++stamped;
    // On loopback the segment is queued inside the sender's send(): the stamp lies within it
    // (plus the few µs between reading the two clocks), while the read came 30 ms later.
    EXPECT_GE(read.arrival_ns, before_send - 200'000);
    EXPECT_LE(read.arrival_ns, after_send + 200'000);
    EXPECT_GE(read.read_ns - read.arrival_ns, 25'000'000);
  }
  EXPECT_EQ(stamped, 1);
}

TEST(ReceiveStamped, TwoSegmentsInOneReadGetTheLaterOnesStamp) {
  SocketPair pair(/*stamps=*/true);
  int stamped = 0;
  for (int attempt = 0; attempt < kStampAttempts && stamped == 0; ++attempt) {
    ASSERT_EQ(::send(pair.server, "a", 1, 0), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const int64_t second_send = core::mono_ns();
    ASSERT_EQ(::send(pair.server, "b", 1, 0), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));

    char buffer[64];
    const StampedRead read = receive_stamped(pair.client, buffer, sizeof buffer, true);
    ASSERT_EQ(read.bytes, 2);
    if (!read.kernel_stamp) continue;
    ++stamped;
    EXPECT_GE(read.arrival_ns, second_send - 200'000);  // never earlier than the last segment
    EXPECT_LE(read.arrival_ns, read.read_ns);
  }
  EXPECT_EQ(stamped, 1);
}

TEST(ReceiveStamped, WithoutStampsTheArrivalIsTheRead) {
  SocketPair pair(/*stamps=*/false);
  ASSERT_EQ(::send(pair.server, "data", 4, 0), 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  char buffer[64];
  for (bool ask : {true, false}) {  // asking on a socket that was never set up finds no stamp
    if (!ask) {
      ASSERT_EQ(::send(pair.server, "more", 4, 0), 4);
    }
    const StampedRead read = receive_stamped(pair.client, buffer, sizeof buffer, ask);
    ASSERT_EQ(read.bytes, 4);
    EXPECT_FALSE(read.kernel_stamp);
    EXPECT_EQ(read.arrival_ns, read.read_ns);
  }
}

TEST(ReceiveStamped, EndOfStreamAndErrorsPassThrough) {
  SocketPair pair(/*stamps=*/true);
  ::shutdown(pair.server, SHUT_WR);
  char buffer[8];
  EXPECT_EQ(receive_stamped(pair.client, buffer, sizeof buffer, true).bytes, 0);
  EXPECT_LT(receive_stamped(-1, buffer, sizeof buffer, true).bytes, 0);
}

TEST(KernelArrivalMono, MovesTheStampByItsAge) {
  bool trusted = false;
  EXPECT_EQ(kernel_arrival_mono_ns(1'000'000'000, 1'003'000'000, 50'000'000, &trusted), 47'000'000);
  EXPECT_TRUE(trusted);
  // A stamp a few µs in the future is the gap between the two clock reads: age 0.
  EXPECT_EQ(kernel_arrival_mono_ns(1'000'005'000, 1'000'000'000, 50'000'000, &trusted), 50'000'000);
  EXPECT_TRUE(trusted);
}

TEST(KernelArrivalMono, AStepOfTheRealtimeClockIsNotTrusted) {
  bool trusted = true;
  // The realtime clock went back 1 s between arrival and read: the stamp is "in the future".
  EXPECT_EQ(kernel_arrival_mono_ns(2'000'000'000, 1'000'000'000, 50'000'000, &trusted), 50'000'000);
  EXPECT_FALSE(trusted);
  // Forward by more than kMaxKernelAgeNs.
  EXPECT_EQ(kernel_arrival_mono_ns(0, kMaxKernelAgeNs + 1, 50'000'000, &trusted), 50'000'000);
  EXPECT_FALSE(trusted);
}

TEST(DelayHistogram, EmptyIsZero) {
  DelayHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.quantile_ns(0.5), 0);
  EXPECT_EQ(h.max_ns(), 0);
}

TEST(DelayHistogram, SmallValuesAreExact) {
  DelayHistogram h;
  for (int v = 0; v < 16; ++v) h.add(v);
  EXPECT_EQ(h.quantile_ns(0.0), 0);
  EXPECT_EQ(h.quantile_ns(0.5), 7);  // the 8th of 16
  EXPECT_EQ(h.quantile_ns(1.0), 15);
  h.add(-5);  // a negative delay counts as 0
  EXPECT_EQ(h.count(), 17u);
  EXPECT_EQ(h.quantile_ns(0.0), 0);
}

TEST(DelayHistogram, QuantilesWithinOneSixteenthOfTheExactOnes) {
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> delay(std::log(50'000.0), 2.0);  // ns, wide spread
  std::vector<int64_t> values;
  DelayHistogram h;
  for (int i = 0; i < 100'000; ++i) {
    auto v = static_cast<int64_t>(delay(random));
    values.push_back(v);
    h.add(v);
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.01, 0.5, 0.9, 0.99, 0.999}) {
    SCOPED_TRACE(q);
    const int64_t exact = values[static_cast<size_t>(std::ceil(q * values.size())) - 1];
    const int64_t estimate = h.quantile_ns(q);
    EXPECT_GE(estimate, exact);  // a bucket's upper bound
    EXPECT_LE(static_cast<double>(estimate), static_cast<double>(exact) * (1 + 1.0 / 16) + 1);
  }
  EXPECT_EQ(h.max_ns(), values.back());
  EXPECT_EQ(h.quantile_ns(1.0), values.back());
}

TEST(DelayHistogram, MergeAddsCountsAndKeepsTheMaximum) {
  DelayHistogram a, b;
  for (int i = 0; i < 90; ++i) a.add(1'000);
  for (int i = 0; i < 10; ++i) b.add(1'000'000'000'000);  // 1,000 s: the top buckets hold it
  a.merge(b);
  EXPECT_EQ(a.count(), 100u);
  EXPECT_EQ(a.max_ns(), 1'000'000'000'000);
  EXPECT_LE(a.quantile_ns(0.9), 1'000 + 1'000 / 16);
  EXPECT_EQ(a.quantile_ns(0.95), 1'000'000'000'000);
}

}  // namespace
}  // namespace servebench::client::detail
