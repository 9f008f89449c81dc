// The file datasets (sharegpt, custom, sonnet, traces) on the committed fixtures
// (tests/fixtures/datasets, made by scripts/make-dataset-fixtures.py) and on small bad files.
// Expected orders marked "CPython" were printed by running vLLM's selection steps
// (json.load, the >= 2 turns filter, random.seed(seed), random.shuffle) in Python 3.11.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "dataset/dataset.h"
#include "tokenizer/tokenizer.h"

namespace servebench::dataset {
namespace {

const std::string kFixtures = std::string(SERVEBENCH_SOURCE_DIR) + "/tests/fixtures/datasets/";

// A file under $TMPDIR with the given content, removed at the end of the test.
class TempFile {
 public:
  TempFile(const std::string& suffix, const std::string& content) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir ? dir : "/tmp") + "/servebench-dataset-" + std::to_string(getpid()) +
            "-" + std::to_string(counter_++) + suffix;
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

// Runs f, expecting a core::Error; returns it.
template <typename F>
core::Error error_of(F&& f) {
  try {
    f();
  } catch (const core::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error thrown";
  return core::Error(core::ErrorKind::kInternal, "", "none");
}

class FileDatasets : public ::testing::Test {
 protected:
  std::unique_ptr<tokenizer::Tokenizer> tok_ = tokenizer::make_word_tokenizer();
};

ShareGptOptions sharegpt(uint64_t seed = 0) {
  ShareGptOptions o;
  o.file.path = kFixtures + "sharegpt.json";
  o.file.seed = seed;
  return o;
}

TEST_F(FileDatasets, ShareGptKeepsOnlyRowsPassingVllmFilters) {
  DatasetReport report;
  auto prompts = sharegpt_prompts(1000, sharegpt(), *tok_, &report);
  EXPECT_EQ(report.rows, 46u);    // every array element
  EXPECT_EQ(report.usable, 40u);  // the 40 "keep" rows; 6 are dropped by the rules
  EXPECT_EQ(report.oversampled, 960u);
  ASSERT_EQ(prompts.size(), 1000u);
  std::set<std::string> distinct;
  for (const auto& p : prompts) {
    EXPECT_GE(p.prompt_tokens, 4);
    EXPECT_LE(p.prompt_tokens, 1024);
    EXPECT_GE(p.output_tokens, 4);
    EXPECT_LE(p.prompt_tokens + p.output_tokens, 2048);
    EXPECT_EQ(tok_->count(p.text), static_cast<size_t>(p.prompt_tokens));
    EXPECT_NE(p.text, "hi there");
    EXPECT_EQ(p.trace_offset_ns, -1);
    distinct.insert(p.text);
  }
  EXPECT_EQ(distinct.size(), 40u);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(report.notes[0].find("only 40 of 46 rows"), std::string::npos) << report.notes[0];
}

TEST_F(FileDatasets, ShareGptShuffleSelectsTheRowsVllmSelects) {
  // CPython: the first three kept prompts after random.seed(0) / random.seed(7).
  auto seed0 = sharegpt_prompts(3, sharegpt(0), *tok_, nullptr);
  EXPECT_EQ(seed0[0].text.rfind("meadow xenon harbor harbo", 0), 0u) << seed0[0].text;
  EXPECT_EQ(seed0[1].text.rfind("bravo garnet willow delta", 0), 0u) << seed0[1].text;
  EXPECT_EQ(seed0[2].text.rfind("cobalt quartz prism bravo", 0), 0u) << seed0[2].text;
  auto seed7 = sharegpt_prompts(2, sharegpt(7), *tok_, nullptr);
  EXPECT_EQ(seed7[0].text.rfind("xenon onyx vector fjord j", 0), 0u) << seed7[0].text;
  EXPECT_EQ(seed7[1].text.rfind("indigo jasper zephyr alph", 0), 0u) << seed7[1].text;
}

TEST_F(FileDatasets, ShareGptSameSeedIsByteIdenticalAndEscapesAreDecoded) {
  auto a = sharegpt_prompts(40, sharegpt(5), *tok_, nullptr);
  auto b = sharegpt_prompts(40, sharegpt(5), *tok_, nullptr);
  ASSERT_EQ(a.size(), b.size());
  bool escaped = false, non_ascii = false;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].text, b[i].text);
    EXPECT_EQ(a[i].output_tokens, b[i].output_tokens);
    escaped |= a[i].text == "Say \"caf\xC3\xA9\" twice,\nthen \\ stop";
    non_ascii |= a[i].text == "na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC tea cup";
  }
  EXPECT_TRUE(escaped);
  EXPECT_TRUE(non_ascii);
  auto other = sharegpt_prompts(40, sharegpt(6), *tok_, nullptr);
  size_t same_place = 0;
  for (size_t i = 0; i < a.size(); ++i) same_place += a[i].text == other[i].text;
  EXPECT_LT(same_place, 10u);
}

