// File: client/curl_transport.h (internal to the client part)
// The libcurl pieces shared by the curl transport and the readiness check.
#pragma once

#include <curl/curl.h>

#include "client/client.h"

namespace servebench::client::detail {

void ensure_curl_initialized();
// base_header_lines() plus "Expect:" (no 100-continue round trip on large prompts).
curl_slist* build_base_headers(const Endpoint& endpoint);
void set_common_options(CURL* easy, const Endpoint& endpoint, long buffer_bytes);
// "transport: <curl's error>" (one line, redacted).
std::string transport_error_message(CURLcode code, const char* error_buffer);

}  // namespace servebench::client::detail
