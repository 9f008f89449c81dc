// File: bench/floor/floor_sse_server.cpp
// The simulator's floor: a minimal single-threaded epoll HTTP/1.1 server on 127.0.0.1 that
// answers every POST with a chunked text/event-stream of vLLM-shaped completions events, each
// event its own HTTP chunk and its own send(), then `data: [DONE]` and the last chunk, and keeps
// the connection for the next request. GET answers a tiny model list (for ready checks).
//
//   floor_sse_server [--port P] [--events N] [--gap-us G] [--first-us F] [--per-write W]
//                    [--stamp none|send|due] [--jitter] [--grid] [--event-bytes B] [--model M]
//                    [--limit-s T] [--keep]
//   --events N     events per response; 0 = the request's "max_tokens" (default 256)
//   --gap-us G     0 = unpaced (round robin over the streaming connections, one write each per
//                  round); > 0 = write k due at arrival + F + k*G on one timerfd (absolute
//                  time, TFD_TIMER_ABSTIME) and a min-heap of connections
//   --first-us F   delay of the first write after the request (paced; default G)
//   --per-write W  events per send (default 1)
//   --stamp        write the send time ("send", CLOCK_MONOTONIC ns taken just before send()) or
//                  the due time ("due") into each event's text as " t<16 digits>"; "none"
//                  writes zeros (same bytes)
//   --jitter       random phase in [0, G) per request instead of aligned ticks
//   --grid         every stream on one common tick: a write is due at the first multiple of G
//                  (from the server's start) at or after arrival + F, so events of all streams
//                  fall due together, as one decode step of an engine emits them, whatever the
//                  spread of the requests' arrivals
//   --event-bytes  lengthen the "id" so that each SSE event ("data: …\n\n") is B bytes, to
//                  match another server's event size
//   --keep         keep running when the last client leaves (default: exit then)
// On exit prints one line of key=value: requests, events, writes, CPU µs per event, and for
// paced runs the lateness of each send versus its due time.
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <string_view>
#include <vector>

#include "floor_common.h"