TEST_F(FileDatasets, ShareGptFixedOutputLenAndNoShuffleNoOversample) {
  ShareGptOptions o = sharegpt();
  o.output_len = 2;  // below vLLM's minimum of 4: allowed when fixed (skip_min_output_len_check)
  o.file.shuffle = false;
  o.file.oversample = false;
  DatasetReport report;
  auto prompts = sharegpt_prompts(100, o, *tok_, &report);
  // "short-reply" now passes (its reply is not measured), "long-total" too (1000 + 2 <= 2048).
  EXPECT_EQ(prompts.size(), 42u);
  EXPECT_EQ(report.oversampled, 0u);
  for (const auto& p : prompts) EXPECT_EQ(p.output_tokens, 2);
  auto again = sharegpt_prompts(100, o, *tok_, nullptr);
  EXPECT_EQ(again[0].text, prompts[0].text);  // file order
}

CustomOptions custom(int32_t output_len = -1) {
  CustomOptions o;
  o.file.path = kFixtures + "custom.jsonl";
  o.output_len = output_len;
  return o;
}

TEST_F(FileDatasets, CustomShufflesLikeVllmAndReadsOutputTokens) {
  DatasetReport report;
  auto prompts = custom_prompts(4, custom(-1), *tok_, &report);
  EXPECT_EQ(report.rows, 24u);  // the blank line is not a row
  ASSERT_EQ(prompts.size(), 4u);
  // CPython: random.seed(0); random.shuffle(rows).
  const char* expected[] = {"Question 14:", "Question 0: ", "Question 17:", "Question 7: "};
  const int32_t outputs[] = {46, 49, 12, 53};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(prompts[i].text.rfind(expected[i], 0), 0u) << prompts[i].text;
    EXPECT_EQ(prompts[i].output_tokens, outputs[i]);
    EXPECT_EQ(tok_->count(prompts[i].text), static_cast<size_t>(prompts[i].prompt_tokens));
  }
  for (const auto& p : custom_prompts(24, custom(100), *tok_, nullptr)) {
    EXPECT_EQ(p.output_tokens, 100);
  }
}

TEST_F(FileDatasets, CustomOversamplesOrNotWhenTooSmall) {
  DatasetReport report;
  auto prompts = custom_prompts(30, custom(8), *tok_, &report);
  EXPECT_EQ(prompts.size(), 30u);
  EXPECT_EQ(report.oversampled, 6u);
  std::set<std::string> first24;
  for (size_t i = 0; i < 24; ++i) first24.insert(prompts[i].text);
  EXPECT_EQ(first24.size(), 24u);
  for (size_t i = 24; i < 30; ++i) EXPECT_TRUE(first24.count(prompts[i].text));
  CustomOptions o = custom(8);
  o.file.oversample = false;
  EXPECT_EQ(custom_prompts(30, o, *tok_, &report).size(), 24u);
  EXPECT_NE(report.notes.at(0).find("--no-oversample"), std::string::npos);
}

TEST_F(FileDatasets, MissingFileIsAnInputErrorNamingIt) {
  CustomOptions o = custom();
  o.file.path = "/nonexistent/servebench.jsonl";
  core::Error e = error_of([&] { custom_prompts(1, o, *tok_, nullptr); });
  EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
  EXPECT_NE(std::string(e.what()).find("cannot read '/nonexistent/servebench.jsonl'"),
            std::string::npos)
      << e.what();
}

