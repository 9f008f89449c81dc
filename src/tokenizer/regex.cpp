#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.h"

#include <pcre2.h>

#include "core/error.h"
#include "tokenizer/utf8.h"

namespace servebench::tokenizer::detail {

struct Regex::Impl {
  pcre2_code* code = nullptr;
  bool jit = false;
};

Regex::Regex(const std::string& pattern, const std::string& where)
    : impl_(std::make_unique<Impl>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                              PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &error, &offset, nullptr);
  if (!impl_->code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw core::Error(core::ErrorKind::kInput, where,
                      "regex does not compile at offset " + std::to_string(offset) + ": " +
                          reinterpret_cast<const char*>(message));
  }
  impl_->jit = pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() {
  if (impl_ && impl_->code) pcre2_code_free(impl_->code);
}

void Regex::find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const {
  // One match-data block per thread, big enough for the whole-match pair we read.
  thread_local std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create(1, nullptr), &pcre2_match_data_free);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start <= text.size()) {
    int rc = impl_->jit
                 ? pcre2_jit_match(impl_->code, subject, text.size(), start, 0, data.get(), nullptr)
                 : pcre2_match(impl_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK,
                               data.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof message);
      throw core::Error(core::ErrorKind::kInternal, "tokenizer regex",
                        reinterpret_cast<const char*>(message));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data.get());
    const size_t b = ov[0], e = ov[1];
    out.emplace_back(b, e);
    if (e > b) {
      start = e;
    } else if (b < text.size()) {
      start = b + utf8_char_length(static_cast<unsigned char>(text[b]));
    } else {
      return;
    }
  }
}

}  // namespace servebench::tokenizer::detail
