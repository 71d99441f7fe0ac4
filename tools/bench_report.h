// How `lowbit bench` writes its results (-o, as llama-bench's): a markdown
// table for people (md, the default), or records for scripts that compare
// runs: json (one array at the end), jsonl (a record per line as each test
// ends) or csv (a header line, then a line per record). With the records,
// stdout holds nothing else; the machine and probe lines go to stderr.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit::tools {

enum class BenchFormat { Markdown, Json, Jsonl, Csv };
// "md", "json", "jsonl" or "csv"; anything else fails naming the option.
BenchFormat parse_bench_format(const std::string& name);

// The machine and run every record shares.
struct BenchMachine {
  std::string command_line;  // "lowbit bench -t 2 -p 0 -n 64 -r 3"
  std::string cpu;           // model name
  std::string features;      // cpu_features().describe()
  int hardware_threads = 0;
  std::string date;          // "2026-11-28 08:29", local time (gemv_timing.h local_date_time)
};

// One stage of the forward pass (--profile).
struct BenchStage {
  std::string name;
  double ms_per_token = 0, share = 0;  // share of the test's time, 0..1
  bool reads_weights = false;          // a matmul stage: the two below are set
  double weight_gbps = 0, read_share = 0;  // read_share: of the probe's bandwidth, 0..1
};

// One (model, kernel, threads, test) row.
struct BenchRecord {
  std::string model, model_path;
  int64_t model_bytes = 0;
  std::string kernel;        // as --kernel named it: "auto"
  std::string kernels_used;  // what the layers and the head ran on: "auto: tl2v/avx512-vbmi-vnni + f16/avx512"
  int threads = 0;
  std::string test;  // "tg64", "pp128", "tg64 x4", "tg64 @ d1024"
  int64_t n_prompt = 0, n_gen = 0, depth = 0;
  int sequences = 1;
  std::vector<double> samples_tok_s;  // one per timed run
  double tok_s_mean = 0, tok_s_stddev = 0;
  int64_t weight_bytes_per_token = 0;
  double roofline_tok_s = 0;  // at the mean of the two probes
  double bandwidth_before_gbps = 0, bandwidth_after_gbps = 0;
  int64_t peak_rss_bytes = 0;
  bool interleaved = false;  // --interleave: the three below are set
  double vs_first_median = 0, vs_first_q1 = 0, vs_first_q3 = 0;
  std::vector<BenchStage> profile;  // --profile
};

class BenchReport {
 public:
  BenchReport(BenchFormat format, BenchMachine machine, bool interleave);
  // The probe's read bandwidth per thread count, measured before anything loaded.
  void begin(const std::vector<int>& threads, const std::vector<double>& bandwidth_gbps);
  void add(const BenchRecord& r);
  void finish();

 private:
  void markdown_row(const BenchRecord& r);
  std::string profile_table(const BenchRecord& r) const;

  BenchFormat format_;
  BenchMachine machine_;
  bool interleave_;
  std::vector<BenchRecord> records_;  // json: printed at the end
  std::string profiles_;              // md: --profile tables, after the main table
};

}  // namespace lowbit::tools
