// File: bench/floor/floor_reader.cpp
// The client's floor: opens C keep-alive connections to 127.0.0.1, sends a streaming
// completions POST on each, reads with recv() into one buffer (non-blocking sockets,
// level-triggered epoll), finds SSE event boundaries ("\n\n") with memchr, takes one
// CLOCK_MONOTONIC stamp per recv, and at "data: [DONE]" sends the next request on the same
// connection until R requests are done. No JSON parsing and no de-chunking: the least any
// client must do.
//
//   floor_reader [--port P] [--conns C] [--requests R] [--parse 0|1|2] [--buf BYTES]
//                [--model M] [--max-tokens N] [--path /v1/completions] [--limit-s T]
//   --parse 0   count events only
//   --parse 1   also find each event's "text":" with memmem and its closing quote (default)
//   --parse 2   as 1, and read the server's stamp (" t<16 digits>", floor_sse_server --stamp)
//               to record the one-way delay: recv stamp - send stamp
//   --stagger-us S  spread the connections' first requests evenly over S µs (so that paced
//               streams do not all tick at once); later requests follow [DONE]
// Prints one line of key=value: events, CPU µs per event (getrusage user+sys from "every
// connection open" to "last request done"), events per recv, the peak number of streams open
// at once, and with --parse 2 the delay percentiles.
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

#include "floor_common.h"

namespace {

using floor_bench::mono_ns;

struct Options {
  int port = 8111;
  int conns = 256;
  long long requests = 1000;
  int parse = 1;
  int buf_bytes = 65536;
  std::string model = "m";
  int max_tokens = 256;
  std::string path = "/v1/completions";
  long long limit_s = 120;
  int64_t stagger_ns = 0;
};

constexpr int kCarryCap = 4096;  // an unfinished event (or response head) carried to the next recv

struct Reader {
  int fd = -1;
  bool streaming = false;  // bytes of a response arrived and its [DONE] has not
  int carry_len = 0;
  char carry[kCarryCap];
};

Options opt;
std::string request;
char* buf = nullptr;
long long n_sent = 0, n_done = 0, n_failed = 0;
uint64_t n_events = 0, n_recv = 0, n_epoll = 0, n_bytes = 0, n_text_bytes = 0, n_no_text = 0,
         n_overflow = 0;
int streaming_now = 0, peak_streaming = 0, live_conns = 0;
std::vector<int64_t> delays_ns;

void send_request(Reader& r) {
  ssize_t w = send(r.fd, request.data(), request.size(), MSG_NOSIGNAL);
  if (w != static_cast<ssize_t>(request.size())) {  // a small send on an idle socket never blocks
    std::fprintf(stderr, "error: send on connection fd %d: %s\n", r.fd,
                 w < 0 ? std::strerror(errno) : "short write");
    std::exit(1);
  }
  n_sent++;
}

inline void on_event(Reader& r, const char* s, const char* e, int64_t t) {
  // e is just past "\n\n"
  if (e - s >= 8 && std::memcmp(e - 8, "[DONE]\n\n", 8) == 0) {
    n_done++;
    r.streaming = false;
    streaming_now--;
    if (n_sent < opt.requests) send_request(r);
    return;
  }
  n_events++;
  if (opt.parse == 0) return;
  const char* f = static_cast<const char*>(memmem(s, static_cast<size_t>(e - s), "\"text\":\"", 8));
  if (f == nullptr) {
    n_no_text++;
    return;
  }
  const char* text = f + 8;
  const char* q = static_cast<const char*>(std::memchr(text, '"', static_cast<size_t>(e - text)));
  if (q == nullptr) {
    n_no_text++;
    return;
  }
  n_text_bytes += static_cast<uint64_t>(q - text);
  if (opt.parse >= 2 && q - text >= 18 && text[0] == ' ' && text[1] == 't') {
    int64_t v = 0;
    for (int i = 2; i < 18; i++) v = v * 10 + (text[i] - '0');
    if (v != 0) delays_ns.push_back(t - v);
  }
}

// Handles the complete events in buf[0, have + got) (the first `have` bytes are the carried tail
// of the previous read) and carries the unfinished tail over.
inline void scan(Reader& r, int have, ssize_t got, int64_t t) {
  char* end = buf + have + got;
  char* event = buf;
  char* p = have ? buf + have - 1 : buf;  // a "\n\n" may straddle the old tail
  for (;;) {
    char* q = static_cast<char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (q == nullptr || q + 1 >= end) break;
    if (q[1] == '\n') {
      on_event(r, event, q + 2, t);
      event = p = q + 2;
    } else {
      p = q + 1;
    }
  }
  size_t rest = static_cast<size_t>(end - event);
  if (rest > kCarryCap) {
    n_overflow++;
    event = end - kCarryCap;
    rest = kCarryCap;
  }
  std::memcpy(r.carry, event, rest);
  r.carry_len = static_cast<int>(rest);
}

void drop(Reader& r, const char* why) {
  if (r.fd < 0) return;
  std::fprintf(stderr, "floor_reader: connection fd %d: %s\n", r.fd, why);
  if (r.streaming) streaming_now--;
  n_failed++;
  close(r.fd);
  r.fd = -1;
  live_conns--;
}

void on_readable(Reader& r) {
  for (;;) {
    const int have = r.carry_len;
    if (have) std::memcpy(buf, r.carry, static_cast<size_t>(have));
    ssize_t got = recv(r.fd, buf + have, static_cast<size_t>(opt.buf_bytes - have), 0);
    n_recv++;
    const int64_t t = mono_ns();
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return drop(r, std::strerror(errno));
    }
    if (got == 0) return drop(r, "closed by the server");
    if (!r.streaming) {
      r.streaming = true;
      peak_streaming = std::max(peak_streaming, ++streaming_now);
    }
    n_bytes += static_cast<uint64_t>(got);
    scan(r, have, got, t);
    if (have + got != opt.buf_bytes) return;  // level-triggered epoll says if more is there
  }
}

