// `lowbit bench`: whole-model speed, one row per (model, kernel, threads, test)
// like llama-bench: prompt processing (ppN: N tokens in one pass) and text
// generation (tgN: N tokens one at a time; with --parallel P > 1, "tgN xP":
// P sequences generating together, a token of each per pass over the weights,
// as a server batches concurrent requests), tok/s as mean +- stddev over -r
// runs after a warm-up, with the weight bytes read per token, the share of the
// read-bandwidth roofline (probed just before and just after each test), and
// the peak RSS. --interleave alternates several (model, kernel) pairs round by
// round in one process and adds each row's tok/s relative to the first's.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "command.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"
#include "kernels/dispatch.h"
#include "kernels/read_bandwidth.h"
#include "model/decoder.h"
#include "model_options.h"

namespace lowbit::tools {
namespace {

struct BenchOptions {
  std::vector<std::string> models;      // empty: the cached bitnet-2b4t dummy
  std::vector<int> threads;             // empty: 1 and all hardware threads
  std::vector<std::string> kernels = {"auto"};
  std::vector<int> parallel = {1};      // sequences generating together in tg tests
  int64_t n_prompt = 128;
  int64_t n_gen = 64;
  int64_t depth = 0;  // context tokens already in the KV cache when each test starts
  int repetitions = 3;
  bool verbose = false;
  bool profile = false;
  bool interleave = false;  // all (model, kernel) pairs loaded at once, runs alternated
  std::string command_line;
};

// The process's peak resident set (VmHWM), in bytes; reset_peak_rss() starts a new peak.
int64_t peak_rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return 0;
}

void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }


int64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

struct Stats {
  double mean = 0, stddev = 0;
};

Stats stats(const std::vector<double>& v) {
  Stats s;
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.stddev += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(s.stddev / static_cast<double>(v.size() - 1)) : 0;
  return s;
}

// tok/s of one run of `test` after the first `depth` positions (already in the
// KV cache) of the context. A tg test with sequences > 1 evaluates a token of
// each of them per pass (rows: scratch); tok/s counts all of them.
double run_once(Decoder& d, int64_t depth, const std::vector<int32_t>& tokens, bool prompt,
                std::vector<float>& logits, int sequences, std::vector<BatchRow>& rows) {
  for (int s = 0; s < sequences; ++s) d.truncate(depth, s);
  const double t0 = now_seconds();
  if (prompt) {
    d.eval(tokens.data(), static_cast<int64_t>(tokens.size()), logits.data());
  } else if (sequences == 1) {
    for (const int32_t t : tokens) d.eval(&t, 1, logits.data());
  } else {
    for (size_t i = 0; i < tokens.size(); ++i) {
      rows.clear();
      for (int s = 0; s < sequences; ++s)
        rows.push_back({tokens[(i + static_cast<size_t>(s) * 7) % tokens.size()], s, true});
      d.eval_rows(rows.data(), sequences, logits.data());
    }
  }
  return static_cast<double>(tokens.size()) * (prompt ? 1 : sequences) / (now_seconds() - t0);
}

// Where the time of a test's timed runs went, per stage of the forward pass.
std::string profile_table(const std::string& title, const DecodeProfile& p, double bandwidth_gbps) {
  double total = 0;
  for (double s : p.seconds) total += s;
  std::string out = cat("\n", title, "\n\n| stage | ms/token | share | weights GB/s | % of read BW |\n",
                        "|---|---:|---:|---:|---:|\n");
  const double per_token = 1e3 / static_cast<double>(std::max<int64_t>(1, p.tokens));
  for (int i = 0; i < DecodeProfile::kStages; ++i) {
    char row[256];
    const double gbps = p.seconds[i] > 0 ? static_cast<double>(p.weight_bytes[i]) / p.seconds[i] / 1e9 : 0;
    if (p.weight_bytes[i] > 0) {
      std::snprintf(row, sizeof row, "| %s | %.3f | %.1f%% | %.1f | %.0f%% |\n", DecodeProfile::stage_name(i),
                    p.seconds[i] * per_token, 100 * p.seconds[i] / total, gbps, 100 * gbps / bandwidth_gbps);
    } else {
      std::snprintf(row, sizeof row, "| %s | %.3f | %.1f%% | | |\n", DecodeProfile::stage_name(i),
                    p.seconds[i] * per_token, 100 * p.seconds[i] / total);
    }
    out += row;
  }
  return out;
}

std::string gb(int64_t bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3f GB", static_cast<double>(bytes) / 1e9);
  return s;
}