namespace {

using floor_bench::mono_ns;

enum class Stamp { kNone, kSend, kDue };

struct Options {
  int port = 8111;
  int events = 256;
  int64_t gap_ns = 0;
  int64_t first_ns = -1;
  int per_write = 1;
  Stamp stamp = Stamp::kSend;
  bool jitter = false;
  bool grid = false;
  int event_bytes = 0;
  std::string model = "m";
  int64_t limit_s = 120;
  bool keep = false;
};

struct Conn {
  int fd = -1;
  bool streaming = false;
  bool blocked = false;      // unsent bytes wait in out for EPOLLOUT
  bool close_after = false;  // the request said "connection: close"
  bool sent_continue = false;
  int heap_index = -1;    // paced: position in the heap
  int active_index = -1;  // unpaced: position in the round-robin list
  int events_total = 0;
  int events_sent = 0;
  int64_t due_ns = 0;
  std::string in;
  std::string out;
  size_t out_offset = 0;
  std::string chunk;  // one HTTP chunk carrying one event of the current response
  size_t stamp_offset = 0;
};

constexpr size_t kMaxRequestBytes = 1 << 20;
constexpr std::string_view kResponseHead =
    "HTTP/1.1 200 OK\r\n"
    "date: Sat, 22 Nov 2025 07:00:00 GMT\r\n"
    "server: uvicorn\r\n"
    "content-type: text/event-stream; charset=utf-8\r\n"
    "transfer-encoding: chunked\r\n\r\n";
constexpr std::string_view kDoneChunk = "e\r\ndata: [DONE]\n\n\r\n";
constexpr std::string_view kLastChunk = "0\r\n\r\n";

Options opt;
int epoll_fd = -1, listen_fd = -1, timer_fd = -1;
int listen_tag = 0, timer_tag = 0;  // their addresses mark the two fds in epoll
std::vector<Conn*> heap, active;
std::string scratch;
std::vector<int64_t> lateness_ns;
int open_conns = 0, streaming_now = 0, peak_streaming = 0;
bool served_any = false;
uint64_t n_requests = 0, n_events = 0, n_writes = 0, n_blocked = 0, n_accepts = 0, request_seq = 0;
int64_t armed_ns = -1, created_s = 0;
int64_t server_start_ns = 0;  // the --grid's origin
uint64_t rng = 0x2545f4914f6cdd1dull;
volatile sig_atomic_t stop_flag = 0;

void on_signal(int) {
  stop_flag = 1;
}

// ---- pacing heap, min by due_ns
void heap_swap(int a, int b) {
  std::swap(heap[a], heap[b]);
  heap[a]->heap_index = a;
  heap[b]->heap_index = b;
}
void heap_up(int i) {
  while (i > 0) {
    int parent = (i - 1) / 2;
    if (heap[parent]->due_ns <= heap[i]->due_ns) break;
    heap_swap(parent, i);
    i = parent;
  }
}
void heap_down(int i) {
  const int n = static_cast<int>(heap.size());
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && heap[l]->due_ns < heap[m]->due_ns) m = l;
    if (r < n && heap[r]->due_ns < heap[m]->due_ns) m = r;
    if (m == i) return;
    heap_swap(i, m);
    i = m;
  }
}
void heap_push(Conn* c) {
  heap.push_back(c);
  c->heap_index = static_cast<int>(heap.size()) - 1;
  heap_up(c->heap_index);
}
void heap_remove(Conn* c) {
  int i = c->heap_index;
  if (i < 0) return;
  c->heap_index = -1;
  Conn* last = heap.back();
  heap.pop_back();
  if (last == c) return;
  heap[i] = last;
  last->heap_index = i;
  heap_up(i);
  heap_down(last->heap_index);
}

// ---- unpaced round-robin list
void active_add(Conn* c) {
  if (c->active_index >= 0) return;
  c->active_index = static_cast<int>(active.size());
  active.push_back(c);
}
void active_remove(Conn* c) {
  int i = c->active_index;
  if (i < 0) return;
  c->active_index = -1;
  Conn* last = active.back();
  active.pop_back();
  if (last == c) return;
  active[i] = last;
  last->active_index = i;
}

void conn_close(Conn* c) {
  heap_remove(c);
  active_remove(c);
  if (c->streaming) streaming_now--;
  close(c->fd);
  delete c;
  open_conns--;
}

void watch(Conn* c, uint32_t events) {
  epoll_event e{};
  e.events = events;
  e.data.ptr = c;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &e) < 0) floor_bench::die_errno("epoll_ctl mod");
}

