// File: client/http1_address.h (internal to the client part)
// Where the HTTP/1.1 transport connects: the parts of a plain http:// URL, and every address its
// host has. "localhost" (and "*.localhost", RFC 6761) always means both loopbacks, ::1 and
// 127.0.0.1, as libcurl resolves it since 7.78 (the ready check goes through libcurl): a hosts
// file that names only one of them must not make the two paths reach different servers.
#pragma once

#include <sys/socket.h>

#include <string>
#include <vector>

namespace servebench::client::detail {

struct HttpUrl {
  std::string host;         // without brackets
  std::string port = "80";  // as text, for getaddrinfo
  std::string host_header;  // "host[:port]" as written in the URL
  std::string target = "/";
};

// Parses "http://[user:password@]host[:port][/path][?query]"; false for anything the HTTP/1.1
// transport does not serve (another scheme, an empty host).
bool parse_http_url(const std::string& url, HttpUrl* out);

struct SocketAddress {
  sockaddr_storage storage;
  socklen_t length;
};

// Every address of the URL's host (getaddrinfo, both families, in its order; for localhost
// names, the loopbacks it left out after them). Empty with `*error` set ("transport: could not
// resolve host …") when there is none.
std::vector<SocketAddress> resolve_http_host(const HttpUrl& url, std::string* error);

}  // namespace servebench::client::detail
