#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "sim/model/timing_model.h"

namespace servebench::sim {
namespace {

namespace fs = std::filesystem;

class ProfileLoader : public ::testing::Test {
 protected:
  void SetUp() override {
    // The pid keeps parallel runs of the same test (several build dirs) apart.
    dir_ = fs::temp_directory_path() /
           ("servebench_profile_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& file, const std::string& text) {
    fs::path p = dir_ / file;
    std::ofstream(p) << text;
    return p.string();
  }

  // The message of the core::Error that loading `path` throws ("" if none).
  static std::string error_of(const std::string& path) {
    try {
      load_engine_profile(path);
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(ProfileLoader, ReadsEveryKey) {
  std::string path = write("mine.yaml",
                           "name: big\n"
                           "max_num_seqs: 8\n"
                           "max_num_batched_tokens: 512\n"
                           "chunked_prefill: false\n"
                           "block_size: 32\n"
                           "num_gpu_blocks: 100\n"
                           "step_overhead_us: 1500.5\n"
                           "per_prefill_token_us: 12\n"
                           "per_decode_seq_us: 0\n"
                           "per_context_token_us: 1e-3\n");
  EngineProfile p = load_engine_profile(path);
  EXPECT_EQ(p.name, "big");
  EXPECT_EQ(p.max_num_seqs, 8);
  EXPECT_EQ(p.max_num_batched_tokens, 512);
  EXPECT_FALSE(p.chunked_prefill);
  EXPECT_EQ(p.block_size, 32);
  EXPECT_EQ(p.num_gpu_blocks, 100);
  EXPECT_EQ(p.step_overhead_us, 1500.5);
  EXPECT_EQ(p.per_prefill_token_us, 12);
  EXPECT_EQ(p.per_decode_seq_us, 0);
  EXPECT_EQ(p.per_context_token_us, 0.001);
}

TEST_F(ProfileLoader, MissingKeysKeepDefaultsAndNameIsTheFileStem) {
  EngineProfile p = load_engine_profile(write("small-gpu.yaml", "num_gpu_blocks: 64\n"));
  EngineProfile d;
  EXPECT_EQ(p.name, "small-gpu");
  EXPECT_EQ(p.num_gpu_blocks, 64);
  EXPECT_EQ(p.max_num_seqs, d.max_num_seqs);
  EXPECT_EQ(p.step_overhead_us, d.step_overhead_us);
  EXPECT_EQ(load_engine_profile(write("empty.yaml", "")).name, "empty");
}

TEST_F(ProfileLoader, UnknownKeyNamesFileLineAndKey) {
  std::string path = write("typo.yaml", "max_num_seqs: 8\nmax_num_sequences: 9\n");
  EXPECT_EQ(
      error_of(path).rfind(path + ":2: unknown key 'max_num_sequences' (known keys: name, ", 0), 0u)
      << error_of(path);
}

TEST_F(ProfileLoader, BadValuesNameFileLineKeyAndValue) {
  std::string p1 = write("a.yaml", "block_size: 0\n");
  EXPECT_EQ(error_of(p1),
            p1 + ":1: key 'block_size': expected an integer from 1 to 2147483647, got '0'");
  std::string p2 = write("b.yaml", "name: x\nstep_overhead_us: fast\n");
  EXPECT_EQ(error_of(p2),
            p2 + ":2: key 'step_overhead_us': expected a number of microseconds >= 0, got 'fast'");
  std::string p3 = write("c.yaml", "chunked_prefill: maybe\n");
  EXPECT_EQ(error_of(p3), p3 + ":1: key 'chunked_prefill': expected true or false, got 'maybe'");
  std::string p4 = write("d.yaml", "max_num_seqs: [1, 2]\n");
  EXPECT_EQ(error_of(p4),
            p4 + ":1: key 'max_num_seqs': expected an integer from 1 to 2147483647, got a list "
                 "or mapping");
  std::string p5 = write("e.yaml", "per_decode_seq_us: -3\n");
  EXPECT_NE(error_of(p5).find("per_decode_seq_us"), std::string::npos);
  std::string p6 = write("f.yaml", "max_num_seqs: 99999999999\n");
  EXPECT_NE(error_of(p6).find("max_num_seqs"), std::string::npos);
  std::string p7 = write("g.yaml", "block_size: 16\nblock_size: 32\n");
  EXPECT_EQ(error_of(p7), p7 + ":2: key 'block_size' is given twice");
  std::string p8 = write("h.yaml", "max_num_seqs:\n");
  EXPECT_NE(error_of(p8).find("got nothing"), std::string::npos) << error_of(p8);
}

TEST_F(ProfileLoader, NotAMappingOrNotYaml) {
  std::string list = write("list.yaml", "- 1\n- 2\n");
  EXPECT_NE(error_of(list).find("expected a mapping"), std::string::npos) << error_of(list);
  std::string broken = write("broken.yaml", "a: [1, 2\n");
  EXPECT_NE(error_of(broken).find("not valid YAML"), std::string::npos) << error_of(broken);
  EXPECT_EQ(error_of(broken).rfind(broken + ":", 0), 0u);
}

TEST_F(ProfileLoader, MissingFile) {
  std::string path = (dir_ / "nope.yaml").string();
  EXPECT_EQ(error_of(path), path + ": cannot open engine profile: No such file or directory");
}

TEST(ShippedProfiles, AllLoadAndDefaultEqualsTheBuiltInDefaults) {
  const fs::path dir = fs::path(SERVEBENCH_SOURCE_DIR) / "profiles";
  int count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    EngineProfile p = load_engine_profile(entry.path().string());
    EXPECT_EQ(p.name, entry.path().stem().string());
    EXPECT_NO_THROW(make_engine_model(p));
    ++count;
  }
  EXPECT_GE(count, 3);

  EngineProfile p = load_engine_profile((dir / "default.yaml").string());
  EngineProfile d;
  EXPECT_EQ(p.name, d.name);
  EXPECT_EQ(p.max_num_seqs, d.max_num_seqs);
  EXPECT_EQ(p.max_num_batched_tokens, d.max_num_batched_tokens);
  EXPECT_EQ(p.chunked_prefill, d.chunked_prefill);
  EXPECT_EQ(p.block_size, d.block_size);
  EXPECT_EQ(p.num_gpu_blocks, d.num_gpu_blocks);
  EXPECT_EQ(p.step_overhead_us, d.step_overhead_us);
  EXPECT_EQ(p.per_prefill_token_us, d.per_prefill_token_us);
  EXPECT_EQ(p.per_decode_seq_us, d.per_decode_seq_us);
  EXPECT_EQ(p.per_context_token_us, d.per_context_token_us);
}

}  // namespace
}  // namespace servebench::sim