void parse_options(int argc, char** argv) {
  static const option long_options[] = {{"port", required_argument, nullptr, 'p'},
                                        {"conns", required_argument, nullptr, 'c'},
                                        {"requests", required_argument, nullptr, 'r'},
                                        {"parse", required_argument, nullptr, 'P'},
                                        {"buf", required_argument, nullptr, 'b'},
                                        {"model", required_argument, nullptr, 'm'},
                                        {"max-tokens", required_argument, nullptr, 'n'},
                                        {"path", required_argument, nullptr, 'u'},
                                        {"limit-s", required_argument, nullptr, 'T'},
                                        {"stagger-us", required_argument, nullptr, 'S'},
                                        {"help", no_argument, nullptr, 'h'},
                                        {nullptr, 0, nullptr, 0}};
  using floor_bench::parse_int;
  int o;
  while ((o = getopt_long(argc, argv, "", long_options, nullptr)) != -1) {
    switch (o) {
      case 'p':
        opt.port = static_cast<int>(parse_int("--port", optarg, 1, 65535));
        break;
      case 'c':
        opt.conns = static_cast<int>(parse_int("--conns", optarg, 1, 30000));
        break;
      case 'r':
        opt.requests = parse_int("--requests", optarg, 1, 100'000'000);
        break;
      case 'P':
        opt.parse = static_cast<int>(parse_int("--parse", optarg, 0, 2));
        break;
      case 'b':
        opt.buf_bytes = static_cast<int>(parse_int("--buf", optarg, 2 * kCarryCap, 64 << 20));
        break;
      case 'm':
        opt.model = optarg;
        break;
      case 'n':
        opt.max_tokens = static_cast<int>(parse_int("--max-tokens", optarg, 1, 10'000'000));
        break;
      case 'u':
        opt.path = optarg;
        break;
      case 'T':
        opt.limit_s = parse_int("--limit-s", optarg, 1, 3600);
        break;
      case 'S':
        opt.stagger_ns = parse_int("--stagger-us", optarg, 0, 60000000) * 1000;
        break;
      default:
        floor_bench::die_usage(
            "usage: floor_reader [--port P] [--conns C] [--requests R] [--parse 0|1|2] [--buf "
            "BYTES] "
            "[--model M] [--max-tokens N] [--path PATH] [--limit-s T] [--stagger-us S]");
    }
  }
  if (optind != argc)
    floor_bench::die_usage(std::string("unexpected argument '") + argv[optind] + "'");
  if (opt.model.find_first_of("\"\\") != std::string::npos)
    floor_bench::die_usage("option --model: no quotes or backslashes");
}

}  // namespace

