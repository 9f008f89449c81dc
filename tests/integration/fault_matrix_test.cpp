// The fault matrix (issue 19): a scripted misbehaving server (fault_server.py, loopback only)
// drives each fault class through both HTTP engines; each case asserts the exit status, the
// message, and that every request is accounted for: sent = completed + failed, the failed ones
// by reason, one record each.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace servebench::itest {
namespace {

using nlohmann::json;
constexpr int kRequests = 4;
// "user:hunter2-secret" in base64, as a Basic auth header carries it.
constexpr const char* kBasicCredentials = "dXNlcjpodW50ZXIyLXNlY3JldA==";

struct FaultCase {
  std::string name;    // test name suffix
  std::string fault;   // fault_server.py --fault; "refused" / "unresolvable": no server
  std::string engine;  // --http-engine
  int exit_code = 0;
  int completed = 0;   // of kRequests; the rest failed with `reason`
  std::string reason;  // servebench.failures_by_reason key of the failed ones
  // In every failed record's error, or (a run that fails) in stderr.
  std::string message;
  std::string bind = "127.0.0.1";      // the server's address
  std::string url_host = "127.0.0.1";  // as the client names it
};

void PrintTo(const FaultCase& c, std::ostream* os) {
  *os << c.name;
}

// fault_server.py in the background, on 127.0.0.1 or ::1; SIGTERM when destroyed.
class FaultServer {
 public:
  FaultServer(const std::string& fault, const std::string& bind, int port) : port_(port) {
    const std::string script =
        std::string(SERVEBENCH_SOURCE_DIR) + "/tests/integration/" + "fault_server.py";
    pid_ = ::fork();
    if (pid_ == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
      ::execlp("python3", "python3", script.c_str(), "--port", std::to_string(port).c_str(),
               "--fault", fault.c_str(), "--host", bind.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    v6_ = bind == "::1";
  }
  ~FaultServer() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  bool wait_ready(double timeout_s) const {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < end) {
      const int fd = ::socket(v6_ ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
      int rc;
      if (v6_) {
        sockaddr_in6 a{};
        a.sin6_family = AF_INET6;
        a.sin6_port = htons(static_cast<uint16_t>(port_));
        a.sin6_addr = in6addr_loopback;
        rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
      } else {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(port_));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
      }
      ::close(fd);
      if (rc == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  bool v6_ = false;
};

bool has_ipv6_loopback() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

class FaultMatrix : public ::testing::TestWithParam<FaultCase> {};

TEST_P(FaultMatrix, EveryRequestIsAccountedFor) {
  const FaultCase& c = GetParam();
  if (c.bind == "::1" && !has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback here";
  const int port = free_port();  // "refused": nobody listens on it
  std::unique_ptr<FaultServer> server;
  std::string host = c.url_host;
  if (c.fault == "unresolvable") host = "servebench-fault.invalid";
  if (c.fault != "refused" && c.fault != "unresolvable") {
    server = std::make_unique<FaultServer>(c.fault, c.bind, port);
    ASSERT_TRUE(server->wait_ready(20)) << "fault_server.py did not start";
  }
  std::string url = "http://" + host + ":" + std::to_string(port);
  if (c.fault == "echo-auth")
    url = "http://user:hunter2-secret@" + host + ":" + std::to_string(port);
  TempDir dir;
  const Outcome o = run({"run",
                         "--base-url",
                         url,
                         "--model",
                         "m",
                         "--tokenizer",
                         "builtin",
                         "--dataset-name",
                         "random",
                         "--random-input-len",
                         "8",
                         "--random-output-len",
                         "4",
                         "--num-prompts",
                         std::to_string(kRequests),
                         "--request-timeout-sec",
                         "3",
                         "--ready-check-timeout-sec",
                         "10",
                         "--http-engine",
                         c.engine,
                         "--server-metrics",
                         "off",
                         "--disable-tqdm",
                         "--save-result",
                         "--result-dir",
                         dir.path(),
                         "--result-filename",
                         "r.json"},
                        90);
  ASSERT_FALSE(o.timed_out) << "hung: " << o.out << o.err;
  ASSERT_EQ(o.exit_code, c.exit_code) << o.out << o.err;
  if (c.exit_code != 0) {
    EXPECT_NE(o.err.find(c.message), std::string::npos) << o.err;
    EXPECT_NE(o.err.find(host), std::string::npos) << "the message names the server: " << o.err;
    return;
  }
  const std::string result_text = read_file(dir.path() + "/r.json");
  ASSERT_FALSE(result_text.empty()) << o.out << o.err;
  const json result = json::parse(result_text);
  const int completed = result["completed"].get<int>();
  const int failed = result["failed"].get<int>();
  EXPECT_EQ(completed + failed, kRequests) << "sent = completed + failed";
  EXPECT_EQ(result["servebench"]["requests_sent"], kRequests);
  EXPECT_EQ(completed, c.completed) << o.out << o.err;
  json by_reason = json::object();
  if (c.completed < kRequests) by_reason[c.reason] = kRequests - c.completed;
  EXPECT_EQ(result["servebench"]["failures_by_reason"], by_reason);
  const std::string records_text = read_file(dir.path() + "/r.records.jsonl");
  const std::vector<std::string> lines = lines_of(records_text);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kRequests)) << "one record per request";
  for (const std::string& line : lines) {
    const json r = json::parse(line);
    if (r["success"].get<bool>()) continue;
    EXPECT_NE(r["error"].get<std::string>().find(c.message), std::string::npos) << r["error"];
  }
  // Secrets never written (defect 6: URL credentials sent as Basic auth, echoed back).
  for (const std::string* text : {&o.out, &o.err, &result_text, &records_text}) {
    EXPECT_EQ(text->find(kBasicCredentials), std::string::npos) << *text;
    EXPECT_EQ(text->find("hunter2-secret"), std::string::npos) << *text;
  }
}

std::vector<FaultCase> both_engines(FaultCase c, const std::string& http1_message,
                                    const std::string& curl_message) {
  FaultCase a = c, b = c;
  a.engine = "http1";
  a.name += "_http1";
  a.message = http1_message;
  b.engine = "curl";
  b.name += "_curl";
  b.message = curl_message;
  return {a, b};
}

// A case of `fault`: `completed` of kRequests succeed, the rest fail with `reason`.
FaultCase fault_case(const std::string& name, const std::string& fault, int completed,
                     const std::string& reason = "") {
  FaultCase c;
  c.name = name;
  c.fault = fault;
  c.completed = completed;
  c.reason = reason;
  return c;
}

std::vector<FaultCase> passing_cases() {
  std::vector<FaultCase> all;
  auto add = [&](const FaultCase& c, const std::string& m1, const std::string& m2) {
    for (FaultCase& x : both_engines(c, m1, m2)) all.push_back(x);
  };
  add(fault_case("ok", "ok", kRequests), "", "");
  for (const std::string status : {"400", "500", "503"}) {
    const std::string m = "HTTP " + status + ": fault server: HTTP " + status;
    add(fault_case("status_" + status, status, 0, "http_" + status), m, m);
  }
  add(fault_case("reset_mid_stream", "reset", 0, "connection"), "Connection reset by peer",
      "Connection reset by peer");
  add(fault_case("stall", "stall", 0, "timeout"),
      "no complete response within the request timeout of 3 s", "Timeout was reached");
  add(fault_case("malformed_sse", "malformed", 0, "malformed"), "malformed SSE event at byte",
      "malformed SSE event at byte");
  add(fault_case("split_sse", "split", kRequests), "", "");
  add(fault_case("chunked_encoding_error", "chunked", 0, "malformed"), "bad byte in a chunk size",
      "chunked-encoding");
  add(fault_case("error_event", "error-event", 0, "stream_error"),
      "server error event: fault server: the engine died",
      "server error event: fault server: the engine died");
  add(fault_case("slow_headers", "slow-headers", kRequests), "", "");
  add(fault_case("huge_event", "huge", kRequests), "", "");
  FaultCase refused = fault_case("refused", "refused", 0);
  refused.exit_code = 4;
  add(refused, "Couldn't connect to server", "Couldn't connect to server");
  FaultCase unresolvable = fault_case("unresolvable", "unresolvable", 0);
  unresolvable.exit_code = 4;
  add(unresolvable, "Couldn't resolve host name", "Couldn't resolve host name");
  add(fault_case("cr_only_line_ends", "cr-only", kRequests), "", "");
  // Sent as Basic auth, as vLLM's aiohttp client does; the echoed header never written.
  add(fault_case("url_credentials_echoed", "echo-auth", 0, "http_401"), "HTTP 401", "HTTP 401");
  FaultCase v6 = fault_case("localhost_on_ipv6", "ok", kRequests);
  v6.bind = "::1";
  v6.url_host = "localhost";
  add(v6, "", "");
  return all;
}

std::string case_name(const ::testing::TestParamInfo<FaultCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultMatrix, ::testing::ValuesIn(passing_cases()), case_name);

}  // namespace
}  // namespace servebench::itest
