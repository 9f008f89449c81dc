#include <gtest/gtest.h>
#include <sys/resource.h>

#include "core/clock.h"
#include "core/error.h"
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

}  // namespace
}  // namespace servebench::core