// A loaded model as a bench row names it.
struct Loaded {
  std::string path, name;
  std::string kernels_used;  // "auto: i2s/avx512-vnni + f16/avx512": what the layers and the head ran on
  int64_t weight_bytes = 0;  // per pass
  std::unique_ptr<Model> model;
};

Loaded load(const std::string& path, const std::string& kernel, int64_t ctx, bool verbose, ThreadPool& pool) {
  Loaded m;
  m.path = path;
  m.name = path.substr(path.find_last_of('/') + 1);
  LoadOptions lo;
  lo.kernel = kernel;
  lo.n_ctx = ctx;
  lo.verbose = verbose;
  const double t_load = now_seconds();
  m.model = Model::load(path, lo, pool);
  std::fprintf(stderr, "lowbit: bench: loaded %s (--kernel %s) in %.1f s\n", path.c_str(), kernel.c_str(),
               now_seconds() - t_load);
  const std::string layer_kernel = m.model->layers().front().wq.matmul->kernel_name();
  const std::string head_kernel = m.model->output().matmul->kernel_name();
  m.kernels_used = cat(kernel, ": ", layer_kernel, layer_kernel == head_kernel ? "" : " + " + head_kernel);
  m.weight_bytes = m.model->weight_bytes_per_token();
  return m;
}

// Most rows a bench Decoder evaluates in one pass: a prompt, a pass of every
// sequence, or a chunk of the -d context.
int64_t bench_batch(const BenchOptions& o, int max_parallel) {
  return std::max<int64_t>({max_parallel, o.n_prompt, std::min<int64_t>(o.depth, 512)});
}

// (prompt?, sequences) per test: pp once, then tg for each --parallel.
std::vector<std::pair<bool, int>> bench_tests(const BenchOptions& o) {
  std::vector<std::pair<bool, int>> tests;
  if (o.n_prompt > 0) tests.emplace_back(true, 1);
  if (o.n_gen > 0)
    for (int p : o.parallel) tests.emplace_back(false, p);
  return tests;
}

// "tg64", "tg64 x4" or, with -d, "tg64 @ d1024" as llama-bench writes it.
std::string test_name(const BenchOptions& o, bool prompt, int sequences) {
  return cat(prompt ? "pp" : "tg", prompt ? o.n_prompt : o.n_gen, sequences > 1 ? cat(" x", sequences) : "",
             o.depth > 0 ? cat(" @ d", o.depth) : "");
}

// The roofline in tok/s at bw GB/s. Decode streams every weight byte once per
// pass, and each sequence's f16 KV cache of the positions so far (on average
// depth + (n + 1) / 2 of them); a prompt pass reads the weights once per n
// tokens (its cache reads are small beside its arithmetic).
double roofline_tok_s(const BenchOptions& o, const Loaded& m, bool prompt, int sequences, double bw) {
  const ModelConfig& c = m.model->config();
  const int64_t n = prompt ? o.n_prompt : o.n_gen;
  const double kv_bytes = prompt ? 0.0
                                 : 2.0 * 2.0 * static_cast<double>(c.n_layer * c.kv_dim()) *
                                       (static_cast<double>(o.depth) + (static_cast<double>(n) + 1) / 2);
  return bw * 1e9 / (static_cast<double>(m.weight_bytes) + kv_bytes * sequences) *
         static_cast<double>(prompt ? n : sequences);
}

// The context every run starts from (-d), evaluated once per sequence, untimed.
void fill_context(Decoder& d, const BenchOptions& o, int sequences, const std::vector<int32_t>& context,
                  std::vector<float>& logits, std::vector<BatchRow>& rows) {
  const int64_t batch = d.max_batch();
  for (int s = 0; s < sequences; ++s)
    for (int64_t done = 0; done < o.depth; done += batch) {
      rows.clear();
      for (int64_t i = done; i < std::min(o.depth, done + batch); ++i) rows.push_back({context[static_cast<size_t>(i)], s, false});
      d.eval_rows(rows.data(), static_cast<int64_t>(rows.size()), logits.data());
    }
}

// n random token ids below vocab.
std::vector<int32_t> random_tokens(Rng& rng, int64_t n, int64_t vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& v : t) v = static_cast<int32_t>(rng.below(static_cast<uint64_t>(vocab)));
  return t;
}

// A test's warm-up: pages of weights read in place come in, caches and the pool settle.
void warm_up(Decoder& d, const BenchOptions& o, const std::vector<int32_t>& tokens, bool prompt,
             std::vector<float>& logits, int sequences, std::vector<BatchRow>& rows) {
  run_once(d, o.depth, prompt ? tokens : std::vector<int32_t>(tokens.begin(), tokens.begin() + std::min<size_t>(tokens.size(), 4)),
           prompt, logits, sequences, rows);
}

