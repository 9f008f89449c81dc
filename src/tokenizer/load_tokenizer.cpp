// What `--tokenizer` names, resolved the way vLLM users expect (transformers' AutoTokenizer):
// a file, a model directory, or a model id already in the local Hugging Face cache. Nothing is
// downloaded.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace servebench::tokenizer {
namespace {

namespace fs = std::filesystem;

// tokenizer.json first: it is what transformers' fast tokenizers (and so vLLM) load.
const char* const kTokenizerFiles[] = {"tokenizer.json", "tokenizer.model"};

std::string tokenizer_in(const fs::path& dir) {
  std::error_code ec;
  for (const char* name : kTokenizerFiles)
    if (fs::is_regular_file(dir / name, ec)) return (dir / name).string();
  return {};
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : "";
}

// A name the Hub could hold: NAME or ORG/NAME, no "..", no leading '/'.
bool looks_like_model_id(const std::string& spec) {
  if (spec.empty() || spec.front() == '/' || spec.back() == '/' ||
      spec.find("..") != std::string::npos)
    return false;
  return std::count(spec.begin(), spec.end(), '/') <= 1;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf()))
    throw core::Error(core::ErrorKind::kInput, path, "cannot be read");
  return text.str();
}

bool is_json_file(const std::string& path) {
  if (path.ends_with(".json")) return true;
  if (path.ends_with(".model")) return false;
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c) && (c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
  }
  return c == '{';
}

}  // namespace

std::string hf_hub_cache_dir() {
  if (auto v = env("HF_HUB_CACHE"); !v.empty()) return v;
  if (auto v = env("HUGGINGFACE_HUB_CACHE"); !v.empty()) return v;
  if (auto v = env("HF_HOME"); !v.empty()) return (fs::path(v) / "hub").string();
  if (auto v = env("XDG_CACHE_HOME"); !v.empty())
    return (fs::path(v) / "huggingface" / "hub").string();
  if (auto v = env("HOME"); !v.empty())
    return (fs::path(v) / ".cache" / "huggingface" / "hub").string();
  return {};
}

std::string find_tokenizer_file(const std::string& spec) {
  std::error_code ec;
  if (fs::is_regular_file(spec, ec)) return spec;
  if (fs::is_directory(spec, ec)) return tokenizer_in(spec);
  if (!looks_like_model_id(spec)) return {};
  const std::string cache = hf_hub_cache_dir();
  if (cache.empty()) return {};
  std::string folder = "models--" + spec;
  for (size_t slash; (slash = folder.find('/')) != std::string::npos;)
    folder.replace(slash, 1, "--");
  const fs::path repo = fs::path(cache) / folder;
  // The revision refs/main points at, as huggingface_hub resolves it offline.
  std::ifstream ref(repo / "refs" / "main");
  std::string commit;
  if (ref >> commit) {
    if (auto found = tokenizer_in(repo / "snapshots" / commit); !found.empty()) return found;
  }
  // Otherwise the most recent snapshot that has a tokenizer.
  std::string best;
  fs::file_time_type best_time{};
  for (const auto& entry : fs::directory_iterator(repo / "snapshots", ec)) {
    std::string found = tokenizer_in(entry.path());
    auto time = entry.last_write_time(ec);
    if (!found.empty() && (best.empty() || time > best_time)) {
      best = found;
      best_time = time;
    }
  }
  return best;
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& spec) {
  if (spec == "builtin" || spec == "builtin-word") return make_word_tokenizer();
  if (spec.empty()) throw core::Error(core::ErrorKind::kUsage, "--tokenizer", "is empty");
  const std::string path = find_tokenizer_file(spec);
  if (path.empty()) {
    std::error_code ec;
    // A name that leads nowhere is a bad flag value (exit 2), like any other.
    if (fs::is_directory(spec, ec)) {
      throw core::Error(core::ErrorKind::kUsage, "--tokenizer",
                        "directory '" + spec + "' has no tokenizer.json or tokenizer.model");
    }
    const std::string cache = hf_hub_cache_dir();
    throw core::Error(
        core::ErrorKind::kUsage, "--tokenizer",
        "'" + spec + "' is not a file, a directory, or a model in the local Hugging " +
            "Face cache (" + (cache.empty() ? std::string("no cache directory") : cache) +
            "); servebench downloads nothing");
  }
  if (is_json_file(path)) return parse_hf_tokenizer_json(read_file(path), path, spec);
  return load_sentencepiece_model(path, spec);
}

}  // namespace servebench::tokenizer
