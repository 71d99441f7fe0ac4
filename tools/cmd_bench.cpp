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
#include <fstream>
#include <sstream>
#include <thread>

#include "bench_report.h"
#include "command.h"
#include "gemv_timing.h"
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
  BenchFormat format = BenchFormat::Markdown;  // -o
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
std::vector<BenchStage> profile_stages(const DecodeProfile& p, double bandwidth_gbps) {
  double total = 0;
  for (double s : p.seconds) total += s;
  const double per_token = 1e3 / static_cast<double>(std::max<int64_t>(1, p.tokens));
  std::vector<BenchStage> stages;
  for (int i = 0; i < DecodeProfile::kStages; ++i) {
    BenchStage st;
    st.name = DecodeProfile::stage_name(i);
    st.ms_per_token = p.seconds[i] * per_token;
    st.share = total > 0 ? p.seconds[i] / total : 0;
    st.reads_weights = p.weight_bytes[i] > 0;
    st.weight_gbps = p.seconds[i] > 0 ? static_cast<double>(p.weight_bytes[i]) / p.seconds[i] / 1e9 : 0;
    st.read_share = st.weight_gbps / bandwidth_gbps;
    stages.push_back(st);
  }
  return stages;
}

// A loaded model as a bench row names it.
struct Loaded {
  std::string path, name;
  std::string kernel;        // as --kernel named it
  std::string kernels_used;  // "auto: i2s/avx512-vnni + f16/avx512": what the layers and the head ran on
  int64_t weight_bytes = 0;  // per pass
  std::unique_ptr<Model> model;
};

Loaded load(const std::string& path, const std::string& kernel, int64_t ctx, bool verbose, ThreadPool& pool) {
  Loaded m;
  m.path = path;
  m.kernel = kernel;
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

// A test's record: its runs' tok/s, the roofline at the mean of the probes
// before and after it, and the peak RSS so far.
BenchRecord make_record(const BenchOptions& o, const Loaded& m, int threads, bool prompt,
                        int sequences, const std::vector<double>& speeds, double before, double after,
                        int64_t peak_rss) {
  BenchRecord r;
  r.model = m.name;
  r.model_path = m.path;
  r.model_bytes = file_size(m.path);
  r.kernel = m.kernel;
  r.kernels_used = m.kernels_used;
  r.threads = threads;
  r.test = test_name(o, prompt, sequences);
  r.n_prompt = prompt ? o.n_prompt : 0;
  r.n_gen = prompt ? 0 : o.n_gen;
  r.depth = o.depth;
  r.sequences = sequences;
  r.samples_tok_s = speeds;
  const Stats s = stats(speeds);
  r.tok_s_mean = s.mean;
  r.tok_s_stddev = s.stddev;
  r.weight_bytes_per_token = m.weight_bytes;
  r.roofline_tok_s = roofline_tok_s(o, m, prompt, sequences, (before + after) / 2);
  r.bandwidth_before_gbps = before;
  r.bandwidth_after_gbps = after;
  r.peak_rss_bytes = peak_rss;
  return r;
}

// --interleave: every (model, kernel) loaded at once; each test's runs taken in
// rounds, one run of each in a shuffled order per round, so that a host whose
// speed moves within minutes moves them all alike; each row also gives the
// median, over the rounds, of its run's tok/s over the first one's in the same
// round (with the quartiles).
void bench_interleaved(const BenchOptions& o, const std::vector<std::string>& models, const std::vector<int>& threads,
                       const std::vector<double>& bandwidth, int64_t ctx, int max_parallel, ThreadPool& load_pool,
                       BenchReport& report) {
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
      for (size_t i = 0; i < ms.size(); ++i) {
        std::vector<double> ratio;
        for (int r = 0; r < o.repetitions; ++r) ratio.push_back(speeds[i][static_cast<size_t>(r)] / speeds[0][static_cast<size_t>(r)]);
        std::sort(ratio.begin(), ratio.end());
        const auto at = [&](double q) { return ratio[static_cast<size_t>(q * static_cast<double>(ratio.size() - 1) + 0.5)]; };
        BenchRecord r = make_record(o, ms[i], threads[ti], prompt, sequences, speeds[i], before, after, peak_rss);
        r.interleaved = true;
        r.vs_first_median = at(0.5);
        r.vs_first_q1 = at(0.25);
        r.vs_first_q3 = at(0.75);
        report.add(r);
      }
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
  if (o.profile && o.format == BenchFormat::Csv)
    fail("bench: --profile's stages do not fit a CSV line; use -o md, json or jsonl");

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

  BenchReport report(o.format, {o.command_line, cpu_model_name(), cpu_features().describe(), hw, local_date_time()},
                     o.interleave);
  report.begin(threads, bandwidth);

  const int64_t ctx = o.depth + o.n_prompt + o.n_gen + 1;
  if (o.interleave) {
    bench_interleaved(o, models, threads, bandwidth, ctx, max_parallel, load_pool, report);
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
            BenchRecord r = make_record(o, m, threads[ti], prompt, sequences, speeds, before, after, peak_rss);
            if (o.profile) r.profile = profile_stages(profile, (before + after) / 2);
            report.add(r);
            before = after;
          }
        }
      }
    }
  }
  report.finish();
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
  auto format = std::make_shared<std::string>("md");
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
  app.add_option("-o,--output", *format,
                 "output format: md (a markdown table, the default), json (an array of records), jsonl (a record per "
                 "line, as each test ends) or csv; with records, stdout holds nothing else");
  return [o, threads, parallel, format] {
    o->format = parse_bench_format(*format);
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
    if (*format != "md") o->command_line += " -o " + *format;
    return bench(*o);
  };
}

const CommandRegistration bench_command{"bench", "measure prompt and generation speed (tok/s, roofline share, peak RSS)",
                              setup_bench};

}  // namespace
}  // namespace lowbit::tools