TEST_F(FileDatasets, CustomBadLinesNameFileLineAndByte) {
  TempFile bad_json(".jsonl", "{\"prompt\": \"a b c d\"}\n{\"prompt\": \"x\" oops}\n");
  CustomOptions o = custom(16);
  o.file.path = bad_json.path();
  core::Error e = error_of([&] { custom_prompts(1, o, *tok_, nullptr); });
  EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
  EXPECT_EQ(e.where().rfind(bad_json.path() + ":2 (byte ", 0), 0u) << e.what();
  EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();

  TempFile no_prompt(".jsonl", "{\"prompt\": \"a\"}\n\n{\"text\": \"a\"}\n");
  o.file.path = no_prompt.path();
  e = error_of([&] { custom_prompts(1, o, *tok_, nullptr); });
  EXPECT_EQ(e.where(), no_prompt.path() + ":3 (byte 17)");
  EXPECT_NE(std::string(e.what()).find("no \"prompt\""), std::string::npos);

  TempFile bad_output(".jsonl", "{\"prompt\": \"a\", \"output_tokens\": \"many\"}\n");
  o.file.path = bad_output.path();
  o.output_len = -1;
  e = error_of([&] { custom_prompts(1, o, *tok_, nullptr); });
  EXPECT_EQ(e.where(), bad_output.path() + ":1 (byte 33)");
  EXPECT_NE(std::string(e.what()).find("must be an integer"), std::string::npos);

  TempFile trailing(".jsonl", "{\"prompt\": \"a\"} {\"prompt\": \"b\"}\n");
  o.file.path = trailing.path();
  o.output_len = 4;
  e = error_of([&] { custom_prompts(1, o, *tok_, nullptr); });
  EXPECT_NE(std::string(e.what()).find("unexpected text after"), std::string::npos) << e.what();

  TempFile empty(".jsonl", "\n\n");
  o.file.path = empty.path();
  e = error_of([&] { custom_prompts(1, o, *tok_, nullptr); });
  EXPECT_NE(std::string(e.what()).find("no usable rows: 0 read"), std::string::npos) << e.what();
}

TEST_F(FileDatasets, ShareGptBadFilesNameTheirPlace) {
  ShareGptOptions o = sharegpt();
  TempFile object(".json", "{\"conversations\": []}");
  o.file.path = object.path();
  core::Error e = error_of([&] { sharegpt_prompts(1, o, *tok_, nullptr); });
  EXPECT_NE(std::string(e.what()).find("expected a JSON array"), std::string::npos) << e.what();

  TempFile no_value(".json",
                    "[\n{\"conversations\": [{\"value\": \"a b c d e\"}, {\"v\": 1}]}\n]\n");
  o.file.path = no_value.path();
  e = error_of([&] { sharegpt_prompts(1, o, *tok_, nullptr); });
  EXPECT_EQ(e.where().rfind(no_value.path() + ":2 (byte ", 0), 0u) << e.what();
  EXPECT_NE(std::string(e.what()).find("turn 1 has no \"value\""), std::string::npos);

  TempFile truncated(".json", "[\n{\"conversations\": [{\"value\": \"a b c d e\"},\n");
  o.file.path = truncated.path();
  e = error_of([&] { sharegpt_prompts(1, o, *tok_, nullptr); });
  EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
  EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();

  TempFile none_valid(
      ".json", "[{\"conversations\": [{\"value\": \"hi\"}, {\"value\": \"a b c d e\"}]}, {}]");
  o.file.path = none_valid.path();
  e = error_of([&] { sharegpt_prompts(1, o, *tok_, nullptr); });
  EXPECT_NE(std::string(e.what()).find("no usable rows: 2 read"), std::string::npos) << e.what();
}

