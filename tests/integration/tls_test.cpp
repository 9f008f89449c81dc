// `--ca-cert FILE` end to end (issue 19): fault_server.py serving HTTPS with a self-signed
// certificate for 127.0.0.1 (made by `openssl req`), reached by every request `servebench run`
// makes: the model lookup (GET /v1/models), the initial test request, the benchmark's requests
// and the --server-metrics scrapes. Skipped when openssl or python3 is missing.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"

namespace servebench::itest {
namespace {

// `servebench run` against base_url: no --model (it is looked up too), /metrics scraped.
std::vector<std::string> tls_run(const std::string& base_url, const std::string& dir) {
  return {"run",
          "--base-url",
          base_url,
          "--num-prompts",
          "3",
          "--random-input-len",
          "8",
          "--random-output-len",
          "4",
          "--server-metrics",
          base_url + "/metrics",
          "--save-result",
          "--result-dir",
          dir,
          "--result-filename",
          "r.json",
          "--disable-tqdm"};
}

TEST(RunTls, CaCertReachesTheModelLookupReadyCheckRequestsAndScrapes) {
  ::unsetenv("CURL_CA_BUNDLE");
  ::unsetenv("SSL_CERT_FILE");
  TempDir dir;
  const std::string cert = dir.path() + "/cert.pem", key = dir.path() + "/key.pem";
  const std::string make_cert =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
      "-addext subjectAltName=IP:127.0.0.1 -keyout " +
      key + " -out " + cert + " >/dev/null 2>&1";
  if (std::system(make_cert.c_str()) != 0) GTEST_SKIP() << "openssl req failed (no openssl?)";
  if (std::system("python3 -c pass >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  const int port = free_port();
  Background server(
      {"python3", std::string(SERVEBENCH_SOURCE_DIR) + "/tests/integration/fault_server.py",
       "--port", std::to_string(port), "--fault", "ok", "--tls", cert, key},
      Background::Command::kProgram);
  ASSERT_TRUE(server.wait_for_port(port, 20)) << server.log();
  const std::string base_url = "https://127.0.0.1:" + std::to_string(port);

  // Without it the self-signed certificate is refused, naming the reason.
  const Outcome refused = run(tls_run(base_url, dir.path()), 60);
  EXPECT_EQ(refused.exit_code, 4) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("certificate"), std::string::npos) << refused.err;

  std::vector<std::string> args = tls_run(base_url, dir.path());
  args.insert(args.end(), {"--ca-cert", cert});
  const Outcome o = run(args, 60);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(console_value(o.out, "Successful requests:"), 3) << o.out;
  const nlohmann::json result = nlohmann::json::parse(read_file(dir.path() + "/r.json"));
  EXPECT_EQ(result["completed"], 3);
  EXPECT_TRUE(result["servebench"].contains("server_metrics")) << result["servebench"].dump();

  // $SSL_CERT_FILE does the same for every one of those requests.
  std::filesystem::remove(dir.path() + "/r.json");
  ::setenv("SSL_CERT_FILE", cert.c_str(), 1);
  const Outcome from_environment = run(tls_run(base_url, dir.path()), 60);
  ::unsetenv("SSL_CERT_FILE");
  EXPECT_EQ(from_environment.exit_code, 0) << from_environment.out << from_environment.err;
}

TEST(RunTls, CaCertThatCannotBeReadIsRefusedBeforeAnythingIsSent) {
  const Outcome o = run({"run", "--base-url", "https://127.0.0.1:1", "--ca-cert",
                         "/nonexistent/servebench-ca.pem", "--num-prompts", "1"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--ca-cert: '/nonexistent/servebench-ca.pem' cannot be read"),
            std::string::npos)
      << o.err;
}

}  // namespace
}  // namespace servebench::itest
