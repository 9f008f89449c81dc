// File: core/error.h
// Expected failures (bad flag, bad dataset line, unreachable server) are reported as an Error:
// one line that names the input and the place. Libraries throw core::Error only across part
// boundaries; main() catches it, prints `servebench: <where>: <message>` and exits non-zero.
// Per-request failures during a benchmark are data (record::RequestRecord::error), never
// exceptions.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace servebench::core {

enum class ErrorKind {
  kUsage,    // a command-line value; exit code 2
  kInput,    // a file or dataset; exit code 3
  kNetwork,  // the server could not be reached or answered badly; exit code 4
  kInternal  // a bug; exit code 70
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string where, const std::string& message)
      : std::runtime_error(where.empty() ? message : where + ": " + message),
        kind_(kind),
        where_(std::move(where)) {}
  ErrorKind kind() const { return kind_; }
  const std::string& where() const { return where_; }
  int exit_code() const;

 private:
  ErrorKind kind_;
  std::string where_;
};

// Removes anything that looks like a credential (Bearer tokens, `Authorization:` and
// `api-key` header values, `sk-…` keys, the password in a URL's `user:password@`), and every
// secret registered below, from text before it is logged or saved.
std::string redact_secrets(std::string text);

// Makes redact_secrets remove `secret` wherever it appears, whatever its form: a server may echo
// the key it refused ("Incorrect API key provided: …"). Call before any thread that reports
// errors starts; values shorter than 4 bytes are not registered (they would blank common text).
void register_secret(std::string secret);

// Whether a request header of this name (any case) carries a credential: Cookie, and every name
// containing "auth", "key", "token" or "secret" (Authorization, X-Api-Key, X-Auth-Token, …).
bool is_secret_header(std::string_view name);
// A "NAME=VALUE" or "NAME: VALUE" header with VALUE replaced by "<redacted>" when NAME is a
// secret header; anything else unchanged.
std::string redact_header(std::string header);

}  // namespace servebench::core
