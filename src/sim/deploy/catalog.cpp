// Built-in model shapes, GPUs and links, and Hugging Face config.json reading. Figures are
// public facts: model shapes from each model's config.json; GPU peaks and memory from the
// vendors' datasheets as tabled in ../shared/research/sim-calibration.md (AIConfigurator's and
// InferSim's GPU tables agree with them); link figures as that document gives them.
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "sim/deploy/hardware.h"

namespace servebench::sim::deploy {
namespace {

constexpr double kGB = 1e9;
constexpr double kMiB = 1024.0 * 1024.0;

ModelShape gqa(std::string name, int32_t layers, int32_t hidden, int32_t heads, int32_t kv_heads,
               int64_t intermediate, int64_t vocab, int32_t head_dim = 0) {
  ModelShape m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.head_dim = head_dim > 0 ? head_dim : hidden / heads;
  m.intermediate = intermediate;
  m.vocab = vocab;
  return m;
}

// DeepSeek-V2/V3's MLA: q LoRA 1536, KV latent 512, RoPE 64, no-PE 128, V 128.
ModelShape deepseek(std::string name, int32_t layers, int32_t hidden, int64_t intermediate,
                    int64_t vocab, int32_t experts, int32_t top_k, int32_t shared,
                    int64_t moe_intermediate, int32_t dense_layers) {
  ModelShape m = gqa(std::move(name), layers, hidden, 128, 128, intermediate, vocab, 128);
  m.experts = experts;
  m.experts_per_token = top_k;
  m.shared_experts = shared;
  m.moe_intermediate = moe_intermediate;
  m.dense_layers = dense_layers;
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_rope_head_dim = 64;
  m.qk_nope_head_dim = 128;
  m.v_head_dim = 128;
  return m;
}

const std::vector<ModelShape>& models() {
  static const std::vector<ModelShape> kModels = [] {
    std::vector<ModelShape> v;
    v.push_back(gqa("Llama-3.1-8B", 32, 4096, 32, 8, 14336, 128256));
    v.push_back(gqa("Llama-3.1-70B", 80, 8192, 64, 8, 28672, 128256));
    v.push_back(gqa("Llama-3.3-70B", 80, 8192, 64, 8, 28672, 128256));
    v.push_back(gqa("Llama-3-70B", 80, 8192, 64, 8, 28672, 128256));
    v.push_back(gqa("Qwen2.5-7B", 28, 3584, 28, 4, 18944, 152064));
    v.push_back(gqa("Qwen3-8B", 36, 4096, 32, 8, 12288, 151936, 128));
    v.push_back(gqa("Qwen3-32B", 64, 5120, 64, 8, 25600, 151936, 128));
    ModelShape qwen_moe = gqa("Qwen3-30B-A3B", 48, 2048, 32, 4, 6144, 151936, 128);
    qwen_moe.experts = 128;
    qwen_moe.experts_per_token = 8;
    qwen_moe.moe_intermediate = 768;
    v.push_back(qwen_moe);
    v.push_back(deepseek("DeepSeek-V2.5", 60, 5120, 12288, 102400, 160, 6, 2, 1536, 1));
    ModelShape v3 = deepseek("DeepSeek-V3", 61, 7168, 18432, 129280, 256, 8, 1, 2048, 3);
    v3.bytes_per_param = 1;  // released in fp8
    v.push_back(v3);
    return v;
  }();
  return kModels;
}

Link link(std::string name, double gb_per_s, int64_t latency_us) {
  return Link{std::move(name), gb_per_s * kGB, latency_us * 1000};
}

const std::vector<Gpu>& gpus() {
  // Memory as the driver reports it (MiB); NVLink per direction per GPU.
  static const std::vector<Gpu> kGpus = {
      {"A100-40GB", 1555 * kGB, 312e12, 0, 40960 * kMiB, 108, link("nvlink", 300, 10)},
      {"A100-80GB", 2039 * kGB, 312e12, 0, 81920 * kMiB, 108, link("nvlink", 300, 10)},
      {"H100", 3350 * kGB, 989e12, 1979e12, 81559 * kMiB, 132, link("nvlink", 450, 10)},
      {"H200", 4800 * kGB, 989e12, 1979e12, 143771 * kMiB, 132, link("nvlink", 450, 10)},
      {"H20", 4000 * kGB, 148e12, 296e12, 97871 * kMiB, 78, link("nvlink", 450, 10)},
      {"L40S", 864 * kGB, 362e12, 733e12, 46068 * kMiB, 142, link("pcie4", 32, 10)},
  };
  return kGpus;
}

const std::vector<Link>& links() {
  // Scale-out per GPU: HDR InfiniBand 200 Gb/s, NDR 400 Gb/s; TCP over Ethernet ~3 GB/s.
  static const std::vector<Link> kLinks = {
      link("infiniband", 25, 20), link("infiniband-ndr", 50, 20), link("roce", 25, 30),
      link("ethernet", 3, 100),   link("pcie4", 32, 10),          link("pcie5", 64, 10),
  };
  return kLinks;
}

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

ModelSizes model_sizes(const ModelShape& m) {
  const double h = m.hidden;
  double attention = 0;
  if (m.kv_lora_rank > 0) {
    const double qk_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    attention =
        (m.q_lora_rank > 0
             ? h * m.q_lora_rank + static_cast<double>(m.q_lora_rank) * m.heads * qk_dim
             : h * m.heads * qk_dim) +
        h * (m.kv_lora_rank + m.qk_rope_head_dim) +
        static_cast<double>(m.kv_lora_rank) * m.heads * (m.qk_nope_head_dim + m.v_head_dim) +
        static_cast<double>(m.heads) * m.v_head_dim * h;
  } else {
    attention = 2 * h * m.heads * m.head_dim + 2 * h * m.kv_heads * m.head_dim;
  }
  const double dense_mlp = 3 * h * static_cast<double>(m.intermediate);
  const double expert = 3 * h * static_cast<double>(m.moe_intermediate);
  const int32_t moe_layers = m.experts > 0 ? m.layers - m.dense_layers : 0;
  const int32_t dense_layers = m.layers - moe_layers;
  const double embed = static_cast<double>(m.vocab) * h;

  ModelSizes s;
  double experts_total = static_cast<double>(moe_layers) * m.experts * expert;
  double params = m.layers * attention + dense_layers * dense_mlp + experts_total +
                  static_cast<double>(moe_layers) * (m.shared_experts * expert + h * m.experts) +
                  embed * (m.tied_embeddings ? 1 : 2);
  s.weight_bytes = params * m.bytes_per_param;
  s.expert_weight_bytes = experts_total * m.bytes_per_param;
  s.matmul_params_per_token =
      m.layers * attention + dense_layers * dense_mlp +
      static_cast<double>(moe_layers) *
          ((m.experts_per_token + m.shared_experts) * expert + h * m.experts);
  s.lm_head_params = embed;
  if (m.kv_lora_rank > 0) {
    // The latent (and the RoPE key) is cached once for all heads, in bf16.
    s.kv_bytes_per_token_per_layer = 2.0 * (m.kv_lora_rank + m.qk_rope_head_dim);
    // Absorbed MLA: scores over kv_lora + rope dims, values over kv_lora dims, per head.
    s.attention_flops_per_pair_per_layer =
        2.0 * m.heads * (m.kv_lora_rank + m.qk_rope_head_dim) + 2.0 * m.heads * m.kv_lora_rank;
  } else {
    s.kv_bytes_per_token_per_layer = 2.0 * 2.0 * m.kv_heads * m.head_dim;
    s.attention_flops_per_pair_per_layer = 4.0 * m.heads * m.head_dim;
  }
  return s;
}

double kv_bytes_per_token(const ModelShape& m) {
  return model_sizes(m).kv_bytes_per_token_per_layer * m.layers;
}

double kv_bytes_per_token_per_gpu(const ModelShape& m, int32_t tp, int32_t pp) {
  // GQA shards KV heads over TP (a GPU keeps at least one); the MLA latent is replicated.
  const int32_t shards = m.kv_lora_rank > 0 ? 1 : std::min(tp, m.kv_heads);
  const double layers_per_stage = std::ceil(static_cast<double>(m.layers) / pp);
  return model_sizes(m).kv_bytes_per_token_per_layer * layers_per_stage / shards;
}

std::optional<ModelShape> builtin_model(std::string_view name) {
  for (const ModelShape& m : models()) {
    if (same_name(m.name, name)) return m;
  }
  return std::nullopt;
}

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const ModelShape& m : models()) names.push_back(m.name);
  return names;
}