int main(int argc, char** argv) {
  parse_options(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);
  const std::string body = "{\"model\":\"" + opt.model +
                           "\",\"prompt\":\"hi\",\"max_tokens\":" + std::to_string(opt.max_tokens) +
                           ",\"ignore_eos\":true,\"stream\":true}";
  request = "POST " + opt.path + " HTTP/1.1\r\nhost: 127.0.0.1:" + std::to_string(opt.port) +
            "\r\ncontent-type: application/json\r\ncontent-length: " + std::to_string(body.size()) +
            "\r\n\r\n" + body;
  buf = new char[static_cast<size_t>(opt.buf_bytes)];
  if (opt.parse == 2) {
    delays_ns.reserve(std::min<size_t>(
        32u << 20, static_cast<size_t>(opt.requests) * static_cast<size_t>(opt.max_tokens) + 16));
  }

  int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) floor_bench::die_errno("epoll_create1");
  std::vector<Reader> readers(static_cast<size_t>(opt.conns));
  for (Reader& r : readers) {
    r.fd = floor_bench::connect_loopback(opt.port);
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.ptr = &r;
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, r.fd, &e) < 0) floor_bench::die_errno("epoll_ctl add");
    live_conns++;
  }

  const floor_bench::CpuTime cpu0 = floor_bench::cpu_now();
  const int64_t t0 = mono_ns(), limit_ns = opt.limit_s * 1'000'000'000;
  // Connection i sends its first request at t0 + i * stagger / conns (all at once by default);
  // each later request follows the previous one's [DONE] on the same connection.
  size_t next_start = 0;
  auto start_due = [&](size_t i) {
    return t0 + static_cast<int64_t>(static_cast<double>(opt.stagger_ns) * static_cast<double>(i) /
                                     opt.conns);
  };
  std::vector<epoll_event> events(1024);
  bool timed_out = false;
  while (n_done < opt.requests && live_conns > 0) {
    int timeout_ms = 1000;
    if (next_start < readers.size()) {
      const int64_t now = mono_ns();
      while (next_start < readers.size() && start_due(next_start) <= now) {
        if (n_sent < opt.requests && readers[next_start].fd >= 0) send_request(readers[next_start]);
        next_start++;
      }
      if (next_start < readers.size())
        timeout_ms = static_cast<int>((start_due(next_start) - now) / 1'000'000 + 1);
    }
    int n = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), timeout_ms);
    n_epoll++;
    if (n < 0) {
      if (errno == EINTR) continue;
      floor_bench::die_errno("epoll_wait");
    }
    for (int i = 0; i < n; i++) on_readable(*static_cast<Reader*>(events[i].data.ptr));
    if (mono_ns() - t0 > limit_ns) {
      timed_out = true;
      break;
    }
  }
  const int64_t t_end = mono_ns();
  const floor_bench::CpuTime cpu1 = floor_bench::cpu_now();
  const double wall_s = static_cast<double>(t_end - t0) / 1e9;
  const double cpu_us = static_cast<double>(cpu1.total_ns() - cpu0.total_ns()) / 1e3;
  std::printf(
      "floor_reader: parse=%d conns=%d requests_done=%lld failed=%lld events=%llu wall_s=%.3f "
      "events_per_s=%.0f cpu_user_s=%.3f cpu_sys_s=%.3f cpu_frac=%.3f cpu_us_per_event=%.3f "
      "recvs=%llu epoll_waits=%llu events_per_recv=%.2f events_per_epoll_wait=%.2f "
      "peak_streams=%d bytes=%llu text_bytes=%llu no_text=%llu carry_overflow=%llu%s%s\n",
      opt.parse, opt.conns, n_done, n_failed, static_cast<unsigned long long>(n_events), wall_s,
      static_cast<double>(n_events) / wall_s, (cpu1.user_ns - cpu0.user_ns) / 1e9,
      (cpu1.system_ns - cpu0.system_ns) / 1e9, cpu_us / 1e6 / wall_s,
      n_events ? cpu_us / static_cast<double>(n_events) : 0.0,
      static_cast<unsigned long long>(n_recv), static_cast<unsigned long long>(n_epoll),
      n_recv ? static_cast<double>(n_events) / static_cast<double>(n_recv) : 0.0,
      n_epoll ? static_cast<double>(n_events) / static_cast<double>(n_epoll) : 0.0, peak_streaming,
      static_cast<unsigned long long>(n_bytes), static_cast<unsigned long long>(n_text_bytes),
      static_cast<unsigned long long>(n_no_text), static_cast<unsigned long long>(n_overflow),
      opt.parse == 2 ? floor_bench::percentiles_us("delay", std::move(delays_ns)).c_str() : "",
      timed_out ? " TIMED_OUT" : "");
  for (Reader& r : readers) {
    if (r.fd >= 0) close(r.fd);
  }
  delete[] buf;
  return timed_out || n_failed > 0 ? 1 : 0;
}
