#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "sim/deploy/hardware.h"

namespace servebench::sim::deploy {
namespace {

namespace fs = std::filesystem;

ModelSizes sizes_of(const char* name) {
  auto m = builtin_model(name);
  EXPECT_TRUE(m.has_value()) << name;
  return m ? model_sizes(*m) : ModelSizes{};
}

// Published sizes (sim-calibration.md's model table; the models' cards for totals).
TEST(Catalog, BuiltInDenseModelsHaveTheirPublishedSizes) {
  ModelSizes llama8 = sizes_of("Llama-3.1-8B");
  EXPECT_NEAR(llama8.weight_bytes / 2, 8.03e9, 0.01e9);
  EXPECT_EQ(llama8.kv_bytes_per_token_per_layer * 32, 131072);
  ModelSizes llama70 = sizes_of("llama-3.3-70b");  // names match in any case
  EXPECT_NEAR(llama70.weight_bytes / 2, 70.55e9, 0.01e9);
  EXPECT_EQ(llama70.kv_bytes_per_token_per_layer * 80, 327680);
  ModelSizes qwen = sizes_of("Qwen3-32B");
  EXPECT_NEAR(qwen.weight_bytes / 2, 32.76e9, 0.02e9);
  EXPECT_NEAR(qwen.matmul_params_per_token, 31.98e9 - 0.78e9, 0.05e9);  // without lm_head
  EXPECT_EQ(kv_bytes_per_token(*builtin_model("Qwen3-32B")), 262144);
}

TEST(Catalog, MoeAndMlaModelsCountActiveParametersAndTheLatentKv) {
  ModelSizes v25 = sizes_of("DeepSeek-V2.5");
  EXPECT_NEAR(v25.weight_bytes / 2, 236e9, 3e9);
  EXPECT_NEAR(v25.matmul_params_per_token, 21e9 - 1.0e9, 1.5e9);  // 21B active incl. embeddings
  EXPECT_EQ(v25.kv_bytes_per_token_per_layer * 60, 69120);        // 576 × 60 × 2
  ModelSizes v3 = sizes_of("DeepSeek-V3");
  EXPECT_NEAR(v3.weight_bytes, 671e9, 5e9);  // fp8: one byte a parameter
  EXPECT_NEAR(v3.matmul_params_per_token, 37e9 - 1.9e9, 2e9);
  // The MLA latent is replicated on every TP rank; GQA heads are split (one per GPU at most).
  EXPECT_EQ(kv_bytes_per_token_per_gpu(*builtin_model("DeepSeek-V2.5"), 8, 1), 69120);
  EXPECT_EQ(kv_bytes_per_token_per_gpu(*builtin_model("Llama-3.1-70B"), 8, 1), 40960);
  EXPECT_EQ(kv_bytes_per_token_per_gpu(*builtin_model("Llama-3.1-70B"), 16, 2), 20480);
}

TEST(Catalog, GpusAndLinksByName) {
  auto h20 = builtin_gpu("H20");
  ASSERT_TRUE(h20);
  EXPECT_EQ(h20->bf16_flops, 148e12);
  EXPECT_EQ(h20->hbm_bytes_per_s, 4000e9);
  EXPECT_EQ(builtin_gpu("a100-40gb")->hbm_bytes_per_s, 1555e9);
  EXPECT_FALSE(builtin_gpu("B300"));
  EXPECT_GT(builtin_link("infiniband")->bytes_per_s, 5 * builtin_link("ethernet")->bytes_per_s);
  EXPECT_FALSE(builtin_link("nvlink"));  // each GPU has its own
}

fs::path scratch_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("servebench_catalog_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

constexpr const char* kDeepSeekLikeConfig = R"({
  "architectures": ["DeepseekV2ForCausalLM"], "num_hidden_layers": 60, "hidden_size": 5120,
  "num_attention_heads": 128, "num_key_value_heads": 128, "intermediate_size": 12288,
  "vocab_size": 102400, "n_routed_experts": 160, "num_experts_per_tok": 6,
  "n_shared_experts": 2, "moe_intermediate_size": 1536, "first_k_dense_replace": 1,
  "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
  "v_head_dim": 128, "tie_word_embeddings": false})";

TEST(Catalog, AHuggingFaceConfigGivesTheSameShapeAsTheBuiltIn) {
  fs::path dir = scratch_dir("config");
  std::ofstream(dir / "config.json") << kDeepSeekLikeConfig;
  ModelShape m = model_from_hf_config((dir / "config.json").string());
  ModelSizes from_file = model_sizes(m);
  ModelSizes built_in = sizes_of("DeepSeek-V2.5");
  EXPECT_EQ(from_file.weight_bytes, built_in.weight_bytes);
  EXPECT_EQ(from_file.kv_bytes_per_token_per_layer, built_in.kv_bytes_per_token_per_layer);
  EXPECT_EQ(m.experts_per_token, 6);
}

TEST(Catalog, AConfigMissingAKeyIsAnErrorNamingIt) {
  fs::path dir = scratch_dir("bad");
  std::ofstream(dir / "config.json") << R"({"hidden_size": 4096, "num_attention_heads": 32})";
  try {
    model_from_hf_config((dir / "config.json").string());
    FAIL() << "no error";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("num_hidden_layers"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos) << e.what();
  }
}

TEST(Catalog, TheLocalHuggingFaceCacheIsSearchedByRepoId) {
  fs::path cache = scratch_dir("hub");
  fs::path repo = cache / "models--org--tiny";
  fs::create_directories(repo / "refs");
  fs::create_directories(repo / "snapshots" / "abc123");
  std::ofstream(repo / "refs" / "main") << "abc123";
  std::ofstream(repo / "snapshots" / "abc123" / "config.json") << kDeepSeekLikeConfig;
  ::setenv("HF_HUB_CACHE", cache.c_str(), 1);
  EXPECT_EQ(find_hf_cached_config("org/tiny"),
            (repo / "snapshots" / "abc123" / "config.json").string());
  EXPECT_EQ(find_hf_cached_config("org/absent"), "");
  ::unsetenv("HF_HUB_CACHE");
}

}  // namespace
}  // namespace servebench::sim::deploy