TEST_F(FileDatasets, ShareGptMultiTurnGivesWholeConversationsInOrder) {
  // Row A: 3 user turns (the last reply 5 tokens); row B: its second pair fails vLLM's filter
  // (a 2-token prompt), so it ends after turn 0; row C: one turn (< 2 turns after it: dropped
  // trailing user turn).
  TempFile file(".json", R"([
{"conversations": [{"value": "a1 a1 a1 a1"}, {"value": "r r r r r r"},
                   {"value": "a2 a2 a2 a2 a2"}, {"value": "r r r r"},
                   {"value": "a3 a3 a3 a3 a3 a3"}, {"value": "r r r r r"}]},
{"conversations": [{"value": "b1 b1 b1 b1"}, {"value": "r r r r r r r"},
                   {"value": "b2 b2"}, {"value": "r r r r"},
                   {"value": "b3 b3 b3 b3"}, {"value": "r r r r"}]},
{"conversations": [{"value": "c1 c1 c1 c1 c1"}, {"value": "r r r r"},
                   {"value": "c2 c2 c2 c2"}]}
])");
  ShareGptOptions o;
  o.file.path = file.path();
  o.file.shuffle = false;
  o.multi_turn = true;
  DatasetReport report;
  auto turns = sharegpt_prompts(10, o, *tok_, &report);
  EXPECT_EQ(report.usable, 3u);       // conversations, not turns
  EXPECT_EQ(report.oversampled, 7u);  // whole conversations drawn again
  // 10 conversations; each original is 3, 1 or 1 turns long.
  std::vector<std::string> expected_a = {"a1 a1 a1 a1", "a2 a2 a2 a2 a2", "a3 a3 a3 a3 a3 a3"};
  ASSERT_GE(turns.size(), 5u);
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(turns[t].text, expected_a[t]);
    EXPECT_EQ(turns[t].conversation, 0);
    EXPECT_EQ(turns[t].turn, t);
    EXPECT_EQ(turns[t].prompt_tokens, static_cast<int32_t>(tok_->count(expected_a[t])));
  }
  EXPECT_EQ(turns[0].output_tokens, 6);  // the reply after each user turn
  EXPECT_EQ(turns[1].output_tokens, 4);
  EXPECT_EQ(turns[2].output_tokens, 5);
  EXPECT_EQ(turns[3].text, "b1 b1 b1 b1");
  EXPECT_EQ(turns[3].conversation, 1);
  EXPECT_EQ(turns[3].turn, 0);
  EXPECT_EQ(turns[4].text, "c1 c1 c1 c1 c1");
  EXPECT_EQ(turns[4].conversation, 2);
  EXPECT_EQ(turns[4].turn, 0);
  // Conversation ids run 0..9, each conversation's turns consecutive and numbered from 0.
  int64_t conversation = -1;
  int32_t expected_turn = 0;
  for (const Prompt& p : turns) {
    if (p.conversation != conversation) {
      EXPECT_EQ(p.conversation, conversation + 1);
      EXPECT_EQ(p.turn, 0);
      conversation = p.conversation;
      expected_turn = 1;
      continue;
    }
    EXPECT_EQ(p.turn, expected_turn++);
  }
  EXPECT_EQ(conversation, 9);

  o.max_turns = 2;
  o.file.oversample = false;
  auto capped = sharegpt_prompts(10, o, *tok_, nullptr);
  ASSERT_EQ(capped.size(), 4u);  // a1, a2 | b1 | c1
  EXPECT_EQ(capped[1].text, "a2 a2 a2 a2 a2");
  EXPECT_EQ(capped[2].text, "b1 b1 b1 b1");

  o.max_turns = -1;
  EXPECT_THROW(sharegpt_prompts(1, o, *tok_, nullptr), core::Error);
}