std::optional<Gpu> builtin_gpu(std::string_view name) {
  for (const Gpu& g : gpus()) {
    if (same_name(g.name, name)) return g;
  }
  return std::nullopt;
}

std::vector<std::string> builtin_gpu_names() {
  std::vector<std::string> names;
  for (const Gpu& g : gpus()) names.push_back(g.name);
  return names;
}

std::optional<Link> builtin_link(std::string_view name) {
  for (const Link& l : links()) {
    if (same_name(l.name, name)) return l;
  }
  return std::nullopt;
}

ModelShape model_from_hf_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::Error(core::ErrorKind::kInput, path, "cannot open config.json");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw core::Error(core::ErrorKind::kInput, path, "not a JSON object");
  }
  if (j.contains("text_config") && j["text_config"].is_object()) j = j["text_config"];
  auto integer = [&](std::initializer_list<const char*> keys, bool required) -> int64_t {
    for (const char* key : keys) {
      if (!j.contains(key) || j[key].is_null()) continue;
      if (!j[key].is_number_integer() || j[key].get<int64_t>() < 0) {
        throw core::Error(core::ErrorKind::kInput, path,
                          std::string("key '") + key + "': expected an integer >= 0");
      }
      return j[key].get<int64_t>();
    }
    if (required) {
      throw core::Error(core::ErrorKind::kInput, path,
                        std::string("key '") + *keys.begin() + "' is missing");
    }
    return 0;
  };
  ModelShape m;
  m.name = std::filesystem::path(path).parent_path().filename().string();
  m.layers = static_cast<int32_t>(integer({"num_hidden_layers", "n_layer"}, true));
  m.hidden = static_cast<int32_t>(integer({"hidden_size", "n_embd"}, true));
  m.heads = static_cast<int32_t>(integer({"num_attention_heads", "n_head"}, true));
  m.kv_heads = static_cast<int32_t>(integer({"num_key_value_heads"}, false));
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  m.head_dim = static_cast<int32_t>(integer({"head_dim"}, false));
  if (m.head_dim == 0 && m.heads > 0) m.head_dim = m.hidden / m.heads;
  m.intermediate = integer({"intermediate_size", "ffn_hidden_size"}, false);
  m.vocab = integer({"vocab_size"}, true);
  m.tied_embeddings = j.value("tie_word_embeddings", false);
  m.experts = static_cast<int32_t>(
      integer({"n_routed_experts", "num_experts", "num_local_experts"}, false));
  m.experts_per_token = static_cast<int32_t>(integer({"num_experts_per_tok"}, false));
  m.shared_experts = static_cast<int32_t>(integer({"n_shared_experts"}, false));
  m.dense_layers = static_cast<int32_t>(integer({"first_k_dense_replace"}, false));
  m.moe_intermediate = integer({"moe_intermediate_size"}, false);
  if (m.experts > 0 && m.moe_intermediate == 0) m.moe_intermediate = m.intermediate;
  m.q_lora_rank = static_cast<int32_t>(integer({"q_lora_rank"}, false));
  m.kv_lora_rank = static_cast<int32_t>(integer({"kv_lora_rank"}, false));
  m.qk_rope_head_dim = static_cast<int32_t>(integer({"qk_rope_head_dim"}, false));
  m.qk_nope_head_dim = static_cast<int32_t>(integer({"qk_nope_head_dim"}, false));
  m.v_head_dim = static_cast<int32_t>(integer({"v_head_dim"}, false));
  if (j.contains("quantization_config") && j["quantization_config"].is_object() &&
      j["quantization_config"].value("quant_method", "") == "fp8") {
    m.bytes_per_param = 1;
  }
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.vocab < 1) {
    throw core::Error(core::ErrorKind::kInput, path,
                      "num_hidden_layers, hidden_size, num_attention_heads and vocab_size must "
                      "be at least 1");
  }
  if (m.experts > 0 && (m.experts_per_token < 1 || m.experts_per_token > m.experts)) {
    throw core::Error(core::ErrorKind::kInput, path,
                      "key 'num_experts_per_tok': expected 1 to the number of experts");
  }
  return m;
}

