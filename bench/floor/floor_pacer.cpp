// File: bench/floor/floor_pacer.cpp
// The pacing floor: how precisely one thread keeps an absolute schedule of send times on this
// machine with timerfd (TFD_TIMER_ABSTIME, waited on with epoll) followed by a short spin on
// clock_gettime, the method servebench's client uses. Builds N = rate * seconds due times
// (Poisson with a fixed seed, or constant spacing), waits for each, and records
// lateness = clock after the wait - due. A due time already past is not waited for, so falling
// behind shows up as lateness of the following sends, as it would for a real pacer.
//
//   floor_pacer [--rate R] [--seconds D] [--dist poisson|const] [--spin-us S] [--seed N]
//   With no --rate, runs 1k, 10k and 50k per second, Poisson then constant, D seconds each.
// Prints one line per run: lateness p50/p90/p99/p99.9/max in µs and the CPU used (% of a core).
#include <getopt.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <vector>

#include "floor_common.h"

namespace {

using floor_bench::mono_ns;

int timer_fd = -1, epoll_fd = -1;

void sleep_until(int64_t t) {
  itimerspec its{};
  its.it_value = floor_bench::to_timespec(t);
  if (timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &its, nullptr) < 0)
    floor_bench::die_errno("timerfd_settime");
  epoll_event e;
  for (;;) {
    int n = epoll_wait(epoll_fd, &e, 1, -1);
    if (n == 1) break;
    if (n < 0 && errno != EINTR) floor_bench::die_errno("epoll_wait");
  }
  uint64_t expirations;
  if (read(timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
    floor_bench::die_errno("read timerfd");
}

void wait_until(int64_t due, int64_t spin_ns) {
  int64_t now = mono_ns();
  if (now >= due) return;
  if (due - now > spin_ns) sleep_until(due - spin_ns);
  while (mono_ns() < due) __builtin_ia32_pause();
}

void run(double rate, double seconds, bool poisson, int64_t spin_ns, uint64_t seed) {
  const size_t n = std::max<size_t>(1, static_cast<size_t>(rate * seconds));
  std::vector<int64_t> due(n), late(n);
  const int64_t start = mono_ns() + 20'000'000;  // 20 ms to get going
  double offset_s = 0;
  uint64_t state = seed;
  for (size_t i = 0; i < n; i++) {
    if (poisson) {
      double u = static_cast<double>((floor_bench::splitmix64(state) >> 11) + 1) /
                 9007199254740993.0;  // (0, 1]
      offset_s += -std::log(u) / rate;
    } else {
      offset_s = static_cast<double>(i) / rate;
    }
    due[i] = start + static_cast<int64_t>(offset_s * 1e9);
  }
  const floor_bench::CpuTime c0 = floor_bench::cpu_now();
  const int64_t t0 = mono_ns();
  for (size_t i = 0; i < n; i++) {
    wait_until(due[i], spin_ns);
    late[i] = mono_ns() - due[i];
  }
  const int64_t t1 = mono_ns();
  const floor_bench::CpuTime c1 = floor_bench::cpu_now();
  std::printf(
      "floor_pacer: rate=%.0f dist=%s method=tfd+spin%lld n=%zu cpu_pct=%.1f%s\n", rate,
      poisson ? "poisson" : "const", static_cast<long long>(spin_ns / 1000), n,
      100.0 * static_cast<double>(c1.total_ns() - c0.total_ns()) / static_cast<double>(t1 - t0),
      floor_bench::percentiles_us("late", std::move(late)).c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  static const option long_options[] = {{"rate", required_argument, nullptr, 'r'},
                                        {"seconds", required_argument, nullptr, 'd'},
                                        {"dist", required_argument, nullptr, 'D'},
                                        {"spin-us", required_argument, nullptr, 'x'},
                                        {"seed", required_argument, nullptr, 's'},
                                        {"help", no_argument, nullptr, 'h'},
                                        {nullptr, 0, nullptr, 0}};
  using floor_bench::parse_int;
  long long rate = 0, seconds = 3, spin_us = 50, seed = 42;
  int dist = -1;  // -1 = both
  int o;
  while ((o = getopt_long(argc, argv, "", long_options, nullptr)) != -1) {
    switch (o) {
      case 'r':
        rate = parse_int("--rate", optarg, 1, 10'000'000);
        break;
      case 'd':
        seconds = parse_int("--seconds", optarg, 1, 60);
        break;
      case 'D':
        if (std::strcmp(optarg, "poisson") == 0)
          dist = 1;
        else if (std::strcmp(optarg, "const") == 0)
          dist = 0;
        else
          floor_bench::die_usage(std::string("option --dist: '") + optarg +
                                 "' is not poisson or const");
        break;
      case 'x':
        spin_us = parse_int("--spin-us", optarg, 0, 1'000'000);
        break;
      case 's':
        seed = parse_int("--seed", optarg, 0, 1LL << 62);
        break;
      default:
        floor_bench::die_usage(
            "usage: floor_pacer [--rate R] [--seconds D] [--dist poisson|const] [--spin-us S] "
            "[--seed N]");
    }
  }
  if (optind != argc)
    floor_bench::die_usage(std::string("unexpected argument '") + argv[optind] + "'");
  timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (timer_fd < 0 || epoll_fd < 0) floor_bench::die_errno("timerfd/epoll");
  epoll_event e{};
  e.events = EPOLLIN;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, timer_fd, &e) < 0) floor_bench::die_errno("epoll_ctl");
  const int64_t spin_ns = spin_us * 1000;
  std::vector<long long> rates =
      rate ? std::vector<long long>{rate} : std::vector<long long>{1000, 10000, 50000};
  for (long long r : rates) {
    for (int d = 1; d >= 0; d--) {
      if (dist == -1 || dist == d)
        run(static_cast<double>(r), static_cast<double>(seconds), d == 1, spin_ns,
            static_cast<uint64_t>(seed));
    }
  }
  return 0;
}
