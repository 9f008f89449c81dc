// Several targets as flags (target_flags.h).
#include "cli/target_flags.h"

#include "run/names.h"

namespace servebench::cli {
namespace {

std::string trimmed(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

// Items of a list given as "a,b" or as the flag repeated (joined with '\n').
std::vector<std::string> list_items(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t end = text.find_first_of(",\n", start);
    items.push_back(trimmed(text.substr(start, end == std::string::npos ? end : end - start)));
    if (end == std::string::npos) return items;
    start = end + 1;
  }
}

}  // namespace

std::vector<std::string> parse_base_urls(const std::string& text) {
  std::vector<std::string> urls;
  for (std::string url : list_items(text)) {
    if (url.empty())
      usage("--base-url", "empty URL in the list '" + run::url_for_messages(text) + "'");
    while (!url.empty() && url.back() == '/') url.pop_back();
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
      usage("--base-url",
            "must start with http:// or https://, got '" + run::url_for_messages(url) + "'");
    }
    urls.push_back(url);
  }
  return urls;
}

void apply_target_flags(const std::string& sim_instances, const Given& given, run::Spec& c) {
  c.sim_instances = static_cast<int>(parse_int("--sim-instances", sim_instances, 1, 64));
  if (given("--sim-instances") && !c.embedded) {
    usage("--sim-instances",
          "starts embedded simulators; for servers of your own give several --base-url instead");
  }
  const size_t targets =
      c.embedded ? static_cast<size_t>(c.sim_instances) : std::max<size_t>(1, c.target_urls.size());
  if (targets < 2) {
    if (c.model.find('\n') != std::string::npos)  // the flag repeated (CLI11 joins them)
      usage("--model", "given more than once, but there is one target");
    return;
  }
  if (c.model.find_first_of(",\n") != std::string::npos) {
    c.target_models = list_items(c.model);
    for (const std::string& m : c.target_models)
      if (m.empty()) usage("--model", "empty model name in the list '" + c.model + "'");
    if (c.target_models.size() != targets) {
      usage("--model", std::to_string(c.target_models.size()) + " model names for " +
                           std::to_string(targets) + " targets; give one for all or one each");
    }
    c.model = c.target_models.front();
  }
  if (c.http_engine == client::HttpEngine::kHttp1) {
    for (const std::string& url : c.target_urls) {
      if (url.rfind("http://", 0) != 0)
        usage("--http-engine", "http1 serves plain http:// only, not '" +
                                   run::url_for_messages(url) + "'; use curl (or auto) for https");
    }
  }
  const char* const kOneValue =
      "a list runs one benchmark per value, which several targets do not support; give one value";
  if (c.request_rates.size() > 1) usage("--request-rate", kOneValue);
  if (c.max_concurrencies.size() > 1) usage("--max-concurrency", kOneValue);
  if (c.limits.profile != run::LoadProfile::kNone) {
    usage("--profile",
          "runs one benchmark per strategy or rate, which several targets do not "
          "support; use --request-rate and --max-concurrency");
  }
}

}  // namespace servebench::cli
