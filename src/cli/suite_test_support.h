// File: cli/suite_test_support.h
// What the suite tests share. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "cli/suite.h"
#include "core/error.h"

namespace servebench::cli::suite {

// The one-line error parsing `text` as "suite.yaml" gives, or "no error".
inline std::string error_of(const std::string& text) {
  try {
    parse(text, "suite.yaml");
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
    return e.what();
  }
  return "no error";
}

}  // namespace servebench::cli::suite
