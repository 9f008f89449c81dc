// sim::Server: sets up the front (I/O threads, tokenizer, schedule, trace), accepts connections
// round-robin onto the I/O threads, and stops them. The front itself is front.h; when tokens are
// due is the TokenSchedule's business (token_schedule.h).
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <future>
#include <mutex>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/json_text.h"
#include "core/system.h"
#include "sim/deployment_state.h"
#include "sim/front.h"
#include "tokenizer/tokenizer.h"

namespace servebench::sim {

using detail::asio::ip::tcp;
namespace asio = detail::asio;
namespace beast = detail::beast;

struct Server::Impl : detail::Front {
  // After the front's threads: the acceptor and its timer live on thread 0's io_context.
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<asio::steady_timer> accept_retry;
  // A descriptor held in reserve for when the table is full: shed_waiting_connection().
  int spare_fd = -1;
  size_t next_thread = 0;
  uint16_t bound_port = 0;
  std::mutex stop_mu, wait_mu;
  bool started = false, stopped = false;
  asio::io_context* wait_ioc = nullptr;

  ~Impl() {
    if (spare_fd >= 0) ::close(spare_fd);
  }
  void do_accept();
  bool shed_waiting_connection();
};

void Server::Impl::do_accept() {
  detail::IoThread* target = threads[next_thread++ % threads.size()].get();
  acceptor->async_accept(target->ioc, [this, target](beast::error_code ec, tcp::socket s) {
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
    if (ec) {
      const bool no_descriptors =
          ec == asio::error::no_descriptors ||
          (ec.category() == asio::error::get_system_category() && ec.value() == ENFILE);
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true)) {
        std::fprintf(stderr, "servebench sim: accept failed: %s (%s)\n", ec.message().c_str(),
                     no_descriptors ? "closing waiting connections until descriptors free up; "
                                      "raise the open-files limit (ulimit -n)"
                                    : "retrying");
      }
      if (no_descriptors && shed_waiting_connection()) {
        do_accept();
        return;
      }
      // Nothing shed (or another error): wait a little instead of spinning.
      accept_retry->expires_after(std::chrono::milliseconds(10));
      accept_retry->async_wait([this](beast::error_code e) {
        if (!e) do_accept();
      });
      return;
    }
    beast::error_code ignored;
    s.set_option(tcp::no_delay(true), ignored);
    s.non_blocking(true, ignored);
    auto c = std::make_shared<detail::Connection>(*target, std::move(s));
    asio::post(target->ioc, [c] { c->start(); });
    do_accept();
  });
}

