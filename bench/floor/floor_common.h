// File: bench/floor/floor_common.h
// Small helpers shared by the floor programs (floor_sse_server, floor_reader, floor_pacer):
// the clock, CPU time, nearest-rank percentiles, strict option parsing, a loopback connection.
// The floor programs are deliberately independent of the servebench parts: they are the
// baseline servebench is measured against, so they use nothing but the C library and the
// kernel.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace floor_bench {

// CLOCK_MONOTONIC in ns: the clock servebench and its simulator use too.
inline int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline timespec to_timespec(int64_t ns) {
  return timespec{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

// User and system CPU of this process in ns (getrusage).
struct CpuTime {
  int64_t user_ns = 0;
  int64_t system_ns = 0;
  int64_t total_ns() const { return user_ns + system_ns; }
};

inline CpuTime cpu_now() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto ns = [](const timeval& tv) {
    return static_cast<int64_t>(tv.tv_sec) * 1'000'000'000 +
           static_cast<int64_t>(tv.tv_usec) * 1000;
  };
  return CpuTime{ns(ru.ru_utime), ns(ru.ru_stime)};
}

[[noreturn]] inline void die_errno(const char* what) {
  std::fprintf(stderr, "error: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

[[noreturn]] inline void die_usage(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::exit(2);
}

// A non-blocking TCP_NODELAY connection to 127.0.0.1:port, retried for up to ~5 s while the
// server starts; exits with one line otherwise.
inline int connect_loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int tries = 0; tries < 500; tries++) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die_errno("socket");
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
      return fd;
    }
    int err = errno;
    close(fd);
    if (err != ECONNREFUSED) {
      errno = err;
      die_errno("connect 127.0.0.1");
    }
    timespec ts{0, 10'000'000};
    nanosleep(&ts, nullptr);
  }
  std::fprintf(stderr, "error: connect 127.0.0.1:%d refused for 5 s\n", port);
  std::exit(1);
}

// A whole-string integer in [lo, hi]; exits with one line naming the option otherwise.
inline long long parse_int(const char* option, const char* text, long long lo, long long hi) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
    die_usage(std::string("option ") + option + ": '" + text + "' is not an integer in [" +
              std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

// Nearest-rank percentile (p in [0, 100]) of sorted samples; 0 for none.
inline int64_t percentile_sorted(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<size_t>(p / 100.0 * static_cast<double>(sorted.size()) + 0.999999999);
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

// " key_p50=… key_p99=… key_p999=… key_max=…" in µs, for the one-line key=value outputs.
inline std::string percentiles_us(const char* key, std::vector<int64_t> samples) {
  if (samples.empty()) return std::string(" ") + key + "_n=0";
  std::sort(samples.begin(), samples.end());
  char line[256];
  std::snprintf(line, sizeof line,
                " %s_n=%zu %s_us_min=%.1f %s_us_p50=%.1f %s_us_p90=%.1f %s_us_p99=%.1f "
                "%s_us_p999=%.1f %s_us_max=%.1f",
                key, samples.size(), key, samples.front() / 1e3, key,
                percentile_sorted(samples, 50) / 1e3, key, percentile_sorted(samples, 90) / 1e3,
                key, percentile_sorted(samples, 99) / 1e3, key,
                percentile_sorted(samples, 99.9) / 1e3, key, samples.back() / 1e3);
  return line;
}

// splitmix64: a tiny seeded generator (ids, jitter, Poisson gaps).
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace floor_bench
