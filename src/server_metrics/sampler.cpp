// The scraping thread: libcurl's easy interface (one handle per endpoint, so the connection is
// kept alive between scrapes), at the lowest CPU priority, so that it never delays a send or
// a read of the benchmark's own loop.
#include <curl/curl.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/clock.h"
#include "core/error.h"
#include "core/system.h"
#include "server_metrics/server_metrics.h"

namespace servebench::server_metrics {

namespace {

constexpr size_t kMaxBody = 64u << 20;  // a /metrics page is tens of kB; refuse runaway ones

size_t append_body(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  if (body->size() + size * count > kMaxBody) return 0;  // makes curl fail the transfer
  body->append(data, size * count);
  return size * count;
}

using CurlHandle = std::unique_ptr<CURL, void (*)(CURL*)>;
using HeaderList = std::unique_ptr<curl_slist, void (*)(curl_slist*)>;

struct Connection {
  SamplerTarget target;
  CurlHandle curl{nullptr, curl_easy_cleanup};
  HeaderList headers{nullptr, curl_slist_free_all};
  std::string body;
  char error[CURL_ERROR_SIZE] = {0};
};

void open(Connection& c, const SamplerOptions& options) {
  c.curl.reset(curl_easy_init());
  if (!c.curl) throw core::Error(core::ErrorKind::kInternal, c.target.display, "curl_easy_init");
  curl_slist* list = nullptr;
  for (const auto& h : options.headers) list = curl_slist_append(list, h.c_str());
  c.headers.reset(list);
  CURL* h = c.curl.get();
  curl_easy_setopt(h, CURLOPT_URL, c.target.url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, c.headers.get());
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &c.body);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c.error);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // gzip when the server offers it
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout_s * 1000));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.timeout_s * 1000));
  if (options.insecure) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!options.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options.ca_file.c_str());
}

// One GET, parsed; throws core::Error naming the endpoint (its display form) on any failure.
Scrape scrape(Connection& c) {
  c.body.clear();
  c.error[0] = '\0';
  CURLcode rc = curl_easy_perform(c.curl.get());
  const int64_t t_ns = core::mono_ns();
  if (rc != CURLE_OK) {
    throw core::Error(
        core::ErrorKind::kNetwork, "GET " + c.target.display,
        std::string("could not scrape (") + (c.error[0] ? c.error : curl_easy_strerror(rc)) + ")");
  }
  long status = 0;
  curl_easy_getinfo(c.curl.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {
    throw core::Error(core::ErrorKind::kNetwork, "GET " + c.target.display,
                      "HTTP " + std::to_string(status));
  }
  Scrape s;
  s.t_ns = t_ns;
  s.exposition = parse_exposition(c.body, c.target.display);
  if (s.exposition.samples.empty()) {
    throw core::Error(core::ErrorKind::kInput, c.target.display,
                      "no Prometheus samples in the answer");
  }
  return s;
}

}  // namespace

struct Sampler::State {
  SamplerOptions options;
  std::vector<Connection> connections;
  std::vector<EndpointSeries> series;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::thread thread;
  // options.keep_latest: each endpoint's last scrape, under its own lock (a scrape in progress
  // holds `mutex` for up to its timeout; a reader of latest() must not wait for it).
  std::mutex latest_mutex;
  std::vector<EndpointSeries> latest;

  void scrape_all() {
    for (size_t i = 0; i < connections.size(); ++i) {
      try {
        series[i].scrapes.push_back(scrape(connections[i]));
        if (options.keep_latest) {
          std::lock_guard lock(latest_mutex);
          latest[i].scrapes.assign(1, series[i].scrapes.back());
        }
      } catch (const core::Error& e) {
        if (series[i].failures++ == 0) series[i].first_error = core::redact_secrets(e.what());
      }
    }
  }

  void loop() {
    core::make_this_thread_background();
    const auto interval = std::chrono::nanoseconds(static_cast<int64_t>(options.interval_s * 1e9));
    auto next = std::chrono::steady_clock::now() + interval;
    std::unique_lock lock(mutex);
    for (;;) {
      if (wake.wait_until(lock, next, [&] { return stopping; })) return;
      scrape_all();
      next += interval;
      // Late (a slow server): skip the missed ticks instead of scraping back to back.
      const auto now = std::chrono::steady_clock::now();
      if (next < now) next = now + interval;
    }
  }
};

Sampler::Sampler(SamplerOptions options) : state_(std::make_unique<State>()) {
  state_->options = std::move(options);
  state_->connections.resize(state_->options.targets.size());
  state_->series.resize(state_->options.targets.size());
  state_->latest.resize(state_->options.targets.size());
  for (size_t i = 0; i < state_->connections.size(); ++i) {
    state_->connections[i].target = state_->options.targets[i];
    state_->series[i].url = state_->options.targets[i].display;
    state_->latest[i].url = state_->series[i].url;
    open(state_->connections[i], state_->options);
  }
}

Sampler::~Sampler() {
  if (state_->thread.joinable()) stop();
}

void Sampler::start() {
  state_->scrape_all();
  state_->thread = std::thread([this] { state_->loop(); });
}

std::vector<EndpointSeries> Sampler::stop() {
  if (state_->thread.joinable()) {
    {
      std::lock_guard lock(state_->mutex);
      state_->stopping = true;
    }
    state_->wake.notify_all();
    state_->thread.join();
  }
  state_->scrape_all();
  return std::move(state_->series);
}

std::vector<EndpointSeries> Sampler::latest() const {
  std::lock_guard lock(state_->latest_mutex);
  return state_->latest;
}

void probe(const SamplerTarget& target, const SamplerOptions& options) {
  Connection c;
  c.target = target;
  open(c, options);
  scrape(c);
}

}  // namespace servebench::server_metrics