TEST_F(FileDatasets, ShareGptMultiTurnFirstTurnsAreTheSingleTurnPrompts) {
  // Same shuffle, same first-pair filter: the conversations start with exactly the prompts
  // plain sharegpt picks for the same seed.
  ShareGptOptions single = sharegpt(3);
  single.file.oversample = false;
  ShareGptOptions multi = single;
  multi.multi_turn = true;
  auto prompts = sharegpt_prompts(20, single, *tok_, nullptr);
  auto turns = sharegpt_prompts(20, multi, *tok_, nullptr);
  std::vector<std::string> firsts;
  size_t later = 0;
  for (const Prompt& p : turns) {
    if (p.turn == 0) {
      firsts.push_back(p.text);
    } else {
      ++later;
    }
  }
  ASSERT_EQ(firsts.size(), prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(firsts[i], prompts[i].text);
  EXPECT_GT(later, 0u);  // the fixture has rows of 4 and 5 turns
}

TEST_F(FileDatasets, SonnetBuiltInVersesShareAPrefixAndStayUnderInputLen) {
  SonnetOptions o;  // vLLM's defaults: 550 in, 150 out, 200 prefix
  DatasetReport report;
  auto prompts = sonnet_prompts(50, o, *tok_, &report);
  ASSERT_EQ(prompts.size(), 50u);
  const std::string instruction = "Pick as many lines as you can from these poem lines:\n";
  const std::string verses = generated_verses(518, 0);
  size_t common = prompts[0].text.size();
  for (const auto& p : prompts) {
    EXPECT_EQ(p.text.rfind(instruction, 0), 0u);
    EXPECT_LE(p.prompt_tokens, 550);
    EXPECT_GT(p.prompt_tokens, 400);
    EXPECT_EQ(p.output_tokens, 150);
    EXPECT_EQ(tok_->count(p.text), static_cast<size_t>(p.prompt_tokens));
    size_t k = 0;
    while (k < common && k < p.text.size() && p.text[k] == prompts[0].text[k]) ++k;
    common = k;
  }
  // The shared part is the instruction plus the text's first lines (~200 tokens of it).
  EXPECT_GT(tok_->count(std::string_view(prompts[0].text).substr(0, common)), 150u);
  EXPECT_EQ(prompts[0].text.substr(instruction.size(), 40), verses.substr(0, 40));
  auto again = sonnet_prompts(50, o, *tok_, nullptr);
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(again[i].text, prompts[i].text);
}

TEST_F(FileDatasets, SonnetFromAFileAndTooSmallInputLen) {
  SonnetOptions o;
  o.path = kFixtures + "verses.txt";
  o.input_len = 120;
  o.prefix_len = 40;
  o.output_len = 9;
  auto prompts = sonnet_prompts(10, o, *tok_, nullptr);
  ASSERT_EQ(prompts.size(), 10u);
  for (const auto& p : prompts) EXPECT_LE(p.prompt_tokens, 120);
  o.input_len = 5;  // not more than the instruction's tokens
  core::Error e = error_of([&] { sonnet_prompts(1, o, *tok_, nullptr); });
  EXPECT_EQ(e.where(), "--sonnet-input-len");
}

TraceOptions mooncake(const std::string& path) {
  TraceOptions o;
  o.path = path;
  return o;
}

TEST_F(FileDatasets, MooncakeTraceKeepsTimesLengthsAndOrder) {
  DatasetReport report;
  auto prompts = trace_prompts(1000, mooncake(kFixtures + "mooncake.jsonl"), *tok_, &report);
  ASSERT_EQ(prompts.size(), 30u);
  EXPECT_EQ(report.rows, 30u);
  ASSERT_EQ(report.notes.size(), 1u);  // fewer rows than asked for
  EXPECT_EQ(prompts[0].trace_offset_ns, 0);
  EXPECT_EQ(prompts[1].trace_offset_ns, 20'000'000);  // 20 ms -> 40 ms
  EXPECT_EQ(prompts[0].prompt_tokens, 953);
  EXPECT_EQ(prompts[0].output_tokens, 6);
  EXPECT_EQ(prompts[1].prompt_tokens, 2478);
  for (size_t i = 1; i < prompts.size(); ++i) {
    EXPECT_GE(prompts[i].trace_offset_ns, prompts[i - 1].trace_offset_ns);
    EXPECT_EQ(tok_->count(prompts[i].text), static_cast<size_t>(prompts[i].prompt_tokens));
  }
  EXPECT_EQ(trace_prompts(5, mooncake(kFixtures + "mooncake.jsonl"), *tok_, nullptr).size(), 5u);
}

TEST_F(FileDatasets, EqualHashIdsGiveEqualTextBlocks) {
  TempFile trace(".jsonl",
                 "{\"timestamp\": 1000, \"input_length\": 1100, \"output_length\": 3, "
                 "\"hash_ids\": [7, 8, 9]}\n"
                 "{\"timestamp\": 1500, \"input_length\": 700, \"output_length\": 3, "
                 "\"hash_ids\": [7, 5]}\n"
                 "{\"timestamp\": 900, \"input_length\": 300, \"output_length\": 3, "
                 "\"hash_ids\": [8]}\n");
  DatasetReport report;
  auto prompts = trace_prompts(10, mooncake(trace.path()), *tok_, &report);
  ASSERT_EQ(prompts.size(), 3u);
  // Sorted by timestamp: 900, 1000, 1500 ms.
  EXPECT_EQ(prompts[0].prompt_tokens, 300);
  EXPECT_EQ(prompts[1].trace_offset_ns, 100'000'000);
  EXPECT_EQ(prompts[2].trace_offset_ns, 600'000'000);
  EXPECT_NE(report.notes.back().find("not in timestamp order"), std::string::npos);
  auto a = tok_->encode(prompts[1].text), b = tok_->encode(prompts[2].text),
       c = tok_->encode(prompts[0].text);
  // Block 7 (512 tokens) is shared by rows 1 and 2; their second blocks differ.
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 512, b.begin()));
  EXPECT_FALSE(std::equal(a.begin() + 512, a.begin() + 700, b.begin() + 512));
  // Block 8 as the whole of a short prompt is the start of the same block elsewhere.
  EXPECT_TRUE(std::equal(c.begin(), c.end(), a.begin() + 512));
  TraceOptions other = mooncake(trace.path());
  other.seed = 1;
  EXPECT_NE(trace_prompts(10, other, *tok_, nullptr)[0].text, prompts[0].text);
}

