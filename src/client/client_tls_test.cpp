// A private CA for TLS (issue 19, item 10): Endpoint::ca_file, else $CURL_CA_BUNDLE, else
// $SSL_CERT_FILE, reach libcurl. A self-signed certificate for 127.0.0.1 made by `openssl req`,
// served by a tiny HTTPS server in Python's ssl module on 127.0.0.1 (skipped when either tool
// is missing).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "client/client.h"
#include "core/error.h"

namespace servebench::client {
namespace {

namespace fs = std::filesystem;

// Answers every POST with one completion event and [DONE]; writes its port, then its pid.
constexpr const char* kServerScript = R"PY(
import http.server, os, ssl, sys
directory = sys.argv[1]
class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = (b'data: {"choices":[{"index":0,"text":" ok","finish_reason":"length"}]}\n\n'
                b'data: [DONE]\n\n')
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem"))
server.socket = context.wrap_socket(server.socket, server_side=True)
with open(os.path.join(directory, "port.tmp"), "w") as f:
    f.write("%d %d" % (server.server_address[1], os.getpid()))
os.rename(os.path.join(directory, "port.tmp"), os.path.join(directory, "port"))
server.timeout = 1
import time
deadline = time.time() + 120  # never outlives a hung test by long
while time.time() < deadline:
    server.handle_request()
)PY";

class TlsServer {
 public:
  TlsServer() {
    directory_ = fs::temp_directory_path() / ("servebench-tls-" + std::to_string(::getpid()));
    fs::create_directories(directory_);
    const std::string d = directory_.string();
    const std::string make_cert =
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
        "-addext subjectAltName=IP:127.0.0.1 -keyout " +
        d + "/key.pem -out " + d + "/cert.pem >/dev/null 2>&1";
    if (std::system(make_cert.c_str()) != 0) {
      skip_reason_ = "openssl req failed (no openssl CLI?)";
      return;
    }
    std::ofstream(directory_ / "server.py") << kServerScript;
    const std::string start = "python3 " + d + "/server.py " + d + " >" + d + "/server.log 2>&1 &";
    if (std::system(start.c_str()) != 0) {
      skip_reason_ = "could not start python3";
      return;
    }
    for (int i = 0; i < 200 && !fs::exists(directory_ / "port"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(directory_ / "port");
    if (!(in >> port_ >> pid_)) skip_reason_ = "the python3 TLS server did not start";
  }
  ~TlsServer() {
    if (pid_ > 0) ::kill(pid_, SIGTERM);  // the server this test started
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }
  const std::string& skip_reason() const { return skip_reason_; }
  std::string cert() const { return (directory_ / "cert.pem").string(); }
  std::string url() const {
    return "https://127.0.0.1:" + std::to_string(port_) + "/v1/completions";
  }

 private:
  fs::path directory_;
  std::string skip_reason_;
  int port_ = 0;
  pid_t pid_ = 0;
};

// wait_until_ready's failure, or "" when it succeeded.
std::string ready_failure(const Endpoint& endpoint) {
  try {
    wait_until_ready(endpoint, 0.3);
    return "";
  } catch (const core::Error& error) {
    return error.what();
  }
}

TEST(TlsCaFile, PrivateCaFromTheEndpointOrTheEnvironment) {
  ::unsetenv("CURL_CA_BUNDLE");
  ::unsetenv("SSL_CERT_FILE");
  TlsServer server;
  if (!server.skip_reason().empty()) GTEST_SKIP() << server.skip_reason();
  Endpoint endpoint;
  endpoint.url = server.url();
  endpoint.model = "m";
  endpoint.timeout_s = 10;

  // Verified against the system's CAs: refused.
  const std::string refused = ready_failure(endpoint);
  EXPECT_NE(refused.find("certificate"), std::string::npos) << refused;

  Endpoint with_file = endpoint;
  with_file.ca_file = server.cert();
  EXPECT_EQ(ready_failure(with_file), "");

  for (const char* variable : {"CURL_CA_BUNDLE", "SSL_CERT_FILE"}) {
    ::setenv(variable, server.cert().c_str(), 1);
    EXPECT_EQ(ready_failure(endpoint), "") << variable;
    ::unsetenv(variable);
  }

  // The endpoint's file wins over the environment's.
  ::setenv("SSL_CERT_FILE", "/nonexistent/ca.pem", 1);
  EXPECT_EQ(ready_failure(with_file), "");
  ::unsetenv("SSL_CERT_FILE");

  Endpoint missing = endpoint;
  missing.ca_file = "/nonexistent/ca.pem";
  const std::string unreadable = ready_failure(missing);
  EXPECT_NE(unreadable.find("CA file"), std::string::npos) << unreadable;
  EXPECT_NE(unreadable.find("/nonexistent/ca.pem"), std::string::npos) << unreadable;
}

}  // namespace
}  // namespace servebench::client
