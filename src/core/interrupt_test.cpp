// The one SIGINT/SIGTERM mechanism (core/interrupt.h), driven by raise() in this process.
#include "core/interrupt.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>

#include "core/error.h"

namespace servebench::core {
namespace {

bool fd_readable() {
  pollfd p{interrupt_fd(), POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

TEST(Interrupt, SigtermIsRecordedAsSigintIsWithItsOwnExitCode) {
  install_interrupt_handler("testing");
  reset_interrupt_for_testing();
  ASSERT_TRUE(interrupt_handler_installed());
  EXPECT_FALSE(interrupted());
  EXPECT_FALSE(fd_readable());
  EXPECT_NO_THROW(throw_if_interrupted("a phase"));

  ASSERT_EQ(::raise(SIGTERM), 0);  // the process goes on: the handler only records it
  EXPECT_TRUE(interrupted());
  EXPECT_EQ(interrupt_signal(), SIGTERM);
  EXPECT_EQ(interrupt_exit_code(), 143);
  EXPECT_STREQ(interrupt_name(), "SIGTERM");
  EXPECT_TRUE(fd_readable());
  EXPECT_TRUE(fd_readable());  // and stays so for every waiter
  reset_interrupt_for_testing();

  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_EQ(interrupt_exit_code(), 130);
  EXPECT_STREQ(interrupt_name(), "SIGINT");
  reset_interrupt_for_testing();
}

TEST(Interrupt, EndsSleepsAndNamesThePhaseItStoppedIn) {
  install_interrupt_handler("testing");
  reset_interrupt_for_testing();
  EXPECT_TRUE(sleep_unless_interrupted(1'000'000));  // 1 ms, not interrupted
  ASSERT_EQ(::raise(SIGTERM), 0);
  // An hour's sleep returns at once once interrupted.
  EXPECT_FALSE(sleep_unless_interrupted(int64_t{3600} * 1'000'000'000));
  try {
    throw_if_interrupted("the ready check");
    ADD_FAILURE() << "no throw";
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.exit_code(), 143);
    EXPECT_EQ(std::string(e.what()),
              "the ready check: stopped by SIGTERM; the main run was not started (nothing of it "
              "was sent)");
  }
  reset_interrupt_for_testing();
}

}  // namespace
}  // namespace servebench::core