// With the descriptor table full, a connection waiting in the listen backlog would wait
// forever, its client with it (the embedded client shares our table, so it may hold every
// slot while waiting for us). The spare descriptor makes room to accept one and close it at
// once: its client sees the connection closed, records a failure and frees its own socket.
// The accepted socket, shut down, becomes the next spare, so the slot is never left free for
// another thread to take between closing the connection and re-reserving. False when nothing
// was shed (no spare, or the connection went away).
bool Server::Impl::shed_waiting_connection() {
  // Linux reports EMFILE before looking at the backlog: with nobody waiting, keep the spare.
  pollfd waiting{acceptor->native_handle(), POLLIN, 0};
  if (::poll(&waiting, 1, 0) != 1) return false;
  if (spare_fd < 0) spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (spare_fd < 0) return false;
  ::close(spare_fd);
  spare_fd = -1;
  // The listening socket is non-blocking (set in start), so this never waits.
  const int fd = ::accept4(acceptor->native_handle(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) {
    spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    return false;
  }
  ::shutdown(fd, SHUT_RDWR);
  spare_fd = fd;
  return true;
}

Server::Server(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->opts = std::move(options);
}

Server::~Server() {
  stop();
}

void Server::start() {
  Impl& im = *impl_;
  std::lock_guard lock(im.stop_mu);
  if (im.started) return;
  const Options& o = im.opts;
  if (o.threads < 1 || o.threads > 256) {
    throw core::Error(core::ErrorKind::kUsage, "--threads",
                      "must be between 1 and 256, got " + std::to_string(o.threads));
  }
  if (o.max_model_len < 2) {
    throw core::Error(core::ErrorKind::kUsage, "--max-model-len",
                      "must be at least 2, got " + std::to_string(o.max_model_len));
  }
  im.tok = o.tokenizer
               ? o.tokenizer
               : std::shared_ptr<const tokenizer::Tokenizer>(tokenizer::make_word_tokenizer());
  const int32_t vocab = im.tok->vocab_size();
  // Output token ids are drawn modulo the vocabulary size (loading refuses an empty one).
  if (vocab < 1) {
    throw core::Error(core::ErrorKind::kInput, "--tokenizer " + im.tok->name(),
                      "has an empty vocabulary: the simulator needs ids to stream");
  }
  im.token_json.resize(static_cast<size_t>(vocab));
  for (int32_t i = 0; i < vocab; ++i) {
    core::append_json_escaped(im.token_json[static_cast<size_t>(i)], im.tok->token_text(i));
  }

  core::raise_open_files_limit();

  for (int i = 0; i < o.threads; ++i) {
    auto t = std::make_unique<detail::IoThread>(im, i);
    t->rng.seed(o.seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(i));
    t->fault_rng.seed(~(o.seed * 0xbf58476d1ce4e5b9ULL + static_cast<uint64_t>(i)));
    im.threads.push_back(std::move(t));
  }
  std::vector<detail::FrontThread> fronts;
  for (auto& t : im.threads) fronts.push_back({&t->ioc, t.get()});
  if (o.deployment) {
    im.trace = o.deployment->trace;
    im.schedule = detail::make_deployment_schedule(*o.deployment, o.deployment_frontend,
                                                   im.trace != nullptr, std::move(fronts));
  } else {
    im.schedule = detail::make_model_schedule(o, std::move(fronts));
    if (!o.trace_out.empty()) {
      im.trace = std::make_shared<detail::TraceWriter>(o.trace_out, o.trace_out_flag);
    }
  }

  detail::IoThread& t0 = *im.threads[0];
  const std::string where = "sim: listen on " + o.host + ":" + std::to_string(o.port);
  beast::error_code ec;
  auto address = asio::ip::make_address(o.host, ec);
  if (ec) throw core::Error(core::ErrorKind::kUsage, "--host " + o.host, "not an IP address");
  im.acceptor = std::make_unique<tcp::acceptor>(t0.ioc);
  tcp::endpoint ep(address, o.port);
  im.acceptor->open(ep.protocol(), ec);
  if (!ec) im.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) im.acceptor->bind(ep, ec);
  if (!ec) im.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) im.acceptor->non_blocking(true, ec);
  if (ec) throw core::Error(core::ErrorKind::kUsage, where, ec.message());
  im.spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  im.bound_port = im.acceptor->local_endpoint().port();
  im.accept_retry = std::make_unique<asio::steady_timer>(t0.ioc);
  im.do_accept();

  for (auto& t : im.threads) {
    t->guard.emplace(asio::make_work_guard(t->ioc));
    detail::IoThread* tp = t.get();
    t->thread = std::thread([tp] {
      // Timer wake-ups to the µs rather than the default +50 µs slack, so the spin before each
      // due time (token_schedule.cpp) can stay short.
      prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
      tp->ioc.run();
    });
  }
  im.started = true;
}

uint16_t Server::port() const {
  return impl_->bound_port;
}

void Server::wait() {
  Impl& im = *impl_;
  {
    // SIGINT/SIGTERM through the process's one handler (core/interrupt.h): its descriptor
    // becomes readable at the first signal.
    core::install_interrupt_handler();
    asio::io_context sig_ioc;
    asio::posix::stream_descriptor interrupt(sig_ioc, ::dup(core::interrupt_fd()));
    interrupt.async_wait(asio::posix::stream_descriptor::wait_read, [&](beast::error_code ec) {
      if (!ec) sig_ioc.stop();
    });
    {
      std::lock_guard lock(im.wait_mu);
      if (im.stopped) return;
      im.wait_ioc = &sig_ioc;
    }
    auto guard = asio::make_work_guard(sig_ioc);
    sig_ioc.run();
    std::lock_guard lock(im.wait_mu);
    im.wait_ioc = nullptr;
  }
  stop();
}

void Server::stop() {
  Impl& im = *impl_;
  {
    std::lock_guard lock(im.wait_mu);
    if (im.wait_ioc) im.wait_ioc->stop();
  }
  std::lock_guard lock(im.stop_mu);
  if (im.stopped) return;
  {
    std::lock_guard wl(im.wait_mu);
    im.stopped = true;
  }
  if (!im.started) return;
  std::vector<std::future<void>> done;
  {
    std::promise<void> p;
    done.push_back(p.get_future());
    asio::post(im.threads[0]->ioc, [&im, p = std::make_shared<std::promise<void>>(std::move(p))] {
      beast::error_code ignored;
      im.acceptor->close(ignored);
      im.accept_retry->cancel();
      if (im.spare_fd >= 0) ::close(im.spare_fd);
      im.spare_fd = -1;
      p->set_value();
    });
  }
  for (auto& t : im.threads) {
    auto p = std::make_shared<std::promise<void>>();
    done.push_back(p->get_future());
    detail::IoThread* tp = t.get();
    asio::post(t->ioc, [&im, tp, p] {
      tp->close_all();
      im.schedule->stop(static_cast<size_t>(tp->index));
      p->set_value();
    });
  }
  for (auto& f : done) f.wait();
  for (auto& t : im.threads) {
    t->guard.reset();
    t->ioc.stop();
  }
  for (auto& t : im.threads) {
    if (t->thread.joinable()) t->thread.join();
  }
  if (im.trace) im.trace->flush();
}

}  // namespace servebench::sim
