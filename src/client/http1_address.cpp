// The HTTP/1.1 transport's URL parsing and name resolution (http1_address.h).
#include "client/http1_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <strings.h>

#include <charconv>
#include <cstring>
#include <string_view>

namespace servebench::client::detail {

namespace {

// "localhost", "LOCALHOST.", "api.localhost": names RFC 6761 keeps on the loopback.
bool is_localhost_name(std::string_view host) {
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  constexpr std::string_view kName = "localhost";
  if (host.size() < kName.size()) return false;
  const std::string_view last = host.substr(host.size() - kName.size());
  if (strncasecmp(last.data(), kName.data(), kName.size()) != 0) return false;
  return host.size() == kName.size() || host[host.size() - kName.size() - 1] == '.';
}

SocketAddress loopback_address(int family, uint16_t port) {
  SocketAddress address{};
  if (family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&address.storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_loopback;
    in6->sin6_port = htons(port);
    address.length = sizeof(sockaddr_in6);
  } else {
    auto* in4 = reinterpret_cast<sockaddr_in*>(&address.storage);
    in4->sin_family = AF_INET;
    in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    in4->sin_port = htons(port);
    address.length = sizeof(sockaddr_in);
  }
  return address;
}

bool same_address(const SocketAddress& a, const SocketAddress& b) {
  return a.length == b.length && std::memcmp(&a.storage, &b.storage, a.length) == 0;
}

}  // namespace

bool parse_http_url(const std::string& url, HttpUrl* out) {
  if (url.size() < 8 || strncasecmp(url.c_str(), "http://", 7) != 0) return false;
  std::string_view rest = std::string_view(url).substr(7);
  size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  // User info ("user:password@") is sent as Basic auth (basic_auth_value); the host follows the
  // last '@', as URL parsers split it.
  if (size_t at = authority.rfind('@'); at != std::string_view::npos)
    authority = authority.substr(at + 1);
  if (authority.empty()) return false;
  HttpUrl parsed;
  parsed.host_header = std::string(authority);
  std::string_view port;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    parsed.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return false;
      port = authority.substr(close + 2);
    }
  } else {
    size_t colon = authority.rfind(':');
    parsed.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (parsed.host.empty()) return false;
  if (!port.empty()) {
    int number = 0;
    auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (error != std::errc() || end != port.data() + port.size() || number < 1 || number > 65535)
      return false;
    parsed.port = std::string(port);
  }
  if (authority_end != std::string_view::npos) {
    std::string_view target = rest.substr(authority_end);
    target = target.substr(0, target.find('#'));
    parsed.target = target.front() == '/' ? std::string(target) : "/" + std::string(target);
  }
  *out = std::move(parsed);
  return true;
}

std::vector<SocketAddress> resolve_http_host(const HttpUrl& url, std::string* error) {
  std::vector<SocketAddress> addresses;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int status = getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &found);
  if (status == 0) {
    for (addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
      SocketAddress address{};
      std::memcpy(&address.storage, entry->ai_addr, entry->ai_addrlen);
      address.length = entry->ai_addrlen;
      addresses.push_back(address);
    }
    freeaddrinfo(found);
  }
  if (is_localhost_name(url.host)) {
    const auto port = static_cast<uint16_t>(std::stoi(url.port));
    for (int family : {AF_INET6, AF_INET}) {
      const SocketAddress loopback = loopback_address(family, port);
      bool listed = false;
      for (const SocketAddress& address : addresses) listed |= same_address(address, loopback);
      if (!listed) addresses.push_back(loopback);
    }
  }
  if (addresses.empty())
    *error = "transport: could not resolve host '" + url.host + "': " + gai_strerror(status);
  return addresses;
}

}  // namespace servebench::client::detail
