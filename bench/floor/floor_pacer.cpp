// File: bench/floor/floor_pacer.cpp
// The pacing floor: how precisely one thread keeps an absolute schedule of send times on this
// machine with timerfd (TFD_TIMER_ABSTIME, waited on with epoll) followed by a short spin on
// clock_gettime, the method servebench's client uses. Builds N = rate * seconds due times
// (Poisson with a fixed seed, or constant spacing), waits for each, and records
// lateness = clock after the wait - due. A due time already past is not waited for, so falling
// behind shows up as lateness of the following sends, as it would for a real pacer.
//
// With --send-port P it also does what any client must at each due time: it sends a 1-token
// streaming completions request on an idle keep-alive connection to a server on 127.0.0.1:P
// (floor_sse_server), and reads the answers while it waits (level-triggered epoll, one buffer,
// "[DONE]" found with memmem), all on the one thread. Lateness is then taken just before the
// send(), where servebench stamps a request's send time. That is the floor of pacing for a
// one-thread client on this machine: the sends and reads of the load itself, nothing else.
//
//   floor_pacer [--rate R] [--seconds D] [--dist poisson|const] [--spin-us S] [--seed N]
//               [--send-port P [--conns C] [--model M]]
//   With no --rate, runs 1k, 10k and 50k per second, Poisson then constant, D seconds each.
// Prints one line per run: lateness p50/p90/p99/p99.9/max in µs and the CPU used (% of a core).
#include <getopt.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <limits>
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

// --- sending mode (--send-port)

struct Connection {
  int fd = -1;
  char tail[8] = {};  // the last bytes of the previous read: "[DONE]" may straddle two
  size_t tail_len = 0;
};

struct Sender {
  int port = 0;
  std::string request;
  std::vector<Connection> connections;
  std::vector<size_t> idle;
  long long answered = 0;
  bool timer_fired = false;
  char buffer[65536];

