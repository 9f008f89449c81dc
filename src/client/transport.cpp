// What both transports share (transport.h): the header lines of every request, the body of a
// response handed to its exchange, and the one-line message of an HTTP error.
#include <strings.h>

#include <algorithm>
#include <cstdio>

#include "client/transport.h"
#include "nlohmann/json.hpp"

namespace servebench::client::detail {

namespace {

// The start of a non-200 body kept for its error message.
constexpr size_t kErrorBodyBytes = 4096;

}  // namespace

bool has_header(const std::vector<std::string>& headers, std::string_view name) {
  for (const std::string& header : headers) {
    if (header.size() > name.size() && header[name.size()] == ':' &&
        strncasecmp(header.data(), name.data(), name.size()) == 0)
      return true;
  }
  return false;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

std::vector<std::string> base_header_lines(const Endpoint& endpoint) {
  std::vector<std::string> lines;
  if (!has_header(endpoint.headers, "content-type"))
    lines.push_back("Content-Type: application/json");
  if (!endpoint.api_key.empty() && !has_header(endpoint.headers, "authorization"))
    lines.push_back("Authorization: Bearer " + endpoint.api_key);
  // Each request's own x-request-id replaces one given with --header, as in vLLM (a second
  // header line of the same name would reach the server too).
  for (const std::string& header : endpoint.headers) {
    if (!has_header({header}, "x-request-id")) lines.push_back(header);
  }
  return lines;
}

void Exchange::on_body(const char* data, size_t length, int64_t now_ns) {
  if (!body_started) {
    body_started = true;
    record.first_byte_ns = now_ns;
  }
  if (status == 200) {
    reader.feed(data, length, now_ns);
  } else if (error_body.size() < kErrorBodyBytes) {
    error_body.append(data, std::min(length, kErrorBodyBytes - error_body.size()));
  }
}

std::string http_error_message(long status, std::string_view body) {
  std::string message;
  auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded() && json.is_object()) {
    const nlohmann::json* found = nullptr;
    if (auto error = json.find("error"); error != json.end()) {
      if (error->is_object()) {
        if (auto m = error->find("message"); m != error->end()) found = &*m;
      } else {
        found = &*error;
      }
    }
    for (const char* key : {"message", "detail"}) {
      if (found != nullptr) break;
      if (auto m = json.find(key); m != json.end()) found = &*m;
    }
    if (found != nullptr) message = found->is_string() ? found->get<std::string>() : found->dump();
  }
  if (message.empty()) message = std::string(body.substr(0, 200));
  std::string line = "HTTP " + std::to_string(status);
  if (!message.empty()) line += ": " + message;
  return one_line_message(line, 200 + 10);
}

}  // namespace servebench::client::detail
