#include <fcntl.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <regex>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/system.h"

namespace servebench::core {

uint64_t raise_open_files_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return static_cast<uint64_t>(limit.rlim_cur);
}

uint64_t reserve_descriptor_table(uint64_t count) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == 0) return 0;
  const uint64_t highest = std::min<uint64_t>(count, limit.rlim_cur) - 1;
  int fd = eventfd(0, EFD_CLOEXEC);
  if (fd < 0) return 0;
  // F_DUPFD takes the lowest free descriptor >= `highest`: it never closes one of ours, and the
  // table grows to hold it (and never shrinks).
  int high = fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(highest));
  close(fd);
  if (high < 0) return 0;
  close(high);
  return static_cast<uint64_t>(high) + 1;
}

void make_this_thread_background() {
  // Nice 19 in the shortest slice the kernel grants (Linux >= 6.12 reads sched_runtime as a
  // fair-class task's slice, clamped to 0.1-100 ms). Such a thread still gets its share of a
  // busy core, and gets it in slices that preempt the busy thread: with the default slice
  // (1.4 ms here) and SCHED_IDLE, which takes no custom slice, the client's event loop stalled
  // for 4 ms at a time at 50k requests/s.
  struct {  // struct sched_attr of sched_setattr(2), first version (glibc 2.36 has no wrapper)
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
  } attr{};
  attr.size = sizeof attr;
  attr.sched_policy = SCHED_OTHER;
  attr.sched_nice = 19;
  attr.sched_runtime = 100'000;
  if (syscall(SYS_sched_setattr, 0, &attr, 0) == 0) return;  // 0 = this thread
  // Older kernels: an idle-policy thread is at least preempted at once when the other wakes.
  sched_param param{};
  if (sched_setscheduler(0, SCHED_IDLE, &param) == 0) return;
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);  // lowering needs no rights
}

int utf8_char_at(std::string_view text, size_t i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) return 1;
  int need = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return -1;
  }
  for (int k = 1; k <= need; ++k) {
    if (i + k >= text.size()) return -k;
    const auto b = static_cast<unsigned char>(text[i + k]);
    if (b < lo || b > hi) return -k;
    lo = 0x80;
    hi = 0xBF;
  }
  return need + 1;
}

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const int len = utf8_char_at(text, i);
    if (len < 0) return false;
    i += static_cast<size_t>(len);
  }
  return true;
}

void append_valid_utf8(std::string& out, std::string_view text, std::string_view prefix) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  size_t plain = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const int len = utf8_char_at(text, i);
    if (len > 0) {
      i += static_cast<size_t>(len);
      continue;
    }
    // An ill-formed prefix of -len bytes: each shown as \xHH, the next byte examined afresh.
    out.append(text.data() + plain, i - plain);
    for (int k = 0; k < -len; ++k) {
      const auto b = static_cast<unsigned char>(text[i + static_cast<size_t>(k)]);
      out += prefix;
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
    i += static_cast<size_t>(-len);
    plain = i;
  }
  out.append(text.data() + plain, text.size() - plain);
}

std::string valid_utf8_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_valid_utf8(out, text);
  return out;
}

void append_json_escaped(std::string& out, std::string_view text) {
  size_t plain = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < text.size(); ++i) {
    if constexpr (std::endian::native == std::endian::little) {
      // Plain runs 8 bytes at a time: token text rarely needs an escape.
      while (text.size() - i >= 8) {
        const size_t clean = first_json_special_of_8</*kNonAscii=*/false>(text.data() + i);
        i += clean;
        if (clean < 8) break;
      }
      if (i >= text.size()) break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out.append(escaped, sizeof escaped);
      }
    }
  }
  out.append(text.data() + plain, text.size() - plain);
}

std::string wall_timestamp_compact() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &local);
  return buf;
}

int64_t wall_ns_at_mono(int64_t mono) {
  // The realtime read between two monotonic reads: its monotonic time is their midpoint.
  const int64_t before = mono_ns();
  timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  const int64_t after = mono_ns();
  const int64_t real_ns = static_cast<int64_t>(real.tv_sec) * 1'000'000'000 + real.tv_nsec;
  return real_ns - (before + (after - before) / 2 - mono);
}

std::string local_iso_timestamp(int64_t wall_ns) {
  const int64_t us = wall_ns / 1000;  // truncated, as Python's clock reading (after 1970)
  const auto seconds = static_cast<std::time_t>(us / 1'000'000);
  const int64_t fraction = us % 1'000'000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char buf[48];
  size_t len = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &local);
  if (fraction != 0) {
    std::snprintf(buf + len, sizeof buf - len, ".%06lld", static_cast<long long>(fraction));
  }
  return buf;
}

int Error::exit_code() const {
  switch (kind_) {
    case ErrorKind::kUsage:
      return 2;
    case ErrorKind::kInput:
      return 3;
    case ErrorKind::kNetwork:
      return 4;
    case ErrorKind::kInternal:
      return 70;
  }
  return 1;
}

namespace {
// Filled at start-up (register_secret), read-only once the run's threads exist.
std::vector<std::string>& registered_secrets() {
  static std::vector<std::string> secrets;
  return secrets;
}
}  // namespace

std::string redact_secrets(std::string text) {
  // Called on error paths only, so std::regex's speed does not matter here.
  static const std::regex kPatterns[] = {
      std::regex(R"((Bearer\s+)[^\s"',;]+)", std::regex::icase),
      std::regex(R"(((?:authorization|api-key|x-api-key)\s*[:=]\s*)[^\r\n"',;]+)",
                 std::regex::icase),
      std::regex(R"((sk-)[A-Za-z0-9_\-]{8,})"),
  };
  for (const std::string& secret : registered_secrets()) {
    for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
      text.replace(at, secret.size(), "<redacted>");
  }
  for (const auto& re : kPatterns) text = std::regex_replace(text, re, "$1<redacted>");
  // scheme://user:password@host: up to the last '@' before the path, as URL parsers split it.
  static const std::regex kUrlPassword(R"(([A-Za-z][A-Za-z0-9+.\-]*://[^/?#@\s:]*:)[^/?#\s]*@)");
  return std::regex_replace(text, kUrlPassword, "$1<redacted>@");
}

bool is_secret_header(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"auth", "key", "token", "secret", "cookie"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

std::string redact_header(std::string header) {
  const size_t sep = header.find_first_of("=:");
  if (sep == std::string::npos || !is_secret_header(header.substr(0, sep))) return header;
  // Keep one space after "NAME:" as it was written.
  const size_t value = header.compare(sep, 2, ": ") == 0 ? sep + 2 : sep + 1;
  return header.substr(0, value) + "<redacted>";
}

void register_secret(std::string secret) {
  if (secret.size() < 4) return;
  std::vector<std::string>& secrets = registered_secrets();
  if (std::find(secrets.begin(), secrets.end(), secret) != secrets.end()) return;
  secrets.push_back(std::move(secret));
  // Longest first, so a secret that contains another is removed whole.
  std::sort(secrets.begin(), secrets.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

}  // namespace servebench::core