// One send() of the bytes; what does not fit waits for EPOLLOUT. False when the peer is gone.
bool conn_send(Conn* c, std::string_view bytes) {
  if (c->blocked) {
    c->out.append(bytes);
    return true;
  }
  n_writes++;
  ssize_t w = send(c->fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  if (w < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
    w = 0;
  }
  if (static_cast<size_t>(w) < bytes.size()) {
    c->out.assign(bytes.substr(static_cast<size_t>(w)));
    c->out_offset = 0;
    c->blocked = true;
    n_blocked++;
    watch(c, EPOLLIN | EPOLLOUT);
    active_remove(c);
  }
  return true;
}

void build_chunk(Conn* c) {
  uint64_t s = ++request_seq;
  char id[160];
  int id_len = std::snprintf(id, sizeof id, "cmpl-%016llx%016llx",
                             static_cast<unsigned long long>(floor_bench::splitmix64(s)),
                             static_cast<unsigned long long>(floor_bench::splitmix64(s)));
  std::string event;
  auto compose = [&](std::string_view id_text) {
    event = "data: {\"id\":\"";
    event += id_text;
    event += "\",\"object\":\"text_completion\",\"created\":" + std::to_string(created_s) +
             ",\"model\":\"" + opt.model +
             "\",\"choices\":[{\"index\":0,\"text\":\" t0000000000000000\",\"logprobs\":null,"
             "\"finish_reason\":null,\"stop_reason\":null}],\"usage\":null}\n\n";
  };
  compose(std::string_view(id, static_cast<size_t>(id_len)));
  if (opt.event_bytes > static_cast<int>(event.size())) {
    std::string long_id(id, static_cast<size_t>(id_len));
    long_id.append(static_cast<size_t>(opt.event_bytes) - event.size(), '0');
    compose(long_id);
  }
  char head[16];
  int head_len = std::snprintf(head, sizeof head, "%zx\r\n", event.size());
  c->chunk.assign(head, static_cast<size_t>(head_len));
  c->chunk += event;
  c->chunk += "\r\n";
  c->stamp_offset = c->chunk.find("\"text\":\" t") + 10;
}

void put_stamp(char* p, int64_t v) {
  for (int i = 15; i >= 0; i--) {
    p[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
}

bool try_start_request(Conn* c);

// Writes the next write's worth of events (and the end of the response after the last one).
// False when the connection was closed.
bool emit(Conn* c, int64_t due_ns) {
  int k = std::min(opt.per_write, c->events_total - c->events_sent);
  const size_t len = c->chunk.size();
  scratch.resize(static_cast<size_t>(k) * len);
  for (int i = 0; i < k; i++)
    std::memcpy(scratch.data() + static_cast<size_t>(i) * len, c->chunk.data(), len);
  int64_t now = (opt.stamp != Stamp::kNone || due_ns != 0) ? mono_ns() : 0;
  if (opt.stamp != Stamp::kNone) {
    int64_t v = (opt.stamp == Stamp::kDue && due_ns != 0) ? due_ns : now;
    for (int i = 0; i < k; i++)
      put_stamp(scratch.data() + static_cast<size_t>(i) * len + c->stamp_offset, v);
  }
  if (due_ns != 0) lateness_ns.push_back(now - due_ns);
  if (k > 0 && !conn_send(c, scratch)) {
    conn_close(c);
    return false;
  }
  c->events_sent += k;
  n_events += static_cast<uint64_t>(k);
  if (c->events_sent < c->events_total) return true;
  if (!conn_send(c, kDoneChunk) || !conn_send(c, kLastChunk)) {
    conn_close(c);
    return false;
  }
  c->streaming = false;
  streaming_now--;
  n_requests++;
  heap_remove(c);
  active_remove(c);
  if (c->close_after && !c->blocked) {
    conn_close(c);
    return false;
  }
  return try_start_request(c);
}

bool header_is(std::string_view line, std::string_view name) {
  return line.size() > name.size() && strncasecmp(line.data(), name.data(), name.size()) == 0;
}

// Starts a response if a whole request sits in c->in. False when the connection was closed.
bool try_start_request(Conn* c) {
  if (c->streaming || c->close_after) return true;
  size_t end = c->in.find("\r\n\r\n");
  if (end == std::string::npos) {
    if (c->in.size() > kMaxRequestBytes) {
      conn_close(c);
      return false;
    }
    return true;
  }
  std::string_view head(c->in.data(), end + 2);
  size_t content_length = 0;
  bool expect_continue = false, close_after = false;
  for (size_t p = head.find("\r\n") + 2; p < head.size();) {
    size_t eol = head.find("\r\n", p);
    std::string_view line = head.substr(p, eol - p);
    if (header_is(line, "content-length:"))
      content_length = std::strtoul(line.data() + 15, nullptr, 10);
    if (header_is(line, "expect:") && line.find("100") != std::string_view::npos)
      expect_continue = true;
    if (header_is(line, "connection:") && line.find("close") != std::string_view::npos)
      close_after = true;
    p = eol + 2;
  }
  const size_t total = end + 4 + content_length;
  if (total > kMaxRequestBytes) {
    conn_close(c);
    return false;
  }
  if (c->in.size() < total) {
    if (expect_continue && !c->sent_continue) {
      c->sent_continue = true;
      if (!conn_send(c, "HTTP/1.1 100 Continue\r\n\r\n")) {
        conn_close(c);
        return false;
      }
    }
    return true;
  }
  const bool is_get = c->in.compare(0, 4, "GET ") == 0;
  std::string_view body(c->in.data() + end + 4, content_length);
  int events = opt.events;
  if (events == 0) {
    size_t m = body.find("\"max_tokens\":");
    events = m == std::string_view::npos ? 16 : std::atoi(body.data() + m + 13);
    if (events < 1) events = 1;
  }
  c->in.erase(0, total);
  c->sent_continue = false;
  c->close_after = close_after;
  served_any = true;
  if (is_get) {
    std::string list =
        "{\"object\":\"list\",\"data\":[{\"id\":\"" + opt.model + "\",\"object\":\"model\"}]}";
    std::string reply = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: " +
                        std::to_string(list.size()) + "\r\n\r\n" + list;
    if (!conn_send(c, reply)) {
      conn_close(c);
      return false;
    }
    return try_start_request(c);
  }
  c->streaming = true;
  streaming_now++;
  peak_streaming = std::max(peak_streaming, streaming_now);
  c->events_total = events;
  c->events_sent = 0;
  build_chunk(c);
  if (!conn_send(c, kResponseHead)) {
    conn_close(c);
    return false;
  }
  if (opt.gap_ns > 0) {
    c->due_ns = mono_ns() + opt.first_ns;
    if (opt.grid) {
      int64_t ticks = (c->due_ns - server_start_ns + opt.gap_ns - 1) / opt.gap_ns;
      c->due_ns = server_start_ns + ticks * opt.gap_ns;
    }
    if (opt.jitter)
      c->due_ns +=
          static_cast<int64_t>(floor_bench::splitmix64(rng) % static_cast<uint64_t>(opt.gap_ns));
    heap_push(c);
  } else if (!c->blocked) {
    active_add(c);
  }
  return true;
}

void on_readable(Conn* c) {
  char buf[16384];
  for (;;) {
    ssize_t r = recv(c->fd, buf, sizeof buf, 0);
    if (r == 0) return conn_close(c);
    if (r < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return conn_close(c);
    }
    c->in.append(buf, static_cast<size_t>(r));
    if (static_cast<size_t>(r) < sizeof buf) break;
  }
  try_start_request(c);
}

void on_writable(Conn* c) {
  while (c->out_offset < c->out.size()) {
    n_writes++;
    ssize_t w =
        send(c->fd, c->out.data() + c->out_offset, c->out.size() - c->out_offset, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return conn_close(c);
    }
    c->out_offset += static_cast<size_t>(w);
  }
  c->out.clear();
  c->out_offset = 0;
  c->blocked = false;
  watch(c, EPOLLIN);
  if (c->streaming && opt.gap_ns == 0) {
    active_add(c);
  } else if (!c->streaming) {
    if (c->close_after) return conn_close(c);
    try_start_request(c);
  }
}

void on_accept() {
  for (int i = 0; i < 4096; i++) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED) return;
      if (errno == EMFILE || errno == ENFILE) {
        std::fprintf(stderr, "warning: accept: %s\n", std::strerror(errno));
        return;
      }
      floor_bench::die_errno("accept4");
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto* c = new Conn;
    c->fd = fd;
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.ptr = c;
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &e) < 0) floor_bench::die_errno("epoll_ctl add");
    open_conns++;
    n_accepts++;
  }
}

