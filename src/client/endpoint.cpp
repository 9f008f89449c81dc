// What the client checks and registers about its endpoint before anything is sent (client.h):
// extra headers that would frame the request twice, the credentials of a URL's user info, the
// CA file to verify TLS peers with, and timeouts in seconds turned into bounded nanoseconds.
#include <strings.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "client/client.h"
#include "client/transport.h"
#include "core/error.h"

namespace servebench::client {

namespace {

std::string base64(std::string_view bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size())
      group |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) group |= static_cast<unsigned char>(bytes[i + 2]);
    out.push_back(kDigits[(group >> 18) & 63]);
    out.push_back(kDigits[(group >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kDigits[(group >> 6) & 63] : '=');
    out.push_back(i + 2 < bytes.size() ? kDigits[group & 63] : '=');
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "%40" → "@", as libcurl and aiohttp (yarl) decode user info before encoding it.
std::string percent_decoded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int high = hex_value(text[i + 1]), low = hex_value(text[i + 2]);
      if (high >= 0 && low >= 0) {
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

}  // namespace

void check_extra_header(std::string_view name, const std::string& where) {
  while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.remove_suffix(1);
  for (const char* framing : {"Host", "Content-Length", "Transfer-Encoding", "Connection"}) {
    if (name.size() == std::strlen(framing) && strncasecmp(name.data(), framing, name.size()) == 0)
      throw core::Error(core::ErrorKind::kUsage, where,
                        "the " + std::string(framing) +
                            " header frames the request and is set by the client; it cannot be "
                            "given as an extra header");
  }
}

void validate_endpoint(const Endpoint& endpoint) {
  for (const std::string& header : endpoint.headers)
    check_extra_header(std::string_view(header).substr(0, header.find(':')));
  if (!endpoint.ca_file.empty() && ::access(endpoint.ca_file.c_str(), R_OK) != 0)
    throw core::Error(core::ErrorKind::kInput, "CA file",
                      "'" + endpoint.ca_file + "' cannot be read: " + std::strerror(errno));
}

namespace {

// The user info of a URL ("user:password" before the host), percent-decoded; false if none.
bool url_userinfo(const std::string& url, std::string* user, std::string* password,
                  std::string* raw_password) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return false;
  const size_t authority_begin = scheme_end + 3;
  const size_t authority_end = url.find_first_of("/?#", authority_begin);
  const std::string_view authority =
      std::string_view(url).substr(authority_begin, authority_end - authority_begin);
  const size_t at = authority.rfind('@');  // as URL parsers split it: the last '@'
  if (at == std::string_view::npos) return false;
  const std::string_view userinfo = authority.substr(0, at);
  const size_t colon = userinfo.find(':');
  *user = percent_decoded(userinfo.substr(0, colon));
  *raw_password = colon == std::string_view::npos ? "" : std::string(userinfo.substr(colon + 1));
  *password = percent_decoded(*raw_password);
  return true;
}

}  // namespace

void register_endpoint_secrets(const Endpoint& endpoint) {
  std::string user, password, raw_password;
  if (!url_userinfo(endpoint.url, &user, &password, &raw_password)) return;
  core::register_secret(raw_password);
  core::register_secret(password);
  // What goes on the wire: "Authorization: Basic base64(user:password)".
  const std::string value = detail::basic_auth_value(endpoint.url);
  core::register_secret(value);
  core::register_secret(value.substr(6));  // the token alone
}

std::string ca_file_for(const Endpoint& endpoint) {
  if (!endpoint.ca_file.empty()) return endpoint.ca_file;
  // curl's tool reads CURL_CA_BUNDLE first, then SSL_CERT_FILE (OpenSSL's, Python's).
  for (const char* variable : {"CURL_CA_BUNDLE", "SSL_CERT_FILE"}) {
    const char* value = std::getenv(variable);
    if (value != nullptr && value[0] != '\0') return value;
  }
  return "";
}

namespace detail {

std::string basic_auth_value(const std::string& url) {
  std::string user, password, raw_password;
  if (!url_userinfo(url, &user, &password, &raw_password)) return "";
  return "Basic " + base64(user + ":" + password);
}

int64_t timeout_ns(double seconds, double min_seconds) {
  if (std::isnan(seconds)) seconds = kMaxTimeoutS;
  seconds = std::min(std::max(seconds, min_seconds), kMaxTimeoutS);
  return static_cast<int64_t>(seconds * 1e9);
}

}  // namespace detail

}  // namespace servebench::client
