// SentencePiece .model files (Llama 2's and Mistral's original tokenizer.model), through
// libsentencepiece. Encoding adds no BOS/EOS; text such as "<s>" stays text, as in
// SentencePiece itself.
#include <sentencepiece_processor.h>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace servebench::tokenizer {
namespace {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  SentencePieceTokenizer(const std::string& path, std::string name) : name_(std::move(name)) {
    auto status = sp_.Load(path);
    if (!status.ok()) {
      throw core::Error(core::ErrorKind::kInput, path,
                        "is not a SentencePiece model: " + status.ToString());
    }
    if (sp_.GetPieceSize() <= 0) {
      throw core::Error(core::ErrorKind::kInput, path, "has an empty vocabulary (no pieces)");
    }
  }
  std::vector<TokenId> encode(std::string_view text) const override {
    std::vector<int> ids;
    (void)sp_.Encode(text, &ids);  // fails only without a model, which the constructor rules out
    return {ids.begin(), ids.end()};
  }
  std::string decode(std::span<const TokenId> ids) const override {
    // libsentencepiece rejects the whole call for one id out of range: drop those first, as
    // Hugging Face's decode drops unknown ids.
    std::vector<int> valid;
    valid.reserve(ids.size());
    for (TokenId id : ids)
      if (id >= 0 && id < sp_.GetPieceSize()) valid.push_back(id);
    std::string text;
    (void)sp_.Decode(valid, &text);
    return text;
  }
  std::string token_text(TokenId id) const override { return decode(std::span(&id, 1)); }
  int32_t vocab_size() const override { return sp_.GetPieceSize(); }
  std::string name() const override { return name_; }

 private:
  sentencepiece::SentencePieceProcessor sp_;
  std::string name_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_sentencepiece_model(const std::string& path,
                                                    const std::string& name) {
  return std::make_unique<SentencePieceTokenizer>(path, name);
}

}  // namespace servebench::tokenizer