TEST_F(FileDatasets, AzureCsvTraceParsesTimesAndQuotes) {
  TraceOptions o;
  o.format = TraceOptions::Format::kAzureCsv;
  o.path = kFixtures + "azure.csv";
  auto prompts = trace_prompts(100, o, *tok_, nullptr);
  ASSERT_EQ(prompts.size(), 30u);
  // 18:15:46.0731567 then 18:15:46.0975842: 24.4275 ms apart, to the 100 ns tick.
  EXPECT_EQ(prompts[1].trace_offset_ns, 24'427'500);
  EXPECT_EQ(prompts[0].prompt_tokens, 289);
  EXPECT_EQ(prompts[0].output_tokens, 17);
  EXPECT_EQ(prompts[1].prompt_tokens, 522);
  for (size_t i = 1; i < prompts.size(); ++i) {
    EXPECT_GE(prompts[i].trace_offset_ns, prompts[i - 1].trace_offset_ns);
  }
}

TEST_F(FileDatasets, BadTraceFilesNameTheirPlace) {
  TraceOptions o;
  o.format = TraceOptions::Format::kAzureCsv;
  TempFile unterminated(".csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n\"2023-11-16 1,2,3\n");
  o.path = unterminated.path();
  core::Error e = error_of([&] { trace_prompts(5, o, *tok_, nullptr); });
  EXPECT_EQ(e.where(), unterminated.path() + ":2 (byte 40)");
  EXPECT_NE(std::string(e.what()).find("never closed"), std::string::npos);

  TempFile bad_time(".csv",
                    "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,5,5\n"
                    "yesterday,5,5\n");
  o.path = bad_time.path();
  e = error_of([&] { trace_prompts(5, o, *tok_, nullptr); });
  EXPECT_EQ(e.where(), bad_time.path() + ":3 (byte 64)");

  // Found by the fuzzer: times past int64 nanoseconds are refused, not overflowed.
  TempFile far_future(".csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n9999-01-01 00:00:00,5,5\n");
  o.path = far_future.path();
  e = error_of([&] { trace_prompts(5, o, *tok_, nullptr); });
  EXPECT_EQ(e.where(), far_future.path() + ":2 (byte 40)");
  TempFile huge_stamp(".jsonl",
                      "{\"timestamp\": 1e300, \"input_length\": 5, \"output_length\": 2}\n");
  e = error_of([&] { trace_prompts(5, mooncake(huge_stamp.path()), *tok_, nullptr); });
  EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();

  TempFile no_header(".csv", "time,in,out\n1,2,3\n");
  o.path = no_header.path();
  e = error_of([&] { trace_prompts(5, o, *tok_, nullptr); });
  EXPECT_NE(std::string(e.what()).find("TIMESTAMP, ContextTokens and GeneratedTokens"),
            std::string::npos);

  TempFile missing(".jsonl",
                   "{\"timestamp\": 1, \"input_length\": 5, \"output_length\": 2}\n"
                   "{\"timestamp\": 2, \"input_length\": 5}\n");
  e = error_of([&] { trace_prompts(5, mooncake(missing.path()), *tok_, nullptr); });
  EXPECT_EQ(e.where(), missing.path() + ":2 (byte 56)");
  EXPECT_NE(std::string(e.what()).find("no \"output_length\""), std::string::npos);

  TempFile zero(".jsonl", "{\"timestamp\": 1, \"input_length\": 0, \"output_length\": 2}\n");
  e = error_of([&] { trace_prompts(5, mooncake(zero.path()), *tok_, nullptr); });
  EXPECT_NE(std::string(e.what()).find("no usable rows: 1 read"), std::string::npos);
}

