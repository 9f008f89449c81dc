// Issue 19, defect 2: a /metrics label with a Latin-1 byte made the result write fail after the
// run (nlohmann: "incomplete UTF-8 string", exit 70, a 0-byte result). Now the byte is shown as
// `\xE9` from the parse on, and the summary always dumps.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "server_metrics/server_metrics.h"

namespace servebench::server_metrics {
namespace {

// Answers every request on 127.0.0.1 with the same /metrics text, until destroyed.
class FixedMetricsServer {
 public:
  explicit FixedMetricsServer(std::string body) : body_(std::move(body)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 16);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FixedMetricsServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/metrics"; }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      const std::string reply = "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: " +
                                std::to_string(body_.size()) + "\r\nconnection: close\r\n\r\n" +
                                body_;
      if (::send(c, reply.data(), reply.size(), MSG_NOSIGNAL) < 0) {
        // the client left: nothing to do
      }
      ::close(c);
    }
  }
  std::string body_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(InvalidUtf8, Latin1LabelGoesFromScrapeToSummaryJson) {
  FixedMetricsServer server(
      "# TYPE vllm:num_requests_running gauge\n"
      "vllm:num_requests_running{model_name=\"lab\xe9\",engine=\"0\"} 3\n");
  SamplerOptions so;
  so.targets = {{server.url(), server.url()}};
  so.interval_s = 0.02;
  Sampler sampler(so);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const std::vector<EndpointSeries> series = sampler.stop();
  ASSERT_EQ(series.size(), 1u);
  ASSERT_EQ(series[0].failures, 0u) << series[0].first_error;
  ASSERT_GE(series[0].scrapes.size(), 2u);
  const std::vector<std::pair<std::string, std::string>> labels =
      split_labels(series[0].scrapes[0].exposition.samples.at(0).labels);
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels[1].first, "model_name");
  EXPECT_EQ(labels[1].second, "lab\\xE9");  // the four characters \xE9
  const nlohmann::json summary = summarize(series, SummaryOptions{});
  std::string dumped;
  EXPECT_NO_THROW(dumped = summary.dump(2));
  EXPECT_NE(dumped.find("lab\\\\xE9"), std::string::npos) << dumped;  // JSON escapes the backslash
}

}  // namespace
}  // namespace servebench::server_metrics