void run_due() {
  while (!heap.empty() && heap[0]->due_ns <= mono_ns()) {
    Conn* c = heap[0];
    int64_t due = c->due_ns;
    c->due_ns += opt.gap_ns;  // stays in the heap: its key only grows
    heap_down(0);
    emit(c, due);  // takes it out of the heap when its response ends
  }
  if (!heap.empty() && heap[0]->due_ns != armed_ns) {
    itimerspec its{};
    its.it_value = floor_bench::to_timespec(heap[0]->due_ns);
    if (timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &its, nullptr) < 0)
      floor_bench::die_errno("timerfd_settime");
    armed_ns = heap[0]->due_ns;
  }
}

void parse_options(int argc, char** argv) {
  static const option long_options[] = {{"port", required_argument, nullptr, 'p'},
                                        {"events", required_argument, nullptr, 'n'},
                                        {"gap-us", required_argument, nullptr, 'g'},
                                        {"first-us", required_argument, nullptr, 'f'},
                                        {"per-write", required_argument, nullptr, 'w'},
                                        {"stamp", required_argument, nullptr, 's'},
                                        {"jitter", no_argument, nullptr, 'j'},
                                        {"grid", no_argument, nullptr, 'G'},
                                        {"event-bytes", required_argument, nullptr, 'b'},
                                        {"model", required_argument, nullptr, 'm'},
                                        {"limit-s", required_argument, nullptr, 'T'},
                                        {"keep", no_argument, nullptr, 'k'},
                                        {"help", no_argument, nullptr, 'h'},
                                        {nullptr, 0, nullptr, 0}};
  using floor_bench::parse_int;
  int o;
  while ((o = getopt_long(argc, argv, "", long_options, nullptr)) != -1) {
    switch (o) {
      case 'p':
        opt.port = static_cast<int>(parse_int("--port", optarg, 0, 65535));
        break;
      case 'n':
        opt.events = static_cast<int>(parse_int("--events", optarg, 0, 100'000'000));
        break;
      case 'g':
        opt.gap_ns = parse_int("--gap-us", optarg, 0, 10'000'000) * 1000;
        break;
      case 'f':
        opt.first_ns = parse_int("--first-us", optarg, 0, 100'000'000) * 1000;
        break;
      case 'w':
        opt.per_write = static_cast<int>(parse_int("--per-write", optarg, 1, 4096));
        break;
      case 's':
        if (std::strcmp(optarg, "none") == 0)
          opt.stamp = Stamp::kNone;
        else if (std::strcmp(optarg, "send") == 0)
          opt.stamp = Stamp::kSend;
        else if (std::strcmp(optarg, "due") == 0)
          opt.stamp = Stamp::kDue;
        else
          floor_bench::die_usage(std::string("option --stamp: '") + optarg +
                                 "' is not none, send or due");
        break;
      case 'G':
        opt.grid = true;
        break;
      case 'j':
        opt.jitter = true;
        break;
      case 'b':
        opt.event_bytes = static_cast<int>(parse_int("--event-bytes", optarg, 0, 65536));
        break;
      case 'm':
        opt.model = optarg;
        break;
      case 'T':
        opt.limit_s = parse_int("--limit-s", optarg, 1, 3600);
        break;
      case 'k':
        opt.keep = true;
        break;
      default:
        floor_bench::die_usage(
            "usage: floor_sse_server [--port P] [--events N] [--gap-us G] [--first-us F] "
            "[--per-write W] [--stamp none|send|due] [--jitter] [--grid] [--event-bytes B] "
            "[--model M] "
            "[--limit-s T] [--keep]");
    }
  }
  if (optind != argc)
    floor_bench::die_usage(std::string("unexpected argument '") + argv[optind] + "'");
  if (opt.first_ns < 0) opt.first_ns = opt.gap_ns;
  if (opt.model.find_first_of("\"\\") != std::string::npos)
    floor_bench::die_usage("option --model: no quotes or backslashes");
}

}  // namespace