// The read bandwidth again, right after a test: on a shared host it moves
// within minutes (session 38's 2-thread probe read 41-80 GB/s), so the
// roofline takes the mean of the probes on either side and the row shows both.
// The probe's buffer is not the models': the peak RSS is taken before it (into
// peak_rss) and the high-water mark reset after.
double probe_after(ThreadPool& pool, int threads, int64_t* peak_rss) {
  *peak_rss = std::max(*peak_rss, peak_rss_bytes());
  const double after = measure_read_bandwidth_gbps(pool, threads, size_t{512} << 20);
  reset_peak_rss();
  return after;
}

// The table row up to the roofline cell (the caller adds the rest).
void print_row(const Loaded& m, int threads, const std::string& test, const Stats& s, double roofline, double before,
               double after) {
  std::printf("| %s | %s | %s | %d | %s | %.2f ± %.2f | %s | %.0f%% of %.0f GB/s (%.0f before, %.0f after) |", m.name.c_str(),
              gb(file_size(m.path)).c_str(), m.kernels_used.c_str(), threads, test.c_str(), s.mean, s.stddev,
              gb(m.weight_bytes).c_str(), 100.0 * s.mean / roofline, (before + after) / 2, before, after);
}

// --interleave: every (model, kernel) loaded at once; each test's runs taken in
// rounds, one run of each in a shuffled order per round, so that a host whose
// speed moves within minutes moves them all alike; each row also gives the
// median, over the rounds, of its run's tok/s over the first one's in the same
// round (with the quartiles).
void bench_interleaved(const BenchOptions& o, const std::vector<std::string>& models, const std::vector<int>& threads,
                       const std::vector<double>& bandwidth, int64_t ctx, int max_parallel, ThreadPool& load_pool) {
  std::vector<Loaded> ms;
  reset_peak_rss();
  for (const std::string& path : models)
    for (const std::string& kernel : o.kernels) ms.push_back(load(path, kernel, ctx, o.verbose, load_pool));
  // Tokens every model has; logits room for the largest vocabulary.
  int64_t vocab = ms.front().model->config().n_vocab, max_vocab = vocab;
  for (const Loaded& m : ms) {
    vocab = std::min(vocab, m.model->config().n_vocab);
    max_vocab = std::max(max_vocab, m.model->config().n_vocab);
  }
  int64_t peak_rss = 0;
  Rng rng(42);
  std::vector<float> logits(static_cast<size_t>(max_vocab * max_parallel));
  std::vector<BatchRow> rows;
  const int64_t max_batch = bench_batch(o, max_parallel);
  for (size_t ti = 0; ti < threads.size(); ++ti) {
    ThreadPool pool(threads[ti]);
    double before = bandwidth[ti];
    std::vector<std::unique_ptr<Decoder>> decoders;
    for (const Loaded& m : ms)
      decoders.push_back(std::make_unique<Decoder>(*m.model, pool, max_batch, KvCacheType::F16, max_parallel));
    if (o.depth > 0) {
      const std::vector<int32_t> context = random_tokens(rng, o.depth, vocab);
      for (auto& d : decoders) fill_context(*d, o, max_parallel, context, logits, rows);
    }
    for (const auto& [prompt, sequences] : bench_tests(o)) {
      const std::vector<int32_t> tokens = random_tokens(rng, prompt ? o.n_prompt : o.n_gen, vocab);
      for (auto& d : decoders) warm_up(*d, o, tokens, prompt, logits, sequences, rows);
      std::vector<std::vector<double>> speeds(ms.size());
      std::vector<size_t> order(ms.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      for (int r = 0; r < o.repetitions; ++r) {
        for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);  // Fisher-Yates
        for (size_t i : order) speeds[i].push_back(run_once(*decoders[i], o.depth, tokens, prompt, logits, sequences, rows));
      }
      const double after = probe_after(pool, threads[ti], &peak_rss);
      const std::string test = test_name(o, prompt, sequences);
      for (size_t i = 0; i < ms.size(); ++i) {
        std::vector<double> ratio;
        for (int r = 0; r < o.repetitions; ++r) ratio.push_back(speeds[i][static_cast<size_t>(r)] / speeds[0][static_cast<size_t>(r)]);
        std::sort(ratio.begin(), ratio.end());
        const auto at = [&](double q) { return ratio[static_cast<size_t>(q * static_cast<double>(ratio.size() - 1) + 0.5)]; };
        print_row(ms[i], threads[ti], test, stats(speeds[i]),
                  roofline_tok_s(o, ms[i], prompt, sequences, (before + after) / 2), before, after);
        std::printf(" %s | %.3f (%.3f-%.3f) |\n", gb(peak_rss).c_str(), at(0.5), at(0.25), at(0.75));
      }
      std::fflush(stdout);
      before = after;
    }
  }
}

