// GET /v1/models, the one request `servebench run` makes itself: vLLM asks the server for its
// first model when --model is not given (serve.py: get_first_model_from_server).
#include <curl/curl.h>

#include <memory>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/interrupt.h"
#include "run/names.h"
#include "run/point_setup.h"

namespace servebench::run {
namespace {

size_t append_body(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  if (body->size() < (1u << 22)) body->append(data, size * count);  // a model list is small
  return size * count;
}

[[noreturn]] void fail(const std::string& url, const std::string& message) {
  throw core::Error(core::ErrorKind::kNetwork, "GET " + url_for_messages(url), message);
}

int abort_when_interrupted(void*, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return core::interrupted() ? 1 : 0;
}

}  // namespace

ServerModel first_server_model(const std::string& base_url, const std::vector<std::string>& headers,
                               const std::string& api_key, bool insecure,
                               const std::string& ca_file, double timeout_s) {
  const std::string url = base_url + "/v1/models";
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) fail(url, "could not create an HTTP handle");
  curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  std::string auth;
  if (!api_key.empty()) {
    auth = "Authorization: Bearer " + api_key;
    list = curl_slist_append(list, auth.c_str());
  }
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_list(list, curl_slist_free_all);
  std::string body;
  char error[CURL_ERROR_SIZE] = {0};
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, header_list.get());
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout_s * 1000));
  if (insecure) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  // Stopped by SIGINT/SIGTERM within about a second (libcurl's progress calls).
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &abort_when_interrupted);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  if (!ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, ca_file.c_str());
  CURLcode rc = curl_easy_perform(h);
  core::throw_if_interrupted("asking the server for its model");
  if (rc != CURLE_OK) {
    fail(url, std::string("the server could not be reached (") +
                  (error[0] ? error : curl_easy_strerror(rc)) +
                  "); is it running, and is --base-url/--host/--port right? Or pass --model");
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {
    std::string excerpt = body.substr(0, 200);
    for (char& c : excerpt) c = (c == '\n' || c == '\r') ? ' ' : c;
    fail(url, "HTTP " + std::to_string(status) + ": " + core::redact_secrets(excerpt) +
                  " (pass --model to skip this lookup)");
  }
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) fail(url, "the answer is not JSON");
  auto data = doc.find("data");
  if (data == doc.end() || !data->is_array() || data->empty() || !(*data)[0].is_object() ||
      !(*data)[0].contains("id") || !(*data)[0]["id"].is_string()) {
    fail(url, "no models found on the server; pass --model");
  }
  ServerModel model;
  model.id = (*data)[0]["id"].get<std::string>();
  auto root = (*data)[0].find("root");
  model.root = root != (*data)[0].end() && root->is_string() ? root->get<std::string>() : model.id;
  return model;
}

}  // namespace servebench::run