// Each message below once misled: simdjson calls "{...} extra" an object that "ended early" at
// byte 0, a bad escape "not a string", 99999999999 "must be >= 1".
TEST_F(FileDatasets, TextAfterTheValueIsNamedWhereItStarts) {
  TempFile custom_extra(".jsonl", "{\"prompt\": \"a b\"}\n{\"prompt\":\"hello world\"} extra\n");
  CustomOptions o = custom(4);
  o.file.path = custom_extra.path();
  core::Error e = error_of([&] { custom_prompts(1, o, *tok_, nullptr); });
  EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
  EXPECT_EQ(e.where(), custom_extra.path() + ":2 (byte 43)") << e.what();
  EXPECT_NE(std::string(e.what()).find("unexpected text after the JSON object"), std::string::npos)
      << e.what();

  ShareGptOptions s = sharegpt();
  TempFile sharegpt_extra(
      ".json", "[{\"conversations\": [{\"value\": \"a ] b\"}, {\"value\": \"c\"}]}]\n garbage\n");
  s.file.path = sharegpt_extra.path();
  e = error_of([&] { sharegpt_prompts(1, s, *tok_, nullptr); });
  EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
  EXPECT_EQ(e.where(), sharegpt_extra.path() + ":2 (byte 59)") << e.what();
  EXPECT_NE(std::string(e.what()).find("unexpected text after the JSON array"), std::string::npos)
      << e.what();

  // A truncated array is still called invalid JSON, not trailing text.
  TempFile truncated(".json", "[{\"conversations\": []}, {\"conversations\": [\n");
  s.file.path = truncated.path();
  e = error_of([&] { sharegpt_prompts(1, s, *tok_, nullptr); });
  EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
}

TEST_F(FileDatasets, LineThatIsNotAnObjectSaysSo) {
  TempFile array_line(".jsonl", "{\"prompt\": \"a b\"}\n[1,2]\n");
  CustomOptions o = custom(4);
  o.file.path = array_line.path();
  core::Error e = error_of([&] { custom_prompts(2, o, *tok_, nullptr); });
  EXPECT_EQ(e.where(), array_line.path() + ":2 (byte 18)") << e.what();
  EXPECT_EQ(std::string(e.what()), e.where() + ": line is not a JSON object");
}

TEST_F(FileDatasets, InvalidEscapeIsNamedNotCalledAWrongType) {
  TempFile custom_surrogate(".jsonl", "{\"prompt\": \"ok\"}\n{\"prompt\":\"\\ud800 lone\"}\n");
  CustomOptions o = custom(4);
  o.file.path = custom_surrogate.path();
  core::Error e = error_of([&] { custom_prompts(2, o, *tok_, nullptr); });
  EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
  EXPECT_EQ(e.where(), custom_surrogate.path() + ":2 (byte 27)") << e.what();
  EXPECT_NE(std::string(e.what()).find("\"prompt\" has an invalid escape"), std::string::npos)
      << e.what();

  TempFile number_prompt(".jsonl", "{\"prompt\": 5}\n");
  o.file.path = number_prompt.path();
  e = error_of([&] { custom_prompts(1, o, *tok_, nullptr); });
  EXPECT_NE(std::string(e.what()).find("\"prompt\" must be a string"), std::string::npos)
      << e.what();

  ShareGptOptions s = sharegpt();
  s.file.shuffle = false;
  TempFile sharegpt_surrogate(
      ".json", "[{\"conversations\": [{\"value\": \"a \\udc00 b c d\"}, {\"value\": \"e\"}]}]");
  s.file.path = sharegpt_surrogate.path();
  e = error_of([&] { sharegpt_prompts(1, s, *tok_, nullptr); });
  EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
  EXPECT_EQ(e.where(), sharegpt_surrogate.path() + ":1 (byte 30)") << e.what();
  EXPECT_NE(std::string(e.what()).find("invalid escape"), std::string::npos) << e.what();
}