int bench(const BenchOptions& o) {
  std::vector<int> threads = o.threads;
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (threads.empty()) threads = hw > 1 ? std::vector<int>{1, hw} : std::vector<int>{1};
  for (int t : threads)
    if (t < 1 || t > 1024) fail("bench: -t ", t, " is not a thread count in 1..1024");
  if (o.n_prompt < 0 || o.n_gen < 0 || o.n_prompt + o.n_gen == 0 || o.repetitions < 1 || o.depth < 0)
    fail("bench: need -p >= 0, -n >= 0 (not both 0), -d >= 0 and -r >= 1");
  for (int p : o.parallel)
    if (p < 1 || p > 256) fail("bench: --parallel ", p, " is not a sequence count in 1..256");
  const int max_parallel = *std::max_element(o.parallel.begin(), o.parallel.end());
  const int max_threads = *std::max_element(threads.begin(), threads.end());
  ThreadPool load_pool(max_threads);

  std::vector<std::string> models = o.models;
  if (models.empty()) models.push_back(ensure_default_model(load_pool));
  if (o.interleave && models.size() * o.kernels.size() < 2)
    fail("bench: --interleave compares two or more (model, kernel) pairs: give several -m or --kernel values");
  if (o.interleave && o.profile) fail("bench: --profile times one model at a time; leave out --interleave");

  // Read bandwidth per thread count, measured again before each model so the
  // roofline reflects the machine as the rows were taken. Its buffer is freed
  // before the model loads, and the peak RSS is reset after it.
  auto measure_bandwidth = [&] {
    std::vector<double> gbps;
    for (int t : threads) {
      ThreadPool pool(t);
      gbps.push_back(measure_read_bandwidth_gbps(pool, t, size_t{512} << 20));
    }
    return gbps;
  };
  std::vector<double> bandwidth = measure_bandwidth();

  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::localtime(&now));
  std::printf("lowbit bench: `%s`\n", o.command_line.c_str());
  std::printf("machine: %s, %d hardware threads (%s); %s\n", cpu_model_name().c_str(), hw, cpu_features().describe().c_str(),
              date);
  for (size_t i = 0; i < threads.size(); ++i)
    std::printf("read bandwidth, %d thread%s: %.1f GB/s\n", threads[i], threads[i] > 1 ? "s" : "", bandwidth[i]);
  std::printf("\n| model | size | kernel | threads | test | tok/s | weights/token | roofline | peak RSS |%s\n",
              o.interleave ? " vs first |" : "");
  std::printf("|---|---:|---|---:|---|---:|---:|---:|---:|%s\n", o.interleave ? "---:|" : "");
  std::fflush(stdout);

  std::string profiles;  // --profile tables, printed after the main table
  const int64_t ctx = o.depth + o.n_prompt + o.n_gen + 1;
  if (o.interleave) {
    bench_interleaved(o, models, threads, bandwidth, ctx, max_parallel, load_pool);
  } else {
    for (const std::string& path : models) {
      for (const std::string& kernel : o.kernels) {
        if (&path != &models.front() || &kernel != &o.kernels.front()) bandwidth = measure_bandwidth();
        reset_peak_rss();
        int64_t peak_rss = 0;  // the model's, kept across the probes that follow its tests
        const Loaded m = load(path, kernel, ctx, o.verbose, load_pool);
        std::vector<float> logits(static_cast<size_t>(m.model->config().n_vocab * max_parallel));
        std::vector<BatchRow> rows;
        Rng rng(42);
        const int64_t max_batch = bench_batch(o, max_parallel);
        for (size_t ti = 0; ti < threads.size(); ++ti) {
          ThreadPool pool(threads[ti]);
          double before = bandwidth[ti];  // the probe nearest before the next test
          Decoder decoder(*m.model, pool, max_batch, KvCacheType::F16, max_parallel);
          if (o.depth > 0)
            fill_context(decoder, o, max_parallel, random_tokens(rng, o.depth, m.model->config().n_vocab), logits, rows);
          for (const auto& [prompt, sequences] : bench_tests(o)) {
            const std::vector<int32_t> tokens = random_tokens(rng, prompt ? o.n_prompt : o.n_gen, m.model->config().n_vocab);
            warm_up(decoder, o, tokens, prompt, logits, sequences, rows);
            std::vector<double> speeds;
            DecodeProfile profile;
            if (o.profile) decoder.set_profile(&profile);
            for (int r = 0; r < o.repetitions; ++r)
              speeds.push_back(run_once(decoder, o.depth, tokens, prompt, logits, sequences, rows));
            decoder.set_profile(nullptr);
            const double after = probe_after(pool, threads[ti], &peak_rss);
            const double bw = (before + after) / 2;
            const std::string test = test_name(o, prompt, sequences);
            print_row(m, threads[ti], test, stats(speeds), roofline_tok_s(o, m, prompt, sequences, bw), before, after);
            std::printf(" %s |\n", gb(peak_rss).c_str());
            std::fflush(stdout);
            if (o.profile)
              profiles += profile_table(cat("profile: ", m.name, ", ", m.kernels_used, ", ", threads[ti], " thread",
                                            threads[ti] > 1 ? "s, " : ", ", test),
                                        profile, bw);
            before = after;
          }
        }
      }
    }
  }
  std::printf("%s", profiles.c_str());
  std::printf(
      "\nroofline: tok/s as a share of (read bandwidth / weight bytes per token) x tokens per weight pass,\n"
      "with the read bandwidth of that many threads the mean of two probes, one before the test (before\n"
      "the model loaded, for its first) and one right after it; tg tests also\n"
      "count the f16 KV cache each token reads (its average over the test, which -d makes large).\n"
      "tgN xP: P sequences generating together, P tokens per pass over the weights (tok/s counts them all).\n");
  if (o.interleave)
    std::printf(
        "--interleave: all models loaded at once (the peak RSS is theirs together); each test's runs in rounds,\n"
        "one run of each per round in a shuffled order; vs first: the median over the rounds of tok/s / the\n"
        "first row's tok/s in the same round (quartiles in brackets).\n");
  return 0;
}

