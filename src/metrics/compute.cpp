// vLLM's calculate_metrics (vllm/benchmarks/serve.py) over RequestRecords, plus servebench's
// extras. Times are integer ns in the records; vLLM works in float seconds. Only the unit of the
// intermediate differs: every formula below is vLLM's, step for step (docs/metrics.md).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "metrics/metrics.h"

namespace servebench::metrics {
namespace {

constexpr double kNsPerMs = 1e6;
constexpr double kNsPerS = 1e9;
constexpr int64_t kNsPerSecond = 1'000'000'000;

double ns_to_ms(int64_t ns) {
  return static_cast<double>(ns) / kNsPerMs;
}
double ns_to_s(int64_t ns) {
  return static_cast<double>(ns) / kNsPerS;
}

// A completed request as the metrics need it: success plus the times vLLM derives from it.
bool usable(const record::RequestRecord& r) {
  return r.success && r.sent_ns >= 0 && r.first_token_ns >= r.sent_ns &&
         r.last_token_ns >= r.first_token_ns;
}

bool contains_any(const std::string& text, std::initializer_list<const char*> words) {
  for (const char* w : words) {
    if (text.find(w) != std::string::npos) return true;
  }
  return false;
}

// An HTTP error status named in the error text ("HTTP 503", "http_429", "HTTP/1.1 500") when
// the record carries none; 0 if there is none.
int http_code_in(const std::string& lower_text) {
  for (size_t at = lower_text.find("http"); at != std::string::npos;
       at = lower_text.find("http", at + 4)) {
    size_t i = at + 4;
    if (lower_text.compare(i, 4, "/1.1") == 0 || lower_text.compare(i, 4, "/1.0") == 0) i += 4;
    if (lower_text.compare(i, 2, "/2") == 0) i += 2;
    if (i < lower_text.size() && (lower_text[i] == ' ' || lower_text[i] == '_')) ++i;
    if (i + 3 > lower_text.size()) continue;
    if (!std::isdigit(static_cast<unsigned char>(lower_text[i])) ||
        !std::isdigit(static_cast<unsigned char>(lower_text[i + 1])) ||
        !std::isdigit(static_cast<unsigned char>(lower_text[i + 2]))) {
      continue;
    }
    if (i + 3 < lower_text.size() && std::isdigit(static_cast<unsigned char>(lower_text[i + 3]))) {
      continue;
    }
    const int code = std::stoi(lower_text.substr(i, 3));
    if (code >= 400 && code <= 599) return code;
  }
  return 0;
}

// Per-token inter-token latency from chunk gaps and tokens per chunk. The gap before a chunk
// is spread evenly over the tokens it carries (each one a sample). Chunks before the first one
// carrying a token (a chat role chunk) belong to TTFT; a token-less chunk after it passes its
// gap on to the next chunk with tokens; a trailing token-less chunk adds nothing.
void append_per_token_itl(const record::RequestRecord& r, std::vector<double>& out_ms) {
  size_t first = 0;
  while (first < r.chunk_tokens.size() && r.chunk_tokens[first] <= 0) ++first;
  int64_t pending_ns = 0;
  for (size_t i = first + 1; i < r.chunk_ns.size(); ++i) {
    pending_ns += r.chunk_ns[i] - r.chunk_ns[i - 1];
    const int32_t tokens = r.chunk_tokens[i];
    if (tokens <= 0) continue;
    const double per_token_ms = ns_to_ms(pending_ns) / tokens;
    out_ms.insert(out_ms.end(), static_cast<size_t>(tokens), per_token_ms);
    pending_ns = 0;
  }
}

// vLLM's peak output tokens/s: each content chunk counts as one token in 1-second buckets from
// the earliest start; bucket count = ceil(max end - min start) + 1.
double peak_output_tokens_per_s(const std::vector<const record::RequestRecord*>& ok) {
  if (ok.empty()) return 0;
  int64_t min_start = std::numeric_limits<int64_t>::max();
  int64_t max_end = std::numeric_limits<int64_t>::min();
  for (const auto* r : ok) {
    min_start = std::min(min_start, r->sent_ns);
    max_end = std::max(max_end, r->last_token_ns);
  }
  const int64_t span = max_end - min_start;
  const auto buckets = static_cast<size_t>((span + kNsPerSecond - 1) / kNsPerSecond + 1);
  std::vector<double> tokens(buckets, 0.0);
  auto add = [&](int64_t t) {
    const auto b = static_cast<size_t>((t - min_start) / kNsPerSecond);
    if (b < buckets) tokens[b] += 1;
  };
  for (const auto* r : ok) {
    if (r->chunk_ns.empty()) {
      add(r->first_token_ns);  // no chunk list: start + ttft is vLLM's only token time
    } else {
      for (int64_t t : r->chunk_ns) add(t);
    }
  }
  return *std::max_element(tokens.begin(), tokens.end());
}

// vLLM's peak concurrent requests: sweep over half-open [start, start + latency), departures
// before arrivals at equal times.
double peak_concurrency(const std::vector<const record::RequestRecord*>& ok) {
  std::vector<std::pair<int64_t, int>> events;
  events.reserve(ok.size() * 2);
  for (const auto* r : ok) {
    events.emplace_back(r->sent_ns, 1);
    events.emplace_back(r->last_token_ns, -1);
  }
  std::sort(events.begin(), events.end());
  int current = 0, peak = 0;
  for (const auto& e : events) {
    current += e.second;
    peak = std::max(peak, current);
  }
  return peak;
}

double rate_from_t0(size_t count, int64_t last_ns) {
  if (count == 0) return 0;
  if (last_ns <= 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(count) / ns_to_s(last_ns);
}

}  // namespace

int64_t vllm_output_tokens(const record::RequestRecord& r) {
  int64_t n = r.output_tokens();
  if (n == 0) n = r.client_output_tokens >= 0 ? r.client_output_tokens : 1;
  return n;
}

std::string classify_failure(const record::RequestRecord& r) {
  if (r.success && usable(r)) return "";
  if (r.success) return "malformed";  // claimed success without consistent token times
  if (r.sent_ns < 0) return "not_sent";
  if (r.http_status != 0 && r.http_status != 200) return "http_" + std::to_string(r.http_status);
  std::string e = r.error;
  std::transform(e.begin(), e.end(), e.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (int code = http_code_in(e); code != 0) return "http_" + std::to_string(code);
  // A cancellation (stop + drain) is named as such even when a drain timeout ended it.
  if (contains_any(e, {"cancel", "abort", "interrupt", "drain"})) return "cancelled";
  if (contains_any(e, {"timeout", "timed out"})) return "timeout";
  if (contains_any(e, {"connect", "refused", "reset", "resolve", "empty reply", "ssl", "tls",
                       "recv failure", "send failure", "broken pipe", "closed"})) {
    return "connection";
  }
  // A broken chunked encoding is malformed with either engine (libcurl: "Illegal or missing
  // hexadecimal sequence in chunked-encoding"; ours: "bad byte in a chunk size").
  if (contains_any(e, {"json", "malformed", "parse", "invalid", "utf-8", "utf8", "chunked-encoding",
                       "chunk size"})) {
    return "malformed";
  }
  if (contains_any(e, {"never received", "no choices", "no token"})) return "no_tokens";
  if (r.first_token_ns >= 0 || contains_any(e, {"stream"})) return "stream_error";
  if (r.http_status == 200) return "no_tokens";
  return "other";
}

Summary compute(std::span<const record::RequestRecord> records, double duration_s,
                const Options& options) {
  Summary summary;
  VllmMetrics& v = summary.vllm;
  Extras& x = summary.extras;
  v.duration_s = duration_s;
  x.requested_rate = options.requested_rate;

  std::vector<const record::RequestRecord*> ok;
  std::vector<double> ttft_ms, tpot_ms, itl_ms, e2el_ms, queue_ms, e2el_queue_ms;
  std::vector<double> itl_token_ms, ttft_intended_ms, e2el_intended_ms, lag_ms;
  // Per completed request, in seconds, for goodput (vLLM compares seconds with SLO / 1000).
  std::vector<double> good_ttft_s, good_tpot_s, good_e2el_s;
  size_t planned = 0;
  int64_t last_sent_ns = 0, last_intended_ns = 0;

  for (const record::RequestRecord& r : records) {
    if (r.warmup) {
      ++x.warmup_ignored;
      continue;
    }
    if (r.intended_ns >= 0) {
      ++planned;
      last_intended_ns = std::max(last_intended_ns, r.intended_ns);
    }
    if (r.sent_ns >= 0) {
      ++x.requests_sent;
      last_sent_ns = std::max(last_sent_ns, r.sent_ns);
      if (r.intended_ns >= 0) lag_ms.push_back(ns_to_ms(r.sent_ns - r.intended_ns));
    }
    if (!usable(r)) {
      ++v.failed;
      const std::string reason = classify_failure(r);
      ++x.failures_by_reason[reason];
      Unfinished& u = reason == "cancelled" || reason == "not_sent" ? x.incomplete : x.errored;
      ++u.requests;
      u.input_tokens += r.input_tokens();
      // What arrived before it ended: usage when the server sent it, else the client's count.
      u.output_tokens += r.server_completion_tokens >= 0
                             ? r.server_completion_tokens
                             : int64_t{std::max(0, r.client_output_tokens)};
      continue;
    }
    ok.push_back(&r);
    ++v.completed;
    const int64_t output_tokens = vllm_output_tokens(r);
    v.total_output += output_tokens;
    v.total_input += r.input_tokens();

    const int64_t ttft_ns = r.first_token_ns - r.sent_ns;
    const int64_t latency_ns = r.last_token_ns - r.sent_ns;
    ttft_ms.push_back(ns_to_ms(ttft_ns));
    e2el_ms.push_back(ns_to_ms(latency_ns));
    double tpot_s = 0;  // vLLM: 0 for goodput when output_len <= 1, and left out of TPOT
    if (output_tokens > 1) {
      tpot_s = ns_to_s(latency_ns - ttft_ns) / (output_tokens - 1);
      tpot_ms.push_back(ns_to_ms(latency_ns - ttft_ns) / (output_tokens - 1));
    }
    good_ttft_s.push_back(ns_to_s(ttft_ns));
    good_tpot_s.push_back(tpot_s);
    good_e2el_s.push_back(ns_to_s(latency_ns));
    for (size_t i = 1; i < r.chunk_ns.size(); ++i) {
      itl_ms.push_back(ns_to_ms(r.chunk_ns[i] - r.chunk_ns[i - 1]));
    }
    const double queue = r.intended_ns >= 0 ? ns_to_ms(r.sent_ns - r.intended_ns) : 0.0;
    queue_ms.push_back(queue);
    e2el_queue_ms.push_back(ns_to_ms(latency_ns) + queue);

    if (!r.chunk_tokens.empty() && r.chunk_tokens.size() == r.chunk_ns.size()) {
      ++x.itl_per_token_requests;
      append_per_token_itl(r, itl_token_ms);
    }
    if (r.intended_ns >= 0) {
      ttft_intended_ms.push_back(ns_to_ms(r.first_token_ns - r.intended_ns));
      e2el_intended_ms.push_back(ns_to_ms(r.last_token_ns - r.intended_ns));
    }
  }

  const double dur = duration_s > 0 ? duration_s : 0;
  auto per_s = [dur](double n) { return dur > 0 ? n / dur : 0.0; };
  v.request_throughput = per_s(static_cast<double>(v.completed));
  v.output_throughput = per_s(static_cast<double>(v.total_output));
  v.total_token_throughput = per_s(static_cast<double>(v.total_input + v.total_output));

  v.request_goodput = -1;
  if (!options.goodput_slo_ms.empty()) {
    size_t good = 0;
    auto slo_s = [&](const char* name) {
      auto it = options.goodput_slo_ms.find(name);
      return it == options.goodput_slo_ms.end() ? std::numeric_limits<double>::quiet_NaN()
                                                : it->second / 1000.0;
    };
    const double ttft_slo = slo_s("ttft"), tpot_slo = slo_s("tpot"), e2el_slo = slo_s("e2el");
    for (size_t i = 0; i < good_ttft_s.size(); ++i) {
      bool is_good = true;
      if (!std::isnan(ttft_slo)) is_good = is_good && ttft_slo >= good_ttft_s[i];
      if (!std::isnan(tpot_slo)) is_good = is_good && tpot_slo >= good_tpot_s[i];
      if (!std::isnan(e2el_slo)) is_good = is_good && e2el_slo >= good_e2el_s[i];
      if (is_good) ++good;
    }
    v.request_goodput = per_s(static_cast<double>(good));
  }

  const auto& p = options.percentiles;
  v.ttft_ms = summarize(std::move(ttft_ms), p);
  v.tpot_ms = summarize(std::move(tpot_ms), p);
  v.itl_ms = summarize(std::move(itl_ms), p);
  v.e2el_ms = summarize(std::move(e2el_ms), p);
  v.client_queue_time_ms = summarize(std::move(queue_ms), p);
  v.e2el_including_client_queue_ms = summarize(std::move(e2el_queue_ms), p);
  v.max_output_tokens_per_s = peak_output_tokens_per_s(ok);
  v.max_concurrent_requests = peak_concurrency(ok);

  x.itl_per_token_ms = summarize(std::move(itl_token_ms), p);
  x.ttft_from_intended_ms = summarize(std::move(ttft_intended_ms), p);
  x.e2el_from_intended_ms = summarize(std::move(e2el_intended_ms), p);
  x.schedule_lag_ms = summarize(std::move(lag_ms), p);
  x.achieved_rate = rate_from_t0(x.requests_sent, last_sent_ns);
  x.scheduled_rate = rate_from_t0(planned, last_intended_ns);
  return summary;
}

}  // namespace servebench::metrics