int main(int argc, char** argv) {
  parse_options(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  created_s = static_cast<int64_t>(time(nullptr));
  server_start_ns = mono_ns();
  lateness_ns.reserve(1 << 20);

  listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd < 0) floor_bench::die_errno("socket");
  int one = 1;
  setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(opt.port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0) {
    std::fprintf(stderr, "error: bind 127.0.0.1:%d: %s\n", opt.port, std::strerror(errno));
    return 1;
  }
  if (listen(listen_fd, 4096) < 0) floor_bench::die_errno("listen");
  socklen_t addr_len = sizeof addr;
  getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &addr_len);
  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (epoll_fd < 0 || timer_fd < 0) floor_bench::die_errno("epoll/timerfd");
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.ptr = &listen_tag;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &e) < 0)
    floor_bench::die_errno("epoll_ctl listen");
  e.data.ptr = &timer_tag;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, timer_fd, &e) < 0)
    floor_bench::die_errno("epoll_ctl timerfd");
  std::printf("floor_sse_server: listening 127.0.0.1:%d events=%d gap_us=%lld per_write=%d\n",
              ntohs(addr.sin_port), opt.events, static_cast<long long>(opt.gap_ns / 1000),
              opt.per_write);
  std::fflush(stdout);

  const int64_t t_start = mono_ns(), limit_ns = opt.limit_s * 1'000'000'000;
  int64_t t_first = 0;
  std::vector<epoll_event> events(1024);
  while (!stop_flag) {
    if (mono_ns() - t_start > limit_ns) {
      std::fprintf(stderr, "floor_sse_server: time limit of %llds reached\n",
                   static_cast<long long>(opt.limit_s));
      break;
    }
    if (!opt.keep && served_any && open_conns == 0) break;
    int n = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()),
                       active.empty() ? 100 : 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      floor_bench::die_errno("epoll_wait");
    }
    for (int i = 0; i < n; i++) {
      void* p = events[i].data.ptr;
      if (p == &listen_tag) {
        on_accept();
        if (t_first == 0) t_first = mono_ns();
        continue;
      }
      if (p == &timer_tag) {
        uint64_t expirations;
        if (read(timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
          floor_bench::die_errno("read timerfd");
        continue;
      }
      auto* c = static_cast<Conn*>(p);
      const uint32_t ev = events[i].events;
      if ((ev & (EPOLLERR | EPOLLHUP)) && !(ev & EPOLLIN)) {
        conn_close(c);
      } else if (ev & EPOLLOUT) {
        on_writable(c);
      } else if (ev & EPOLLIN) {
        on_readable(c);
      }
    }
    if (opt.gap_ns > 0) {
      run_due();
    } else {
      for (int i = static_cast<int>(active.size()) - 1; i >= 0; i--) {
        if (i < static_cast<int>(active.size())) emit(active[i], 0);
      }
    }
  }
  const double wall_s = static_cast<double>(mono_ns() - (t_first ? t_first : t_start)) / 1e9;
  const floor_bench::CpuTime cpu = floor_bench::cpu_now();
  std::printf(
      "floor_sse_server: requests=%llu events=%llu writes=%llu blocked=%llu accepts=%llu "
      "peak_streams=%d wall_s=%.3f cpu_user_s=%.3f cpu_sys_s=%.3f cpu_us_per_event=%.3f%s\n",
      static_cast<unsigned long long>(n_requests), static_cast<unsigned long long>(n_events),
      static_cast<unsigned long long>(n_writes), static_cast<unsigned long long>(n_blocked),
      static_cast<unsigned long long>(n_accepts), peak_streaming, wall_s, cpu.user_ns / 1e9,
      cpu.system_ns / 1e9,
      n_events ? static_cast<double>(cpu.total_ns()) / 1e3 / static_cast<double>(n_events) : 0.0,
      lateness_ns.empty()
          ? ""
          : floor_bench::percentiles_us("send_late", std::move(lateness_ns)).c_str());
  return 0;
}
