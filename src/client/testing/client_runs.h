// File: client/testing/client_runs.h (test support for the client part)
// client::run in the client's tests: a plan against a ScriptServer, run once per transport
// (the ClientRun fixture), the records and how the sink was called; vLLM-shaped answers.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/testing/script_server.h"
#include "record/record.h"
#include "tokenizer/tokenizer.h"

namespace servebench::client::testing {

constexpr int kPromptTokens = 5;
constexpr const char* kApiKey = "sk-test0123456789abcdefSECRET";

const tokenizer::Tokenizer& word_tokenizer();
double seconds_since(int64_t start_ns);
bool asked_continuous_usage(const Request& request);
// The plan index a request carries in its x-request-id ("req-<index>").
int request_index(const Request& request);
std::string usage_json(int completion_tokens);
// vLLM's completions stream of `tokens` words " w1 w2 …": usage in every chunk when asked for
// (and `usage` is true), a final usage-only chunk, then [DONE].
std::vector<std::string> completion_events(const Request& request, int tokens, bool usage = true);
std::string expected_text(int tokens);
std::string openai_error(const std::string& message);
Endpoint endpoint_for(const ScriptServer& server);
BodyOptions body_options();
std::vector<PlannedRequest> make_plan(int count, int32_t max_tokens, int64_t spacing_ns = 0);

struct RunResult {
  ClientStats stats;
  std::vector<record::RequestRecord> records;  // in delivery order
  bool sink_on_caller_thread = false;          // some call from the thread that called run()
  int sink_calls_at_once = 0;                  // most calls in progress together
  // Calls from the delivering thread (nice 19 or SCHED_IDLE), the others from event loops.
  size_t sink_calls_yielding = 0;

  // The record of plan index `index` (fails the test when there is not exactly one).
  const record::RequestRecord& of(uint64_t index) const {
    const record::RequestRecord* found = nullptr;
    int count = 0;
    for (const record::RequestRecord& r : records) {
      if (r.index == index) {
        found = &r;
        ++count;
      }
    }
    EXPECT_EQ(count, 1) << "records for index " << index;
    static const record::RequestRecord kNone;
    return found != nullptr ? *found : kNone;
  }
};

// Every ClientRun test runs once per transport: libcurl's and servebench's own HTTP/1.1.
extern HttpEngine current_engine;  // the one of the test being run
class ClientRun : public ::testing::TestWithParam<HttpEngine> {
 protected:
  void SetUp() override;
};

std::string engine_name(const ::testing::TestParamInfo<HttpEngine>& info);

// client::run with the current ClientRun transport; `on_record` sees each record as delivered.
RunResult run_plan(const Endpoint& endpoint, const BodyOptions& body,
                   const std::vector<PlannedRequest>& plan, const RunOptions& given = {},
                   const std::function<void(const record::RequestRecord&)>& on_record = {});
// One record per planned index, nothing else.
void expect_one_record_each(const RunResult& result, size_t plan_size);
// A loopback port nothing listens on.
int closed_port();

}  // namespace servebench::client::testing