std::vector<int> parse_ints(const std::string& list) {
  std::vector<int> v;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      v.push_back(std::stoi(item));
    } catch (const std::exception&) {
      fail("bench: '", item, "' in '", list, "' is not a number");
    }
  }
  return v;
}

CommandMain setup_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  auto threads = std::make_shared<std::string>();
  auto parallel = std::make_shared<std::string>();
  app.add_option("-m,--model", o->models, "model file(s) (default: the cached bitnet-2b4t dummy)");
  app.add_option("-t,--threads", *threads, "comma-separated thread counts (default: 1 and all hardware threads)");
  app.add_option("-p,--n-prompt", o->n_prompt, "prompt tokens per pp test (0: none)");
  app.add_option("-n,--n-gen", o->n_gen, "generated tokens per tg test (0: none)");
  app.add_option("-d,--depth", o->depth,
                 "context tokens already in the KV cache when each test starts (as llama-bench's -d; 0: none)");
  app.add_option("-r,--repetitions", o->repetitions, "timed runs per test");
  app.add_option("--parallel", *parallel,
                 "comma-separated counts of sequences generating together in tg tests (default 1), as a server "
                 "batches concurrent requests");
  app.add_option("--kernel", o->kernels, "matmul kernel(s): " + kernel_names())->delimiter(',');
  app.add_flag("-v,--verbose", o->verbose, "print the kernel chosen for each matrix");
  app.add_flag("--profile", o->profile, "also print where each test's time went, per stage of the forward pass");
  app.add_flag("--interleave", o->interleave,
               "load every (model, kernel) pair at once and alternate their runs round by round (shuffled), with each "
               "row's tok/s relative to the first's in the same rounds: comparisons a shared host's drift moves alike");
  return [o, threads, parallel] {
    if (!threads->empty()) o->threads = parse_ints(*threads);
    if (!parallel->empty()) o->parallel = parse_ints(*parallel);
    o->command_line = "lowbit bench";
    for (const auto& m : o->models) o->command_line += " -m " + m;
    if (!threads->empty()) o->command_line += " -t " + *threads;
    o->command_line += cat(" -p ", o->n_prompt, " -n ", o->n_gen, o->depth > 0 ? cat(" -d ", o->depth) : "", " -r ",
                           o->repetitions);
    std::string k;
    for (const auto& s : o->kernels) k += (k.empty() ? "" : ",") + s;
    if (k != "auto") o->command_line += " --kernel " + k;
    if (!parallel->empty()) o->command_line += " --parallel " + *parallel;
    if (o->profile) o->command_line += " --profile";
    if (o->interleave) o->command_line += " --interleave";
    return bench(*o);
  };
}

const CommandRegistration bench_command{"bench", "measure prompt and generation speed (tok/s, roofline share, peak RSS)",
                              setup_bench};

}  // namespace
}  // namespace lowbit::tools