  void open_one() {
    Connection c;
    c.fd = floor_bench::connect_loopback(port);
    connections.push_back(c);
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.u64 = connections.size();  // index + 1; 0 is the timer
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c.fd, &e) < 0) floor_bench::die_errno("epoll_ctl");
    idle.push_back(connections.size() - 1);
  }

  void read_answers(size_t index) {
    Connection& c = connections[index];
    for (;;) {
      ssize_t got = recv(c.fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
      if (got <= 0) floor_bench::die_errno("recv (the server closed a connection)");
      char seam[16];
      const size_t head = std::min<size_t>(static_cast<size_t>(got), 8);
      std::memcpy(seam, c.tail, c.tail_len);
      std::memcpy(seam + c.tail_len, buffer, head);
      if (memmem(seam, c.tail_len + head, "[DONE]", 6) != nullptr ||
          memmem(buffer, static_cast<size_t>(got), "[DONE]", 6) != nullptr) {
        answered++;
        idle.push_back(index);
        c.tail_len = 0;
      } else {
        c.tail_len = std::min<size_t>(static_cast<size_t>(got), 5);
        std::memcpy(c.tail, buffer + got - static_cast<ssize_t>(c.tail_len), c.tail_len);
      }
    }
  }

  // Handles what is ready, one connection at a time, until `due` is within `lookahead_ns`
  // (the events left are reported again: level-triggered). Returns how many it handled and
  // sets `timer_fired`.
  int handle_events(int timeout_ms, int64_t due, int64_t lookahead_ns) {
    epoll_event events[256];
    int n = epoll_wait(epoll_fd, events, 256, timeout_ms);
    if (n < 0 && errno != EINTR) floor_bench::die_errno("epoll_wait");
    for (int i = 0; i < n; i++) {
      if (events[i].data.u64 == 0) {
        uint64_t expirations;
        if (read(timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
          floor_bench::die_errno("read timerfd");
        timer_fired = true;
      } else {
        read_answers(events[i].data.u64 - 1);
      }
      if (due - mono_ns() <= lookahead_ns) return i + 1;
    }
    return n;
  }

  // Waits for `due` reading answers, as servebench's loop does: asleep until `spin_ns` before
  // it, then reading what is ready until `kLookaheadNs` before it, then spinning. Sends on an
  // idle connection (a new one when none is); returns the lateness at the send.
  int64_t wait_and_send(int64_t due, int64_t spin_ns) {
    constexpr int64_t kLookaheadNs = 10'000;  // about one answer's read
    timer_fired = due - mono_ns() <= spin_ns;
    if (!timer_fired) {
      itimerspec its{};
      its.it_value = floor_bench::to_timespec(due - spin_ns);
      if (timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &its, nullptr) < 0)
        floor_bench::die_errno("timerfd_settime");
    }
    while (due - mono_ns() > kLookaheadNs) {
      const bool sleep = !timer_fired;
      if (handle_events(sleep ? -1 : 0, due, kLookaheadNs) == 0 && !sleep) break;
    }
    while (mono_ns() < due) __builtin_ia32_pause();
    if (idle.empty()) handle_events(0, due, std::numeric_limits<int64_t>::min());
    if (idle.empty()) open_one();
    const int64_t late = mono_ns() - due;
    const size_t index = idle.back();
    idle.pop_back();
    ssize_t w = send(connections[index].fd, request.data(), request.size(), MSG_NOSIGNAL);
    if (w != static_cast<ssize_t>(request.size()))  // small, on an idle socket: never blocks
      floor_bench::die_errno("send");
    return late;
  }
};

Sender* sender = nullptr;  // set in sending mode

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
  const long long answered_before = sender ? sender->answered : 0;
  for (size_t i = 0; i < n; i++) {
    if (sender) {
      late[i] = sender->wait_and_send(due[i], spin_ns);
    } else {
      wait_until(due[i], spin_ns);
      late[i] = mono_ns() - due[i];
    }
  }
  const int64_t t1 = mono_ns();
  const floor_bench::CpuTime c1 = floor_bench::cpu_now();
  std::string sent;
  if (sender) {
    const int64_t give_up = mono_ns() + 10'000'000'000;
    while (sender->answered - answered_before < static_cast<long long>(n) && mono_ns() < give_up)
      sender->handle_events(100, give_up, 0);
    sent = " sent=" + std::to_string(n) +
           " answered=" + std::to_string(sender->answered - answered_before) +
           " connections=" + std::to_string(sender->connections.size());
  }
  std::printf(
      "floor_pacer: rate=%.0f dist=%s method=tfd+spin%lld%s n=%zu cpu_pct=%.1f%s%s\n", rate,
      poisson ? "poisson" : "const", static_cast<long long>(spin_ns / 1000), sender ? "+send" : "",
      n, 100.0 * static_cast<double>(c1.total_ns() - c0.total_ns()) / static_cast<double>(t1 - t0),
      sent.c_str(), floor_bench::percentiles_us("late", std::move(late)).c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  static const option long_options[] = {
      {"rate", required_argument, nullptr, 'r'},  {"seconds", required_argument, nullptr, 'd'},
      {"dist", required_argument, nullptr, 'D'},  {"spin-us", required_argument, nullptr, 'x'},
      {"seed", required_argument, nullptr, 's'},  {"send-port", required_argument, nullptr, 'p'},
      {"conns", required_argument, nullptr, 'c'}, {"model", required_argument, nullptr, 'm'},
      {"help", no_argument, nullptr, 'h'},        {nullptr, 0, nullptr, 0}};
  using floor_bench::parse_int;
  long long rate = 0, seconds = 3, spin_us = 50, seed = 42, send_port = 0, conns = 64;
  std::string model = "m";
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
      case 'p':
        send_port = parse_int("--send-port", optarg, 1, 65535);
        break;
      case 'c':
        conns = parse_int("--conns", optarg, 1, 100'000);
        break;
      case 'm':
        model = optarg;
        break;
      default:
        floor_bench::die_usage(
            "usage: floor_pacer [--rate R] [--seconds D] [--dist poisson|const] [--spin-us S] "
            "[--seed N] [--send-port P [--conns C] [--model M]]");
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
  static Sender sending;
  if (send_port > 0) {
    std::signal(SIGPIPE, SIG_IGN);
    const std::string body = "{\"model\":\"" + model +
                             "\",\"prompt\":\"hi\",\"max_tokens\":1,\"ignore_eos\":true,"
                             "\"stream\":true}";
    sending.port = static_cast<int>(send_port);
    sending.request =
        "POST /v1/completions HTTP/1.1\r\nhost: 127.0.0.1:" + std::to_string(send_port) +
        "\r\ncontent-type: application/json\r\ncontent-length: " + std::to_string(body.size()) +
        "\r\n\r\n" + body;
    sending.connections.reserve(static_cast<size_t>(conns));
    for (long long i = 0; i < conns; i++) sending.open_one();
    sender = &sending;
  }
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
