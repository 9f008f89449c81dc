#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/system.h"

namespace servebench::core {
namespace {

TEST(MonoClock, NeverGoesBackwards) {
  int64_t prev = mono_ns();
  for (int i = 0; i < 1000; ++i) {
    int64_t now = mono_ns();
    ASSERT_GE(now, prev);
    prev = now;
  }
}

// Sets $TZ for one test and puts the old value back.
class ScopedTimeZone {
 public:
  explicit ScopedTimeZone(const char* tz) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~ScopedTimeZone() {
    if (old_) {
      setenv("TZ", old_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }

 private:
  std::optional<std::string> old_;
};

TEST(LocalIsoTimestamp, WritesLocalTimeAsPythonIsoformat) {
  constexpr int64_t kSecond = 1'700'000'000LL * 1'000'000'000;  // 2023-11-14 22:13:20 UTC
  {
    ScopedTimeZone utc("UTC");
    EXPECT_EQ(local_iso_timestamp(kSecond + 123'456'789), "2023-11-14T22:13:20.123456");
    EXPECT_EQ(local_iso_timestamp(kSecond + 1'000), "2023-11-14T22:13:20.000001");
    // Microseconds are truncated; exactly 0 of them are left out, as isoformat() does.
    EXPECT_EQ(local_iso_timestamp(kSecond + 999), "2023-11-14T22:13:20");
    EXPECT_EQ(local_iso_timestamp(kSecond - 1'000), "2023-11-14T22:13:19.999999");
  }
  ScopedTimeZone new_york("EST5");  // local time, not UTC: five hours behind
  EXPECT_EQ(local_iso_timestamp(kSecond + 500'000'000), "2023-11-14T17:13:20.500000");
}

TEST(WallNsAtMono, CarriesAMonotonicTimeToTheWallClock) {
  // The clocks are read within microseconds of each other; 0.5 s leaves room for the thread
  // being descheduled between the reads on a busy machine, and still catches a wrong sign (2 s
  // off below) or unit.
  constexpr double kSlack = 500e6;
  const int64_t mono = mono_ns();
  const int64_t wall = wall_ns_at_mono(mono);
  EXPECT_NEAR(static_cast<double>(wall), wall_seconds() * 1e9, kSlack);
  const int64_t a_second_earlier = wall_ns_at_mono(mono - 1'000'000'000);
  EXPECT_NEAR(static_cast<double>(wall - a_second_earlier), 1e9, kSlack);
}

TEST(Error, MessageNamesThePlaceAndKindGivesExitCode) {
  Error e(ErrorKind::kInput, "data.jsonl:3", "missing field 'prompt'");
  EXPECT_STREQ(e.what(), "data.jsonl:3: missing field 'prompt'");
  EXPECT_EQ(e.exit_code(), 3);
  EXPECT_EQ(Error(ErrorKind::kUsage, "", "x").exit_code(), 2);
}

TEST(RedactSecrets, HidesBearerTokensHeadersAndKeys) {
  EXPECT_EQ(redact_secrets("Authorization: Bearer abc.def"), "Authorization: <redacted>");
  EXPECT_EQ(redact_secrets("sent Bearer xyz123 to host"), "sent Bearer <redacted> to host");
  EXPECT_EQ(redact_secrets("key sk-abcdefghijklmnop end"), "key sk-<redacted> end");
  EXPECT_EQ(redact_secrets("x-api-key=s3cret"), "x-api-key=<redacted>");
  EXPECT_EQ(redact_secrets("plain text"), "plain text");
}

// A server may echo the exact key it refused, in no recognisable form: registered secrets are
// removed wherever they appear, the longest first; short values are not registered.
TEST(RedactSecrets, RemovesRegisteredSecretsVerbatim) {
  EXPECT_EQ(redact_secrets("Incorrect API key provided: team-token-42."),
            "Incorrect API key provided: team-token-42.");
  register_secret("team-token-42");
  register_secret("team-token-42-long");
  register_secret("abc");
  EXPECT_EQ(redact_secrets("Incorrect API key provided: team-token-42."),
            "Incorrect API key provided: <redacted>.");
  EXPECT_EQ(redact_secrets("a team-token-42-long b team-token-42"), "a <redacted> b <redacted>");
  EXPECT_EQ(redact_secrets("abc"), "abc");
}

TEST(RedactSecrets, HidesTheUrlPasswordOnly) {
  EXPECT_EQ(redact_secrets("http://user:pw@127.0.0.1:8000/v1"),
            "http://user:<redacted>@127.0.0.1:8000/v1");
  // Each URL of a list; an unencoded '@' in the password is still part of it.
  EXPECT_EQ(redact_secrets("https://a:x@y@h1,http://b:z@h2:80"),
            "https://a:<redacted>@h1,http://b:<redacted>@h2:80");
  EXPECT_EQ(redact_secrets("http://user@host:8000/a:b@c"), "http://user@host:8000/a:b@c");
  EXPECT_EQ(redact_secrets("http://host:8000/v1"), "http://host:8000/v1");
}

TEST(SecretHeaders, NamedOnesAndNamesWithSecretWords) {
  for (const char* name : {"Authorization", "proxy-authorization", "X-API-KEY", "api-key", "Cookie",
                           "X-Auth-Token", "X-Client-Secret", "Set-Cookie"}) {
    EXPECT_TRUE(is_secret_header(name)) << name;
  }
  for (const char* name : {"Content-Type", "X-Request-Id", "Accept", "User-Agent"}) {
    EXPECT_FALSE(is_secret_header(name)) << name;
  }
}

TEST(SecretHeaders, RedactHeaderHidesTheValueOfASecretOne) {
  EXPECT_EQ(redact_header("Authorization=Bearer abc"), "Authorization=<redacted>");
  EXPECT_EQ(redact_header("X-Auth-Token: t0k"), "X-Auth-Token: <redacted>");
  EXPECT_EQ(redact_header("x-api-key:k=v"), "x-api-key:<redacted>");
  EXPECT_EQ(redact_header("X-Request-Id=abc"), "X-Request-Id=abc");
  EXPECT_EQ(redact_header("no separator token"), "no separator token");
}

TEST(OpenFilesLimit, SoftLimitIsRaisedToTheHardOne) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  if (before.rlim_max < 128) GTEST_SKIP() << "hard limit too low to lower the soft one";
  rlimit lowered = before;
  lowered.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  EXPECT_EQ(raise_open_files_limit(), static_cast<uint64_t>(before.rlim_max));
  rlimit after{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, before.rlim_max);
  setrlimit(RLIMIT_NOFILE, &before);
}

// The kernel's own figure: /proc/self/status's FDSize, the descriptor table's size.
uint64_t descriptor_table_size() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("FDSize:", 0) == 0) return std::stoull(line.substr(7));
  return 0;
}

TEST(DescriptorTable, GrowsToTheCountAskedForWithinTheLimit) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  if (before.rlim_max < 4096) GTEST_SKIP() << "hard limit under 4,096";
  if (descriptor_table_size() >= 3000) GTEST_SKIP() << "the table is already this large";
  rlimit lowered = before;
  lowered.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  EXPECT_EQ(reserve_descriptor_table(3000), 3000u);
  EXPECT_GE(descriptor_table_size(), 3000u);
  // Nothing stays open: the next descriptor is still a low one.
  int fd = eventfd(0, EFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_LT(fd, 64);
  close(fd);
  // Past the limit it stops at the limit.
  EXPECT_EQ(reserve_descriptor_table(5000), 4096u);
  EXPECT_GE(descriptor_table_size(), 4096u);
  setrlimit(RLIMIT_NOFILE, &before);
}

}  // namespace
}  // namespace servebench::core

namespace servebench::core {
namespace {

TEST(AppendJsonEscaped, EscapesAsNlohmannDumps) {
  std::string out = "x";
  append_json_escaped(out, std::string("a\"b\\c\b\f\n\r\t\x01\x1f\x7f é/", 17));
  EXPECT_EQ(out, "xa\\\"b\\\\c\\b\\f\\n\\r\\t\\u0001\\u001f\x7f é/");
  // Long plain runs go 8 bytes at a time; a special byte at every offset is still found.
  for (size_t at = 0; at < 40; ++at) {
    std::string text(40, 'p');
    text[at] = '\n';
    std::string escaped;
    append_json_escaped(escaped, text);
    EXPECT_EQ(escaped, text.substr(0, at) + "\\n" + text.substr(at + 1)) << at;
  }
}

TEST(FirstJsonSpecialOf8, FindsTheFirstByteThatNeedsCare) {
  EXPECT_EQ(first_json_special_of_8<false>("abcdefgh"), 8u);
  EXPECT_EQ(first_json_special_of_8<true>("abcdefgh"), 8u);
  // Every position, every kind of byte, with a later special byte that must not win.
  for (size_t at = 0; at < 8; ++at) {
    for (int byte :
         {int{'"'}, int{'\\'}, 0x00, 0x01, 0x1f, 0x80, 0xc3, 0xff, 0x20, 0x7f, int{'~'}}) {
      std::string word = "abcdefgh";
      word[at] = static_cast<char>(byte);
      if (at < 7) word[7] = '"';
      const bool special = byte == '"' || byte == '\\' || byte < 0x20;
      const size_t later = at < 7 ? 7 : 8;
      SCOPED_TRACE(std::to_string(at) + " " + std::to_string(byte));
      EXPECT_EQ(first_json_special_of_8<false>(word.data()), special ? at : later);
      EXPECT_EQ(first_json_special_of_8<true>(word.data()), special || byte >= 0x80 ? at : later);
    }
  }
}

}  // namespace
}  // namespace servebench::core

namespace servebench::core {
namespace {

// Issue 19: a Latin-1 byte in a label reached nlohmann's dump and lost the whole result.
TEST(ValidUtf8Text, ShowsInvalidBytesEscapedAndKeepsValidText) {
  EXPECT_EQ(valid_utf8_text("lab\xe9"), "lab\\xE9");
  EXPECT_EQ(valid_utf8_text("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");  // unchanged
  EXPECT_EQ(valid_utf8_text("a\xe2\x82z"), "a\\xE2\\x82z");       // a cut 3-byte character
  EXPECT_EQ(valid_utf8_text("\xed\xa0\x80"), "\\xED\\xA0\\x80");  // a surrogate
  EXPECT_EQ(valid_utf8_text("\xc0\xaf"), "\\xC0\\xAF");           // overlong
  EXPECT_EQ(valid_utf8_text(std::string_view("\x00\xff", 2)), std::string("\x00\\xFF", 5));
  EXPECT_TRUE(is_valid_utf8("plain \xc3\xa9"));
  EXPECT_FALSE(is_valid_utf8("lab\xe9"));
  EXPECT_TRUE(is_valid_utf8(valid_utf8_text("\xff\xfe\xe9x\xf4\x90")));
  std::string out = "k=";
  append_valid_utf8(out, "v\xe9", "\\\\x");
  EXPECT_EQ(out, "k=v\\\\xE9");
}

}  // namespace
}  // namespace servebench::core
