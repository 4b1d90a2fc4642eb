// Reference vectors from llama.cpp for one model: a seeded random prompt,
// llama.cpp's logits at eight of its positions, and its greedy continuation.
// Built and run by make_vectors.sh against a llama.cpp build (never by
// CMake: CI has no llama.cpp); the files it writes are what
// tests/engine/sched/families_test.cpp holds kvgate to.
//
//   llama_reference MODEL PROMPT_LEN PROMPT_SEED STEPS > vectors.txt
//
// The arithmetic is pinned to what kvgate's test compares against: f32 K/V
// cache, no flash attention, the whole prompt in one batch.
#include <llama.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// splitmix64: the prompt's ids, reproducible from the seed alone.
uint64_t next(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int fail(const char* what) {
  std::fprintf(stderr, "llama_reference: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) return fail("usage: llama_reference MODEL PROMPT_LEN PROMPT_SEED STEPS");
  const int n_prompt = std::atoi(argv[2]);
  uint64_t seed = std::strtoull(argv[3], nullptr, 10);
  const int steps = std::atoi(argv[4]);
  if (n_prompt < 4 || steps < 1) return fail("PROMPT_LEN must be >= 4 and STEPS >= 1");

  llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return fail("llama.cpp cannot load the model");
  const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

  llama_context_params cp = llama_context_default_params();
  // The model's whole context, as kvgate serves it: LongRoPE (phi3) picks
  // its factor set by the context size.
  cp.n_ctx = static_cast<uint32_t>(std::max(n_prompt + steps + 16, llama_model_n_ctx_train(model)));
  cp.n_batch = cp.n_ubatch = static_cast<uint32_t>(n_prompt);
  cp.n_threads = cp.n_threads_batch = 2;
  cp.type_k = cp.type_v = GGML_TYPE_F32;
  cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.no_perf = true;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return fail("llama.cpp cannot make a context");

  std::vector<llama_token> prompt(static_cast<size_t>(n_prompt));
  for (llama_token& t : prompt) t = static_cast<llama_token>(3 + next(seed) % static_cast<uint64_t>(vocab - 3));
  // Eight positions from the first to the last, so that a batch of eight
  // prefixes of different lengths can be checked in one step.
  int checked[8];
  for (int k = 0; k < 8; ++k) checked[k] = k * (n_prompt - 1) / 7;

  llama_batch batch = llama_batch_init(n_prompt, 0, 1);
  for (int i = 0; i < n_prompt; ++i) {
    batch.token[i] = prompt[static_cast<size_t>(i)];
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = std::find(std::begin(checked), std::end(checked), i) != std::end(checked);
  }
  batch.n_tokens = n_prompt;
  if (llama_decode(ctx, batch) != 0) return fail("llama_decode failed on the prompt");

  std::printf("prompt %d", n_prompt);
  for (llama_token t : prompt) std::printf(" %d", t);
  std::printf("\n");
  for (int pos : checked) {
    const float* l = llama_get_logits_ith(ctx, pos);
    std::printf("logits %d %d", pos, vocab);
    for (int v = 0; v < vocab; ++v) std::printf(" %.8g", l[v]);  // f32 to 1e-7 relative: finer than the tests' tolerance
    std::printf("\n");
  }

  std::vector<llama_token> out;
  const float* last = llama_get_logits_ith(ctx, n_prompt - 1);
  for (int s = 0; s < steps; ++s) {
    const llama_token next_token = static_cast<llama_token>(std::max_element(last, last + vocab) - last);
    out.push_back(next_token);
    if (s + 1 == steps) break;
    llama_token tok = next_token;
    llama_batch one = llama_batch_get_one(&tok, 1);
    if (llama_decode(ctx, one) != 0) return fail("llama_decode failed on a generated token");
    last = llama_get_logits_ith(ctx, -1);
  }
  std::printf("greedy %d", steps);
  for (llama_token t : out) std::printf(" %d", t);
  std::printf("\n");

  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
