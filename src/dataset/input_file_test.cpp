// Reading dataset files that are not regular files (pipes, FIFOs), and the text checks of issue
// 19: a binary sonnet file, a custom row with an empty prompt.
#include "dataset/input_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/error.h"
#include "dataset/dataset.h"
#include "tokenizer/tokenizer.h"

namespace servebench::dataset {
namespace {

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/servebench-input-" + std::to_string(getpid()) + "-" +
         name;
}

// Defect (issue 19): `--dataset-path <(cat f.json)` read as empty: the size came from fstat,
// which is 0 for a pipe. Here the pipe's writer sends in two parts with a pause between.
TEST(InputFile, PipeIsReadUntilEof) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string content(100'000, 'x');
  std::thread writer([&] {
    ssize_t n = ::write(fds[1], content.data(), 1000);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    size_t done = static_cast<size_t>(n);
    while (done < content.size()) {
      n = ::write(fds[1], content.data() + done, content.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fds[1]);
  });
  const InputFile file("/dev/fd/" + std::to_string(fds[0]));
  writer.join();
  ::close(fds[0]);
  EXPECT_EQ(file.text(), content);
}

// A FIFO that gets a writer later is read once it writes.
TEST(InputFile, FifoIsReadOnceAWriterComes) {
  const std::string path = temp_path("late.fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ofstream(path) << "{\"prompt\":\"a\"}\n";
  });
  const InputFile file(path, 10'000);
  writer.join();
  std::filesystem::remove(path);
  EXPECT_EQ(file.text(), "{\"prompt\":\"a\"}\n");
}

// Defect (issue 19): a FIFO no process writes to hung the run forever at open().
TEST(InputFile, FifoWithoutWriterFailsNamingIt) {
  const std::string path = temp_path("nowriter.fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const int64_t start = core::mono_ns();
  try {
    InputFile file(path, 200);
    ADD_FAILURE() << "read an unwritten FIFO";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
    const std::string what = e.what();
    EXPECT_NE(what.find("--dataset-path"), std::string::npos) << what;
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("nothing to read after 200 ms"), std::string::npos) << what;
  }
  EXPECT_LT(core::mono_ns() - start, 30'000'000'000LL);  // generous: only "no hang"
  std::filesystem::remove(path);
}

// Defect (issue 19): sonnet took a binary file as verses.
TEST(InputFile, SonnetRefusesABinaryFile) {
  auto tok = tokenizer::make_word_tokenizer();
  const std::string path = temp_path("binary.txt");
  std::ofstream(path, std::ios::binary) << "A fair line of verse\nthen\xff\xfe bytes\n";
  SonnetOptions o;
  o.path = path;
  try {
    sonnet_prompts(1, o, *tok, nullptr);
    ADD_FAILURE() << "a binary file was read as verses";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
    EXPECT_EQ(e.where(), path + ":2 (byte 25)");
    EXPECT_NE(std::string(e.what()).find("not UTF-8"), std::string::npos) << e.what();
  }
  std::ofstream(path, std::ios::binary) << std::string("verse\n\0\0\0", 9);
  try {
    sonnet_prompts(1, o, *tok, nullptr);
    ADD_FAILURE() << "NUL bytes were read as verses";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("NUL byte"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

// Defect (issue 19): a custom row with an empty prompt counted as usable and was sent.
TEST(InputFile, CustomRowWithAnEmptyPromptIsNotUsable) {
  auto tok = tokenizer::make_word_tokenizer();
  const std::string path = temp_path("empty.jsonl");
  std::ofstream(path) << "{\"prompt\":\"one two\"}\n{\"prompt\":\"\"}\n{\"prompt\":\"  \"}\n";
  CustomOptions o;
  o.file.path = path;
  o.file.shuffle = false;
  o.file.oversample = false;
  DatasetReport report;
  auto prompts = custom_prompts(3, o, *tok, &report);
  EXPECT_EQ(report.rows, 3u);
  EXPECT_EQ(report.usable, 1u);
  ASSERT_EQ(prompts.size(), 1u);
  EXPECT_EQ(prompts[0].text, "one two");
  ASSERT_FALSE(report.notes.empty());
  EXPECT_NE(report.notes[0].find("2 rows"), std::string::npos) << report.notes[0];
  std::ofstream(path) << "{\"prompt\":\"\"}\n";
  try {
    custom_prompts(1, o, *tok, nullptr);
    ADD_FAILURE() << "a file of empty prompts was usable";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no usable rows"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace servebench::dataset