TEST_F(FileDatasets, OutputTokensTooLargeSaysOutOfRange) {
  TempFile big(".jsonl", "{\"prompt\":\"a b c\",\"output_tokens\":99999999999}\n");
  CustomOptions o = custom(-1);
  o.file.path = big.path();
  core::Error e = error_of([&] { custom_prompts(1, o, *tok_, nullptr); });
  EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
  EXPECT_EQ(e.where(), big.path() + ":1 (byte 34)") << e.what();
  EXPECT_NE(std::string(e.what()).find("out of range (too large; allowed 1 to 2147483647), got "
                                       "99999999999"),
            std::string::npos)
      << e.what();

  TempFile zero(".jsonl", "{\"prompt\":\"a b c\",\"output_tokens\":0}\n");
  o.file.path = zero.path();
  e = error_of([&] { custom_prompts(1, o, *tok_, nullptr); });
  EXPECT_NE(std::string(e.what()).find("out of range (too small; allowed 1 to 2147483647)"),
            std::string::npos)
      << e.what();

  TempFile huge(".jsonl", "{\"prompt\":\"a b c\",\"output_tokens\":1e30}\n");
  o.file.path = huge.path();
  e = error_of([&] { custom_prompts(1, o, *tok_, nullptr); });
  EXPECT_EQ(e.where(), huge.path() + ":1 (byte 34)") << e.what();
  EXPECT_NE(std::string(e.what()).find("\"output_tokens\" is out of range (too large"),
            std::string::npos)
      << e.what();
}

TEST_F(FileDatasets, LeadingByteOrderMarkIsSkipped) {
  const std::string bom = "\xEF\xBB\xBF";
  TempFile custom_bom(".jsonl", bom + "{\"prompt\":\"bom line\"}\n");
  CustomOptions o = custom(4);
  o.file.path = custom_bom.path();
  auto prompts = custom_prompts(1, o, *tok_, nullptr);
  ASSERT_EQ(prompts.size(), 1u);
  EXPECT_EQ(prompts[0].text, "bom line");

  ShareGptOptions s = sharegpt();
  TempFile sharegpt_bom(
      ".json", bom + "[{\"conversations\": [{\"value\": \"a b c d\"}, {\"value\": \"e f g h\"}]}]");
  s.file.path = sharegpt_bom.path();
  prompts = sharegpt_prompts(1, s, *tok_, nullptr);
  ASSERT_EQ(prompts.size(), 1u);
  EXPECT_EQ(prompts[0].text, "a b c d");

  TraceOptions t;
  t.format = TraceOptions::Format::kAzureCsv;
  TempFile csv_bom(".csv",
                   bom + "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,5,6\n");
  t.path = csv_bom.path();
  prompts = trace_prompts(1, t, *tok_, nullptr);
  ASSERT_EQ(prompts.size(), 1u);
  EXPECT_EQ(prompts[0].output_tokens, 6);

  // Places still count the mark's bytes, as an editor's byte offsets do.
  TempFile bad_after_bom(".jsonl", bom + "{\"prompt\": 5}\n");
  o.file.path = bad_after_bom.path();
  core::Error e = error_of([&] { custom_prompts(1, o, *tok_, nullptr); });
  EXPECT_EQ(e.where(), bad_after_bom.path() + ":1 (byte 14)") << e.what();
}

}  // namespace
}  // namespace servebench::dataset