std::string find_hf_cached_config(const std::string& repo_id) {
  namespace fs = std::filesystem;
  std::vector<fs::path> roots;
  if (const char* v = std::getenv("HF_HUB_CACHE"); v && *v) roots.emplace_back(v);
  if (const char* v = std::getenv("HF_HOME"); v && *v) roots.push_back(fs::path(v) / "hub");
  if (const char* v = std::getenv("HOME"); v && *v) {
    roots.push_back(fs::path(v) / ".cache" / "huggingface" / "hub");
  }
  std::string folder = "models--" + repo_id;
  for (size_t at = folder.find('/'); at != std::string::npos; at = folder.find('/')) {
    folder.replace(at, 1, "--");
  }
  std::error_code ec;
  for (const fs::path& root : roots) {
    fs::path repo = root / folder;
    std::ifstream ref(repo / "refs" / "main");
    std::string revision;
    if (ref && std::getline(ref, revision) &&
        fs::exists(repo / "snapshots" / revision / "config.json", ec)) {
      return (repo / "snapshots" / revision / "config.json").string();
    }
    for (const auto& snapshot : fs::directory_iterator(repo / "snapshots", ec)) {
      if (fs::exists(snapshot.path() / "config.json", ec)) {
        return (snapshot.path() / "config.json").string();
      }
    }
  }
  return {};
}

}  // namespace servebench::sim::deploy
