// Writes tests/tokenizer/expected/<name>.json: what Hugging Face's own tokenizers library (the
// Rust implementation, through its npm Node binding `tokenizers`) returns for every entry of
// corpus.json and for a fixed set of id runs, for each tokenizer fetched by
// scripts/fetch-tokenizers.sh. Run it through scripts/gen-tokenizer-expectations.sh, which
// installs the reference into build-deps/ (never committed). The C++ exactness test compares
// servebench's tokenizers with these files.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const nodeDir = process.env.SERVEBENCH_NODE_DIR || path.join(repo, 'build-deps/node');
const tokenizerDir = process.env.SERVEBENCH_TOKENIZER_DIR || path.join(repo, 'build-deps/tokenizers');
const require = createRequire(path.join(nodeDir, 'package.json'));
const { Tokenizer } = require('tokenizers');
const referenceVersion = require('tokenizers/package.json').version;
const packages = JSON.parse(fs.readFileSync(path.join(tokenizerDir, 'packages.json'), 'utf8'));
const corpus = JSON.parse(fs.readFileSync(path.join(here, 'corpus.json'), 'utf8'));

// Runs of consecutive ids, as the random dataset decodes them, starting at fixed places.
function idRuns(vocabSize, withAdded) {
  const starts = [0, 1, 250, 1000, 5000, Math.floor(vocabSize / 2), vocabSize - 40, withAdded - 30];
  return starts.map((s) => Array.from({ length: 64 }, (_, k) => s + k).filter((id) => id < withAdded));
}

for (const [name, pkg] of Object.entries(packages)) {
  const file = path.join(tokenizerDir, name, 'tokenizer.json');
  const tok = Tokenizer.fromFile(file);
  const vocabSize = tok.getVocabSize(false);
  const withAdded = tok.getVocabSize(true);
  const encode = async (text) => (await tok.encode(text, null, { addSpecialTokens: false })).getIds();
  const out = {
    tokenizer: name,
    package: pkg,
    file_bytes: fs.statSync(file).size,
    reference: `tokenizers@${referenceVersion} (npm; Hugging Face's Rust tokenizers, Node binding)`,
    vocab_size: vocabSize,
    vocab_size_with_added: withAdded,
    encode: [],
    decode: [],
    token_text: [],
  };
  for (const text of corpus) out.encode.push(await encode(text));
  for (const ids of out.encode) out.decode.push({ ids, text: await tok.decode(ids, false) });
  for (const ids of idRuns(vocabSize, withAdded)) {
    const text = await tok.decode(ids, false);
    out.decode.push({ ids, text, reencoded: await encode(text) });
  }
  const singles = [0, 1, 2, 3, 13, 100, 200, 255, 256, 300, 1000, 10000, vocabSize - 1, vocabSize,
    withAdded - 1];
  for (const id of singles) out.token_text.push({ id, text: await tok.decode([id], false) });
  const dest = path.join(here, 'expected', `${name}.json`);
  fs.writeFileSync(dest, JSON.stringify(out) + '\n');
  console.log(`${dest}: ${corpus.length} texts, vocab ${vocabSize} (+${withAdded - vocabSize} added)`);
}
